// matserve-load's parsers of --concurrency_range, --output and --arrival, good
// values and bad ones (--target is ChannelTarget's: client_test.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/load/options.h"

namespace matserve::load {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseConcurrencyRange, GeometricLevelsUpToTheEnd) {
  EXPECT_THAT(*ParseConcurrencyRange("1:512:2"),
              ElementsAre(1, 2, 4, 8, 16, 32, 64, 128, 256, 512));
  EXPECT_THAT(*ParseConcurrencyRange("1:256:16"), ElementsAre(1, 16, 256));
  EXPECT_THAT(*ParseConcurrencyRange("3:100:3"), ElementsAre(3, 9, 27, 81));
  EXPECT_THAT(*ParseConcurrencyRange("1:8"), ElementsAre(1, 2, 4, 8))
      << "the factor is 2 when left out";
  EXPECT_THAT(*ParseConcurrencyRange("5:5:2"), ElementsAre(5));
  EXPECT_THAT(*ParseConcurrencyRange("2147483647:2147483647:2"),
              ElementsAre(2147483647))
      << "no overflow past the end";
}

TEST(ParseConcurrencyRange, BadRanges) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "expected START:END[:FACTOR]"},
      {"4", "expected START:END[:FACTOR]"},
      {"1:2:3:4", "expected START:END[:FACTOR]"},
      {"0:8", "START must be a whole number >= 1"},
      {"x:8", "START must be a whole number >= 1"},
      {"8:4", "END must be a whole number >= START"},
      {"1:8:1", "FACTOR must be a whole number >= 2"},
      {"1:8:1.5", "FACTOR must be a whole number >= 2"},
  };
  for (const auto& [range, message] : cases) {
    absl::StatusOr<std::vector<int>> levels = ParseConcurrencyRange(range);
    ASSERT_FALSE(levels.ok()) << range;
    EXPECT_THAT(levels.status().message(), HasSubstr(message)) << range;
  }
}

TEST(ParseOutputFormatAndArrival, KnownNamesOnly) {
  EXPECT_EQ(*ParseOutputFormat("text"), OutputFormat::kText);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  EXPECT_EQ(*ParseOutputFormat("csv"), OutputFormat::kCsv);
  EXPECT_THAT(ParseOutputFormat("JSON").status().message(),
              HasSubstr("--output=JSON: expected text, json or csv"));
  EXPECT_EQ(*ParseArrival("constant"), Arrival::kConstant);
  EXPECT_EQ(*ParseArrival("poisson"), Arrival::kPoisson);
  EXPECT_THAT(ParseArrival("bursty").status().message(),
              HasSubstr("--arrival=bursty: expected constant or poisson"));
}

TEST(LevelName, SaysTheLoop) {
  EXPECT_EQ(LevelName({.concurrency = 16}), "concurrency 16");
  EXPECT_EQ(LevelName({.rate = 250}), "rate 250/s");
}

}  // namespace
}  // namespace matserve::load
