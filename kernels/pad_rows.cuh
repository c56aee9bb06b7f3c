// Copies a matrix into rows that start on 16 bytes, so that the fast SGEMM
// path (16-byte copies) can read an operand whose own rows don't.
#ifndef MATSERVE_KERNELS_PAD_ROWS_CUH_
#define MATSERVE_KERNELS_PAD_ROWS_CUH_

#include <cstdint>

namespace matserve::kernels {

// dst = src for a matrix of cols columns with rows src_ld elements apart in
// src and dst_ld (a multiple of 4, dst 16-byte aligned) in dst; the columns
// of dst past cols are zeroed. A block covers kThreads runs of 4 elements of
// one row (`segments` blocks per row), so each thread stores one 16-byte run.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    PadRowsKernel(int64_t cols, const float* __restrict__ src, int64_t src_ld,
                  float* __restrict__ dst, int64_t dst_ld, int64_t segments) {
  const int64_t row = blockIdx.x / segments;
  const int64_t col = (blockIdx.x % segments * kThreads + threadIdx.x) * 4;
  if (col >= dst_ld) return;
  const float* in = src + row * src_ld + col;
  float run[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) run[q] = col + q < cols ? in[q] : 0.0f;
  *reinterpret_cast<float4*>(dst + row * dst_ld + col) =
      make_float4(run[0], run[1], run[2], run[3]);
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_PAD_ROWS_CUH_
