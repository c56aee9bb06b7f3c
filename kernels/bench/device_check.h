// What the kernel bench and the kernel fuzzer share: fatal CUDA and cuBLAS
// checks, random device inputs, poisoned outputs, and the normwise error.
#ifndef MATSERVE_KERNELS_BENCH_DEVICE_CHECK_H_
#define MATSERVE_KERNELS_BENCH_DEVICE_CHECK_H_

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace matserve::kernels::bench {

// Every CUDA or cuBLAS failure is fatal: a program that goes on after one
// prints numbers for work that never ran. Exit 2 keeps it apart from a wrong
// output (1).
[[noreturn]] void Fail(const char* call, const char* file, int line,
                       const char* error);
void Check(cudaError_t status, const char* call, const char* file, int line);
void Check(cublasStatus_t status, const char* call, const char* file, int line);
#define CHECK(call) \
  ::matserve::kernels::bench::Check((call), #call, __FILE__, __LINE__)

// Fills `count` floats with values uniform in [-1, 1), a function of `seed`
// and the index alone, so a seed reproduces them. Never zeros: they hide
// unwritten outputs and can run faster.
void FillUniform(float* data, int64_t count, uint64_t seed,
                 cudaStream_t stream);

// 0xFF bytes are NaNs: an element a kernel fails to write fails the check.
void Poison(float* data, int64_t count, cudaStream_t stream);

std::vector<float> ToHost(const float* data, int64_t count,
                          cudaStream_t stream);

// ||out - ref||_F / ||ref||_F over `count` elements, in double; NaN anywhere
// in `out` gives NaN.
template <typename Ref>
double RelError(const float* out, const Ref* ref, int64_t count) {
  double diff = 0, norm = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(out[i]) - ref[i];
    diff += d * d;
    norm += static_cast<double>(ref[i]) * ref[i];
  }
  return std::sqrt(diff / norm);
}
template <typename Ref>
double RelError(const std::vector<float>& out, const std::vector<Ref>& ref) {
  return RelError(out.data(), ref.data(), static_cast<int64_t>(ref.size()));
}

// The larger of two errors, NaN if either is (std::max(worst, NaN) would
// keep `worst` and pass a NaN output).
inline double WorseError(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}

}  // namespace matserve::kernels::bench

#endif  // MATSERVE_KERNELS_BENCH_DEVICE_CHECK_H_
