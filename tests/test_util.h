// Shared by the tests: fresh random inputs, the odd shapes every backend is
// checked on, and the checks against the float64 reference.
#ifndef MATSERVE_TESTS_TEST_UTIL_H_
#define MATSERVE_TESTS_TEST_UTIL_H_

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "client/matrix.h"

namespace matserve::testing {

// A generator seeded afresh for every test; the seed is printed so that a
// failure can be replayed with MATSERVE_TEST_SEED=<seed>.
std::mt19937_64 FreshRng();

struct Shape {
  uint32_t m, k, n;  // A is m x k, B is k x n
};
std::string ShapeName(const Shape& shape);  // "1000x3000x777", for test names
inline std::ostream& operator<<(std::ostream& os, const Shape& s) {
  return os << ShapeName(s);
}

// 1, primes, and sizes that are multiples of no tile size, from 1x1x1 to
// 1000x3000x777.
std::vector<Shape> OddShapes();

// Fails the test unless `got` matches `want` normwise to kMultiplyTolerance
// over the finite entries, and every non-finite entry of `want` (NaN, +Inf,
// -Inf) is the same in `got`.
void ExpectMatchesReference(const std::vector<float>& got,
                            const std::vector<double>& want);

// Fails the test unless `output` is `input` transposed, bit for bit.
void ExpectExactTranspose(const Matrix& input,
                          const std::vector<float>& output);

// A random rows x cols matrix holding also NaN (with a payload), +-Inf, -0 and
// a subnormal.
Matrix MatrixWithSpecialValues(uint32_t rows, uint32_t cols,
                               std::mt19937_64& rng);

}  // namespace matserve::testing

#endif  // MATSERVE_TESTS_TEST_UTIL_H_
