// matserve's public kernel API: host launchers for the GPU kernels, on device
// pointers and a stream.
#ifndef MATSERVE_KERNELS_KERNELS_H_
#define MATSERVE_KERNELS_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace matserve::kernels {

// The rungs of the SGEMM ladder, slowest first. The simpler ones stay as
// correctness baselines; kAuto picks by shape.
enum class SgemmVariant {
  kAuto,
  kNaive,            // one thread per element of C, straight from memory
  kTiled,            // 32 x 32 shared-memory tiles, one element per thread
  kRegisterBlocked,  // 128 x 128 block tiles, 8 x 8 of C in each thread
};
inline constexpr SgemmVariant kSgemmVariants[] = {
    SgemmVariant::kNaive, SgemmVariant::kTiled, SgemmVariant::kRegisterBlocked};

// "naive", "tiled", "register_blocked", "auto".
const char* SgemmVariantName(SgemmVariant variant);

// C = A * B for row-major device matrices: A is m x k, B is k x n, C is m x n.
// Any sizes >= 1, whichever variant; fp32 accumulation. Returns
// cudaErrorInvalidValue for a zero or negative size, else the launch error
// (the kernel itself runs asynchronously on `stream`).
cudaError_t Sgemm(int64_t m, int64_t n, int64_t k, const float* a,
                  const float* b, float* c, cudaStream_t stream,
                  SgemmVariant variant = SgemmVariant::kAuto);

// out = in^T for a row-major rows x cols device matrix; out is cols x rows.
// Bit-exact. Same error contract as Sgemm.
cudaError_t Transpose(int64_t rows, int64_t cols, const float* in, float* out,
                      cudaStream_t stream);

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_KERNELS_H_
