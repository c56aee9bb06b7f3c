// ReferenceMultiply and RelativeError.
#include "client/reference.h"

#include <cmath>
#include <cstdint>

namespace matserve {

std::vector<double> ReferenceMultiply(const Matrix& a, const Matrix& b) {
  const uint64_t m = a.rows, k = a.cols, n = b.cols;
  std::vector<double> c(m * n, 0.0);
  for (uint64_t i = 0; i < m; ++i) {
    double* c_row = &c[i * n];
    for (uint64_t p = 0; p < k; ++p) {  // i-p-j order walks B and C by rows
      const double a_ip = a.values[i * k + p];
      const float* b_row = &b.values[p * n];
      for (uint64_t j = 0; j < n; ++j) c_row[j] += a_ip * b_row[j];
    }
  }
  return c;
}

double RelativeError(const std::vector<float>& got,
                     const std::vector<double>& want) {
  if (got.size() != want.size()) return NAN;
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = got[i] - want[i];
    diff += d * d;
    norm += want[i] * want[i];
  }
  return norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

}  // namespace matserve
