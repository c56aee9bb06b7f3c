// Test helpers: seeds, shapes and reference checks.
#include "tests/test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "client/reference.h"

namespace matserve::testing {

std::mt19937_64 FreshRng() {
  const char* fixed = std::getenv("MATSERVE_TEST_SEED");
  const uint64_t seed =
      fixed != nullptr
          ? std::strtoull(fixed, nullptr, 10)
          : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  ::testing::Test::RecordProperty("seed", std::to_string(seed));
  std::cout << "[   seed   ] MATSERVE_TEST_SEED=" << seed << std::endl;
  return std::mt19937_64(seed);
}

std::string ShapeName(const Shape& shape) {
  return absl::StrCat(shape.m, "x", shape.k, "x", shape.n);
}

std::vector<Shape> OddShapes() {
  return {{1, 1, 1},        {1, 1024, 1},     {1, 7, 4097},    {4097, 33, 5},
          {4097, 1, 3},     {31, 33, 35},     {127, 131, 137}, {257, 1, 263},
          {513, 1025, 257}, {1000, 3000, 777}};
}

void ExpectMatchesReference(const std::vector<float>& got,
                            const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  std::vector<float> finite_got;
  std::vector<double> finite_want;
  size_t wrong_non_finite = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isfinite(want[i])) {
      finite_got.push_back(got[i]);
      finite_want.push_back(want[i]);
    } else if (std::isnan(want[i]) ? !std::isnan(got[i]) : got[i] != want[i]) {
      if (wrong_non_finite++ == 0) {
        ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want "
                      << want[i];
      }
    }
  }
  EXPECT_EQ(wrong_non_finite, 0u)
      << "non-finite entries that differ from the reference";
  const double error = RelativeError(finite_got, finite_want);
  EXPECT_LE(error, kMultiplyTolerance)
      << "normwise relative error over " << finite_got.size()
      << " finite entries";
}

void ExpectExactTranspose(const Matrix& input,
                          const std::vector<float>& output) {
  ASSERT_EQ(output.size(), input.values.size());
  size_t wrong = 0;
  for (uint64_t r = 0; r < input.rows; ++r) {
    for (uint64_t c = 0; c < input.cols; ++c) {
      const float want = input.values[r * input.cols + c];
      const float got = output[c * input.rows + r];
      if (std::memcmp(&want, &got, sizeof(float)) != 0 && wrong++ == 0) {
        ADD_FAILURE() << "input (" << r << ", " << c << ") = " << want
                      << " became " << got;
      }
    }
  }
  EXPECT_EQ(wrong, 0u) << "elements not moved bit-exactly";
}

Matrix MatrixWithSpecialValues(uint32_t rows, uint32_t cols,
                               std::mt19937_64& rng) {
  Matrix m = RandomMatrix(rows, cols, rng);
  const uint32_t nan_with_payload = 0x7fc01234u;
  float specials[5] = {0.0f, std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity(), -0.0f, 1e-40f};
  std::memcpy(&specials[0], &nan_with_payload, sizeof(float));
  std::uniform_int_distribution<uint64_t> where(0, m.values.size() - 1);
  for (float special : specials) m.values[where(rng)] = special;
  return m;
}

}  // namespace matserve::testing
