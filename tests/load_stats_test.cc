// matserve-load's statistics: nearest-rank percentiles on known data, and
// rates.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "client/load/stats.h"

namespace matserve::load {
namespace {

TEST(Percentile, OneToAThousand) {
  std::vector<int64_t> samples(1000);
  std::iota(samples.begin(), samples.end(), 1);
  EXPECT_EQ(Percentile(samples, 1), 1);
  EXPECT_EQ(Percentile(samples, 500), 500);
  EXPECT_EQ(Percentile(samples, 900), 900);
  EXPECT_EQ(Percentile(samples, 950), 950);
  EXPECT_EQ(Percentile(samples, 990), 990);
  EXPECT_EQ(Percentile(samples, 999), 999);
  EXPECT_EQ(Percentile(samples, 1000), 1000);
}

TEST(Percentile, RanksRoundUp) {
  const std::vector<int64_t> samples = {10, 20, 30, 40, 50,
                                        60, 70, 80, 90, 100};
  EXPECT_EQ(Percentile(samples, 500), 50);   // rank 5
  EXPECT_EQ(Percentile(samples, 501), 60);   // rank 5.01 -> 6
  EXPECT_EQ(Percentile(samples, 990), 100);  // rank 9.9 -> 10
  EXPECT_EQ(Percentile(samples, 999), 100);
}

TEST(Percentile, OneSampleIsEveryPercentile) {
  for (int per_mille : {1, 500, 999, 1000}) {
    EXPECT_EQ(Percentile({42}, per_mille), 42) << per_mille;
  }
}

TEST(SummarizeLatencies, ShuffledNanosecondsToMilliseconds) {
  std::vector<int64_t> nanos(1000);
  for (int i = 0; i < 1000; ++i) nanos[i] = (i + 1) * int64_t{1000000};
  std::shuffle(nanos.begin(), nanos.end(), std::mt19937_64(7));
  const std::optional<LatencySummary> summary = SummarizeLatencies(nanos);
  ASSERT_TRUE(summary.has_value());
  EXPECT_DOUBLE_EQ(summary->p50, 500);
  EXPECT_DOUBLE_EQ(summary->p90, 900);
  EXPECT_DOUBLE_EQ(summary->p95, 950);
  EXPECT_DOUBLE_EQ(summary->p99, 990);
  EXPECT_DOUBLE_EQ(summary->p999, 999);
  EXPECT_DOUBLE_EQ(summary->max, 1000);
}

TEST(SummarizeLatencies, Duplicates) {
  // Sorted: 1 5 5 5 5 5 5 5 5 9 (ms).
  const std::optional<LatencySummary> summary =
      SummarizeLatencies({5000000, 1000000, 5000000, 5000000, 9000000, 5000000,
                          5000000, 5000000, 5000000, 5000000});
  ASSERT_TRUE(summary.has_value());
  EXPECT_DOUBLE_EQ(summary->p50, 5);
  EXPECT_DOUBLE_EQ(summary->p90, 5);
  EXPECT_DOUBLE_EQ(summary->p95, 9);
  EXPECT_DOUBLE_EQ(summary->max, 9);
}

TEST(SummarizeLatencies, NoSamplesNoSummary) {
  EXPECT_FALSE(SummarizeLatencies({}).has_value());
}

TEST(PerSecond, CountOverSeconds) {
  EXPECT_DOUBLE_EQ(PerSecond(1000, 2.0), 500);
  EXPECT_DOUBLE_EQ(PerSecond(3, 0.5), 6);
  EXPECT_DOUBLE_EQ(PerSecond(0, 10), 0);
  EXPECT_DOUBLE_EQ(PerSecond(5, 0), 0) << "an empty window has no rate";
}

}  // namespace
}  // namespace matserve::load
