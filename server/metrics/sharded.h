// Counters and histograms that many threads update without a shared lock or a
// shared cache line: each thread adds into its own shard with relaxed atomics,
// and a scrape adds the shards up.
#ifndef MATSERVE_SERVER_METRICS_SHARDED_H_
#define MATSERVE_SERVER_METRICS_SHARDED_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "prometheus/client_metric.h"

namespace matserve::metrics {

// Shards per metric. Threads take shards round-robin in the order they first
// record anything, so up to kShards threads (the gRPC and worker threads of
// one server) each write cache lines of their own; more threads share shards,
// which stays correct (the adds are atomic) at the cost of some contention.
inline constexpr size_t kShards = 16;

// This thread's shard, fixed at its first call.
inline size_t ThisThreadShard() {
  static std::atomic<size_t> next_shard{0};
  thread_local const size_t shard =
      next_shard.fetch_add(1, std::memory_order_relaxed) % kShards;
  return shard;
}

// `width` 64-bit cells, kShards times over, each shard's row on cache lines
// of its own. Cell i of the metric is the sum of cell i over the shards.
class ShardedCells {
 public:
  explicit ShardedCells(size_t width);

  // Adds to cell `index` of this thread's shard. Unsigned arithmetic wraps,
  // so a gauge may add the two's complement of a negative delta.
  void Add(size_t index, uint64_t delta) {
    Cell(ThisThreadShard(), index).fetch_add(delta, std::memory_order_relaxed);
  }
  // Adds a double to a cell used only through AddDouble and SumDouble (it
  // holds the bit pattern). The shard is this thread's, so the compare-and-swap
  // loop rarely runs twice.
  void AddDouble(size_t index, double delta);

  // The cell summed over the shards. Any thread; concurrent adds may or may
  // not be included.
  uint64_t Sum(size_t index) const;
  double SumDouble(size_t index) const;

 private:
  static constexpr size_t kCellsPerLine = 8;
  struct alignas(64) Line {
    std::atomic<uint64_t> cells[kCellsPerLine] = {};
  };

  std::atomic<uint64_t>& Cell(size_t shard, size_t index) const {
    return lines_[shard * lines_per_shard_ + index / kCellsPerLine]
        .cells[index % kCellsPerLine];
  }

  size_t lines_per_shard_;
  std::unique_ptr<Line[]> lines_;
};

// A Prometheus histogram over integer observations (nanoseconds, requests):
// integer bucket bounds, exact integer sums. One series; a labelled family
// keeps one per label value.
class ShardedHistogram {
 public:
  // `bounds`: the buckets' upper bounds, inclusive and strictly ascending, in
  // the unit of the observations; a +Inf bucket follows them.
  explicit ShardedHistogram(std::vector<uint64_t> bounds);

  // Counts `value` in the first bucket whose bound is >= value.
  void Observe(uint64_t value);

  // The series in Prometheus's terms, every bound and the sum divided by
  // `divisor` (1e9 for nanoseconds exported as seconds: a division, so that
  // 10000 ns becomes exactly the double nearest 1e-05). The count is the +Inf
  // bucket's, so the buckets and the count always agree; the sum is read
  // separately and may miss an observation in flight.
  prometheus::ClientMetric::Histogram Collect(double divisor) const;

 private:
  std::vector<uint64_t> bounds_;
  // Cells 0..bounds.size(): per-bucket (not cumulative) counts, the last one
  // +Inf; then the sum.
  ShardedCells cells_;
};

}  // namespace matserve::metrics

#endif  // MATSERVE_SERVER_METRICS_SHARDED_H_
