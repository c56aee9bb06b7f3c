#include "server/metrics/sharded.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace matserve::metrics {
namespace {

uint64_t Bits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

double FromBits(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

}  // namespace

ShardedCells::ShardedCells(size_t width)
    : lines_per_shard_((width + kCellsPerLine - 1) / kCellsPerLine),
      lines_(std::make_unique<Line[]>(kShards * lines_per_shard_)) {}

void ShardedCells::AddDouble(size_t index, double delta) {
  std::atomic<uint64_t>& cell = Cell(ThisThreadShard(), index);
  uint64_t old_bits = cell.load(std::memory_order_relaxed);
  while (!cell.compare_exchange_weak(old_bits, Bits(FromBits(old_bits) + delta),
                                     std::memory_order_relaxed)) {
  }
}

uint64_t ShardedCells::Sum(size_t index) const {
  uint64_t sum = 0;
  for (size_t shard = 0; shard < kShards; ++shard) {
    sum += Cell(shard, index).load(std::memory_order_relaxed);
  }
  return sum;
}

double ShardedCells::SumDouble(size_t index) const {
  double sum = 0;
  for (size_t shard = 0; shard < kShards; ++shard) {
    sum += FromBits(Cell(shard, index).load(std::memory_order_relaxed));
  }
  return sum;
}

ShardedHistogram::ShardedHistogram(std::vector<uint64_t> bounds)
    : bounds_(std::move(bounds)), cells_(bounds_.size() + 2) {}

void ShardedHistogram::Observe(uint64_t value) {
  const size_t bucket =
      std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  cells_.Add(bucket, 1);
  cells_.Add(bounds_.size() + 1, value);
}

prometheus::ClientMetric::Histogram ShardedHistogram::Collect(
    double divisor) const {
  prometheus::ClientMetric::Histogram histogram;
  uint64_t cumulative = 0;
  for (size_t bucket = 0; bucket <= bounds_.size(); ++bucket) {
    cumulative += cells_.Sum(bucket);
    histogram.bucket.push_back(
        {.cumulative_count = cumulative,
         .upper_bound = bucket < bounds_.size()
                            ? static_cast<double>(bounds_[bucket]) / divisor
                            : std::numeric_limits<double>::infinity()});
  }
  histogram.sample_count = cumulative;
  histogram.sample_sum =
      static_cast<double>(cells_.Sum(bounds_.size() + 1)) / divisor;
  return histogram;
}

}  // namespace matserve::metrics
