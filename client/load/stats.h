// Latency percentiles and rates of a load level.
#ifndef MATSERVE_CLIENT_LOAD_STATS_H_
#define MATSERVE_CLIENT_LOAD_STATS_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace matserve::load {

// The nearest-rank percentile of `sorted` (ascending, not empty): the smallest
// sample with at least per_mille / 1000 of all samples at or below it. In
// thousandths rather than a double percent so that the rank is exact: p99.9 of
// 1..1000 is 999, not 1000 through rounding.
int64_t Percentile(const std::vector<int64_t>& sorted, int per_mille);

struct LatencySummary {  // milliseconds
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;
};

// Percentiles of latencies given in nanoseconds, in milliseconds; nullopt when
// there are none.
std::optional<LatencySummary> SummarizeLatencies(
    std::vector<int64_t> latencies_ns);

// count / seconds, and 0 for an empty window.
double PerSecond(double count, double seconds);

}  // namespace matserve::load

#endif  // MATSERVE_CLIENT_LOAD_STATS_H_
