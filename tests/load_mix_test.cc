// matserve-load's --mix parser: good mixes with weights and defaults, and bad
// ones whose message names the problem; the sizes of an operation.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/load/mix.h"

namespace matserve::load {
namespace {

using Kind = Operation::Kind;

TEST(ParseMix, OneMultiplyWithTheDefaultWeight) {
  absl::StatusOr<std::vector<Operation>> mix = ParseMix("multiply:64x32x16");
  ASSERT_TRUE(mix.ok()) << mix.status();
  ASSERT_EQ(mix->size(), 1u);
  const Operation& op = (*mix)[0];
  EXPECT_EQ(op.kind, Kind::kMultiply);
  EXPECT_EQ(op.m, 64u);
  EXPECT_EQ(op.k, 32u);
  EXPECT_EQ(op.n, 16u);
  EXPECT_EQ(op.weight, 1.0);
}

TEST(ParseMix, OperationsWithWeights) {
  absl::StatusOr<std::vector<Operation>> mix =
      ParseMix("multiply:64x64x64,transpose:1024x512:0.2,multiply:1x2x3:3");
  ASSERT_TRUE(mix.ok()) << mix.status();
  ASSERT_EQ(mix->size(), 3u);
  EXPECT_EQ((*mix)[0].weight, 1.0);
  EXPECT_EQ((*mix)[1].kind, Kind::kTranspose);
  EXPECT_EQ((*mix)[1].m, 1024u);
  EXPECT_EQ((*mix)[1].n, 512u);
  EXPECT_EQ((*mix)[1].weight, 0.2);
  EXPECT_EQ((*mix)[2].weight, 3.0);
  EXPECT_EQ(MixName(*mix),
            "multiply:64x64x64,transpose:1024x512:0.2,multiply:1x2x3:3");
}

TEST(ParseMix, MixNameReadsBack) {
  const std::string name = "transpose:7x9:0.5,multiply:4096x4096x4096";
  absl::StatusOr<std::vector<Operation>> mix = ParseMix(name);
  ASSERT_TRUE(mix.ok()) << mix.status();
  EXPECT_EQ(MixName(*mix), name);
}

TEST(ParseMix, BadMixesNameTheProblem) {
  struct Case {
    std::string mix;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "--mix is empty"},
      {"multiply:2x2x2,,transpose:2x2", "empty item"},
      {"multiply:2x2x2,", "empty item"},
      {"add:2x2", "unknown operation \"add\" (expected multiply or transpose)"},
      {"multiply", "expected KIND:SHAPE[:WEIGHT]"},
      {"multiply:2x2x2:1:2", "expected KIND:SHAPE[:WEIGHT]"},
      {"multiply:64x64", "the shape must be MxKxN, not \"64x64\""},
      {"transpose:2x3x4", "the shape must be RxC, not \"2x3x4\""},
      {"transpose:0x4", "dimension \"0\" is not a whole number >= 1"},
      {"multiply:2x-3x4", "dimension \"-3\" is not a whole number >= 1"},
      {"multiply:2xax4", "dimension \"a\" is not a whole number >= 1"},
      {"transpose:4294967296x1",
       "dimension \"4294967296\" is not a whole number >= 1"},
      {"transpose:4x", "dimension \"\" is not a whole number >= 1"},
      {"transpose:4x4:0", "weight \"0\" is not a positive number"},
      {"transpose:4x4:-1", "weight \"-1\" is not a positive number"},
      {"transpose:4x4:many", "weight \"many\" is not a positive number"},
      {"transpose:4x4:inf", "weight \"inf\" is not a positive number"},
      {"transpose:4x4:nan", "weight \"nan\" is not a positive number"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.mix);
    absl::StatusOr<std::vector<Operation>> mix = ParseMix(c.mix);
    ASSERT_FALSE(mix.ok());
    EXPECT_EQ(mix.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(mix.status().message().find(c.message), std::string::npos)
        << mix.status().message();
  }
}

TEST(Operation, SizesAndFlops) {
  const Operation multiply{Kind::kMultiply, 2, 3, 5, 1.0};
  EXPECT_EQ(multiply.Name(), "multiply:2x3x5");
  EXPECT_EQ(multiply.Flops(), 60.0);
  EXPECT_EQ(multiply.RequestBytes(), (2u * 3 + 3 * 5) * 4);
  EXPECT_EQ(multiply.ResponseBytes(), 2u * 5 * 4);
  const Operation transpose{Kind::kTranspose, 65536, 0, 65536, 1.0};
  EXPECT_EQ(transpose.Name(), "transpose:65536x65536");
  EXPECT_EQ(transpose.Flops(), 0.0);
  EXPECT_EQ(transpose.RequestBytes(), uint64_t{1} << 34) << "no 32-bit wrap";
  EXPECT_EQ(transpose.ResponseBytes(), uint64_t{1} << 34);
}

}  // namespace
}  // namespace matserve::load
