// Percentile, SummarizeLatencies and PerSecond.
#include "client/load/stats.h"

#include <algorithm>

namespace matserve::load {

int64_t Percentile(const std::vector<int64_t>& sorted, int per_mille) {
  const uint64_t n = sorted.size();
  const uint64_t rank = (uint64_t(per_mille) * n + 999) / 1000;  // ceil
  return sorted[std::clamp<uint64_t>(rank, 1, n) - 1];
}

std::optional<LatencySummary> SummarizeLatencies(
    std::vector<int64_t> latencies_ns) {
  if (latencies_ns.empty()) return std::nullopt;
  std::sort(latencies_ns.begin(), latencies_ns.end());
  auto ms = [&](int per_mille) {
    return Percentile(latencies_ns, per_mille) * 1e-6;
  };
  return LatencySummary{ms(500), ms(900), ms(950), ms(990), ms(999), ms(1000)};
}

double PerSecond(double count, double seconds) {
  return seconds > 0 ? count / seconds : 0.0;
}

}  // namespace matserve::load
