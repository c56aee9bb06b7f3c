// RandomMatrix.
#include "client/matrix.h"

namespace matserve {

Matrix RandomMatrix(uint32_t rows, uint32_t cols, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> uniform(-0.5f, 1.0f);
  Matrix m{rows, cols, std::vector<float>(uint64_t{rows} * cols)};
  for (float& v : m.values) v = uniform(rng);
  return m;
}

}  // namespace matserve
