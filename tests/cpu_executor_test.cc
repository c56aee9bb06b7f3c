// The CPU backend against the float64 reference on odd shapes, IEEE specials,
// and exact transpose.
#include "server/engine/cpu_executor.h"

#include <gtest/gtest.h>

#include <cmath>

#include "client/reference.h"
#include "tests/executor_util.h"
#include "tests/test_util.h"

namespace matserve::engine {
namespace {

using matserve::testing::RunOne;
using matserve::testing::Shape;

class CpuMultiply : public ::testing::TestWithParam<Shape> {};

TEST_P(CpuMultiply, MatchesFloat64Reference) {
  const Shape s = GetParam();
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix a = RandomMatrix(s.m, s.k, rng);
  const Matrix b = RandomMatrix(s.k, s.n, rng);
  std::vector<float> c(uint64_t{s.m} * s.n,
                       NAN);  // poisoned: unwritten entries fail
  CpuExecutor executor;
  ASSERT_TRUE(RunOne(executor, MultiplyOp{s.m, s.k, s.n, a.values.data(),
                                          b.values.data(), c.data()})
                  .ok());
  matserve::testing::ExpectMatchesReference(c, ReferenceMultiply(a, b));
}

INSTANTIATE_TEST_SUITE_P(OddShapes, CpuMultiply,
                         ::testing::ValuesIn(matserve::testing::OddShapes()),
                         [](const auto& info) {
                           return ShapeName(info.param);
                         });

TEST(CpuMultiply, NanAndInfinityPropagateAsIeeeArithmetic) {
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix a = matserve::testing::MatrixWithSpecialValues(37, 41, rng);
  const Matrix b = matserve::testing::MatrixWithSpecialValues(41, 29, rng);
  std::vector<float> c(37 * 29);
  CpuExecutor executor;
  ASSERT_TRUE(RunOne(executor, MultiplyOp{37, 41, 29, a.values.data(),
                                          b.values.data(), c.data()})
                  .ok());
  const std::vector<double> want = ReferenceMultiply(a, b);
  ASSERT_TRUE(std::any_of(want.begin(), want.end(),
                          [](double v) { return std::isnan(v); }));
  matserve::testing::ExpectMatchesReference(c, want);
}

class CpuTranspose : public ::testing::TestWithParam<Shape> {};

TEST_P(CpuTranspose, IsBitExact) {
  const Shape s = GetParam();  // transposes an m x n input
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix input =
      matserve::testing::MatrixWithSpecialValues(s.m, s.n, rng);
  std::vector<float> output(input.values.size(), NAN);
  CpuExecutor executor;
  ASSERT_TRUE(RunOne(executor,
                     TransposeOp{s.m, s.n, input.values.data(), output.data()})
                  .ok());
  matserve::testing::ExpectExactTranspose(input, output);
}

INSTANTIATE_TEST_SUITE_P(OddShapes, CpuTranspose,
                         ::testing::ValuesIn(matserve::testing::OddShapes()),
                         [](const auto& info) {
                           return ShapeName(info.param);
                         });

// The engine hands the CPU backend batches too: mixed shapes, each answer
// its own.
TEST(CpuBatch, MixedShapesEachMatchTheReference) {
  CpuExecutor executor;
  const std::vector<Shape> shapes = {{1, 1, 1},    {17, 31, 29}, {17, 31, 29},
                                     {64, 64, 64}, {3, 257, 5},  {1, 1000, 7}};
  const BatchRecord record =
      matserve::testing::ExpectMultiplyBatchMatches(executor, shapes);
  EXPECT_GT(record.compute, absl::ZeroDuration());
  matserve::testing::ExpectTransposeBatchExact(executor, shapes);
}

}  // namespace
}  // namespace matserve::engine
