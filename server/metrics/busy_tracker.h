// BusyTracker: the time one device had work, as the union of its batches' busy
// intervals, so that batches overlapping on several streams count once.
#ifndef MATSERVE_SERVER_METRICS_BUSY_TRACKER_H_
#define MATSERVE_SERVER_METRICS_BUSY_TRACKER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>

namespace matserve::metrics {

// A worker reports a batch when it ends, with how long it kept the device
// busy, so the batch covered [end - busy, end]. The tracker keeps the union of
// the recent intervals (merged, sorted) and adds to the total only the part of
// each new interval that no earlier one covered.
//
// Memory is bounded: past `max_intervals` disjoint intervals the oldest is
// forgotten and everything before its end is taken as covered. A batch that
// started before that point (one that outlasted max_intervals separate busy
// periods of the device's other streams) is then undercounted by the idle gaps
// between them; the total never counts a moment twice, so rate() <= 1.
//
// Thread-safe; one mutex per device, taken once per batch (not per request).
class BusyTracker {
 public:
  explicit BusyTracker(size_t max_intervals = 64)
      : max_intervals_(max_intervals) {}

  // Records [end_ns - busy_ns, end_ns] (any monotonic clock, in nanoseconds)
  // and returns the nanoseconds it added to the total.
  uint64_t Add(int64_t end_ns, int64_t busy_ns);

  // Nanoseconds covered so far. Any thread, without the mutex.
  uint64_t TotalNanoseconds() const {
    return total_ns_.load(std::memory_order_relaxed);
  }

 private:
  struct Interval {
    int64_t begin;
    int64_t end;
  };

  const size_t max_intervals_;
  std::mutex mu_;
  std::deque<Interval> intervals_;        // guarded by mu_; disjoint, ascending
  int64_t forgotten_before_ = INT64_MIN;  // guarded by mu_
  std::atomic<uint64_t> total_ns_{0};
};

}  // namespace matserve::metrics

#endif  // MATSERVE_SERVER_METRICS_BUSY_TRACKER_H_
