// Naive SGEMM: the bottom rung, one thread per element of C reading A and B
// straight from global memory.
#ifndef MATSERVE_KERNELS_SGEMM_NAIVE_CUH_
#define MATSERVE_KERNELS_SGEMM_NAIVE_CUH_

#include <cstdint>

namespace matserve::kernels {

// threadIdx.x runs along a row of C, so a warp reads 32 consecutive elements
// of B (coalesced) and one element of A (a broadcast). Blocks are numbered in
// one grid dimension, as in SgemmTiledKernel.
template <int kBlock>
__global__ void __launch_bounds__(kBlock* kBlock)
    SgemmNaiveKernel(int64_t m, int64_t n, int64_t k,
                     const float* __restrict__ a, const float* __restrict__ b,
                     float* __restrict__ c, int64_t blocks_n) {
  const int64_t row = blockIdx.x / blocks_n * kBlock + threadIdx.y;
  const int64_t col = blockIdx.x % blocks_n * kBlock + threadIdx.x;
  if (row >= m || col >= n) return;
  float sum = 0.0f;
  for (int64_t p = 0; p < k; ++p)
    sum = fmaf(a[row * k + p], b[p * n + col], sum);
  c[row * n + col] = sum;
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_NAIVE_CUH_
