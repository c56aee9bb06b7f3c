// Copies a matrix into rows that start on 16 bytes, so that the fast SGEMM
// path (16-byte accesses) can take an operand whose own rows don't, and back;
// and zeros the C that a split K adds into. Each waits for the kernel before
// it in the stream (grid_dependency.cuh) before touching memory.
#ifndef MATSERVE_KERNELS_PAD_ROWS_CUH_
#define MATSERVE_KERNELS_PAD_ROWS_CUH_

#include <cstdint>

#include "kernels/grid_dependency.cuh"

namespace matserve::kernels {

// dst = src for a matrix of cols columns with rows src_ld elements apart in
// src and dst_ld (a multiple of 4, dst 16-byte aligned) in dst; the columns
// of dst past cols are zeroed. A block covers kThreads runs of 4 elements of
// one row (`segments` blocks per row), so each thread stores one 16-byte run.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    PadRowsKernel(int64_t cols, const float* __restrict__ src, int64_t src_ld,
                  float* __restrict__ dst, int64_t dst_ld, int64_t segments) {
  WaitForPriorGrid();
  AllowDependentLaunch();
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

// dst = src for a matrix of cols columns with rows src_ld elements apart in
// src (a multiple of 4, src 16-byte aligned) and dst_ld in dst: the way back
// of PadRowsKernel, on the same grid. Each thread reads one 16-byte run and
// stores its elements inside the matrix one by one.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    UnpadRowsKernel(int64_t cols, const float* __restrict__ src, int64_t src_ld,
                    float* __restrict__ dst, int64_t dst_ld, int64_t segments) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  const int64_t row = blockIdx.x / segments;
  const int64_t col = (blockIdx.x % segments * kThreads + threadIdx.x) * 4;
  if (col >= cols) return;
  const float4 run = *reinterpret_cast<const float4*>(src + row * src_ld + col);
  const float values[4] = {run.x, run.y, run.z, run.w};
  float* out = dst + row * dst_ld + col;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    if (col + q < cols) out[q] = values[q];
  }
}

// Zeros `count` floats at out: a block kRuns x kThreads of them, each store
// instruction a warp's 32 consecutive floats.
template <int kThreads, int kRuns>
__global__ void __launch_bounds__(kThreads)
    ZeroKernel(float* __restrict__ out, int64_t count) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  const int64_t first = blockIdx.x * int64_t{kRuns * kThreads} + threadIdx.x;
#pragma unroll
  for (int r = 0; r < kRuns; ++r) {
    const int64_t i = first + r * kThreads;
    if (i < count) out[i] = 0.0f;
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_PAD_ROWS_CUH_
