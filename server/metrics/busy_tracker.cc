#include "server/metrics/busy_tracker.h"

#include <algorithm>

namespace matserve::metrics {

uint64_t BusyTracker::Add(int64_t end_ns, int64_t busy_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t begin = std::max(end_ns - busy_ns, forgotten_before_);
  if (end_ns <= begin) return 0;

  // The intervals that overlap or touch [begin, end_ns]: from the last one
  // ending before `begin` (searched from the back, where new batches land) to
  // the first one beginning after `end_ns`.
  size_t first = intervals_.size();
  while (first > 0 && intervals_[first - 1].end >= begin) --first;
  size_t last = first;
  int64_t already_covered = 0;
  Interval merged = {begin, end_ns};
  while (last < intervals_.size() && intervals_[last].begin <= end_ns) {
    const Interval& other = intervals_[last];
    already_covered += std::max<int64_t>(
        0, std::min(other.end, end_ns) - std::max(other.begin, begin));
    merged.begin = std::min(merged.begin, other.begin);
    merged.end = std::max(merged.end, other.end);
    ++last;
  }
  intervals_.erase(intervals_.begin() + first, intervals_.begin() + last);
  intervals_.insert(intervals_.begin() + first, merged);
  while (intervals_.size() > max_intervals_) {
    forgotten_before_ = intervals_.front().end;
    intervals_.pop_front();
  }

  const uint64_t added =
      static_cast<uint64_t>(end_ns - begin - already_covered);
  total_ns_.fetch_add(added, std::memory_order_relaxed);
  return added;
}

}  // namespace matserve::metrics
