// Matrix: the client's dense row-major float32 matrix, and random test data for
// it.
#ifndef MATSERVE_CLIENT_MATRIX_H_
#define MATSERVE_CLIENT_MATRIX_H_

#include <cstdint>
#include <random>
#include <vector>

namespace matserve {

struct Matrix {
  uint32_t rows = 0;
  uint32_t cols = 0;
  std::vector<float> values;  // row-major, rows * cols of them

  float& at(uint32_t row, uint32_t col) {
    return values[uint64_t{row} * cols + col];
  }
  float at(uint32_t row, uint32_t col) const {
    return values[uint64_t{row} * cols + col];
  }
};

// rows x cols values drawn uniformly from [-0.5, 1): both signs, but a
// positive mean, so that a long dot product does not cancel to near zero by
// chance. Where it does (zero-mean inputs, a 1 x K x 1 product, now and then),
// fp32 rounding alone exceeds 1e-5 of the tiny result and a right answer
// would fail the normwise relative error check.
Matrix RandomMatrix(uint32_t rows, uint32_t cols, std::mt19937_64& rng);

}  // namespace matserve

#endif  // MATSERVE_CLIENT_MATRIX_H_
