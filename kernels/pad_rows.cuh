// Copies a matrix into rows that start on 16 bytes, so that the fast SGEMM
// path (16-byte accesses) can take an operand whose own rows don't, and back;
// and zeros the C that a split K adds into (with a pad, where C is padded too).
// Each waits for the kernel before it in the stream (grid_dependency.cuh)
// before touching memory.
#ifndef MATSERVE_KERNELS_PAD_ROWS_CUH_
#define MATSERVE_KERNELS_PAD_ROWS_CUH_

#include <cstdint>

#include "kernels/grid_dependency.cuh"

namespace matserve::kernels {

// dst = src for a matrix of cols columns with rows src_ld elements apart in
// src and dst_ld (a multiple of 4, dst 16-byte aligned) in dst, the columns
// of dst past cols zeroed; and `zero_words` 16-byte words at `zero` zeroed in
// the same pass. The `runs` 16-byte runs of dst, row after row, and then the
// words to zero are numbered as one range; each thread takes kRuns of them,
// kThreads apart, and loads all of its runs before it stores any.
template <int kThreads, int kRuns>
__global__ void __launch_bounds__(kThreads)
    PadRowsKernel(int64_t cols, const float* __restrict__ src, int64_t src_ld,
                  float* __restrict__ dst, int64_t dst_ld, int64_t runs,
                  float4* __restrict__ zero, int64_t zero_words) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  const int64_t runs_per_row = dst_ld / 4;
  const int64_t first = blockIdx.x * int64_t{kRuns * kThreads} + threadIdx.x;
  float values[kRuns][4];
#pragma unroll
  for (int r = 0; r < kRuns; ++r) {
    const int64_t i = first + r * kThreads;
    const int64_t row = i / runs_per_row;
    const int64_t col = (i - row * runs_per_row) * 4;
    const float* in = src + row * src_ld + col;
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      values[r][q] = i < runs && col + q < cols ? in[q] : 0.0f;
    }
  }
#pragma unroll
  for (int r = 0; r < kRuns; ++r) {
    const int64_t i = first + r * kThreads;
    if (i < runs) {  // run i of dst starts at element 4 i (dst_ld = 4 runs)
      reinterpret_cast<float4*>(dst)[i] =
          make_float4(values[r][0], values[r][1], values[r][2], values[r][3]);
    } else if (i - runs < zero_words) {
      zero[i - runs] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
  }
}

// dst = src for matrices of cols columns, `rows` rows each, with rows src_ld
// elements apart in src (a multiple of 4, src 16-byte aligned; the matrices
// one after another) and dst_ld in dst (the matrices `stride` apart): the way
// back of PadRowsKernel. A block covers kThreads runs of 4 elements of one row
// (`segments` blocks per row); each thread reads one 16-byte run and stores
// its elements inside the matrix one by one.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    UnpadRowsKernel(int64_t cols, const float* __restrict__ src, int64_t src_ld,
                    float* __restrict__ dst, int64_t dst_ld, int64_t rows,
                    int64_t stride, int64_t segments) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  const int64_t row = blockIdx.x / segments;
  const int64_t col = (blockIdx.x % segments * kThreads + threadIdx.x) * 4;
  if (col >= cols) return;
  const float4 run = *reinterpret_cast<const float4*>(src + row * src_ld + col);
  const float values[4] = {run.x, run.y, run.z, run.w};
  // Where the matrices follow one another in dst too, without a division.
  const int64_t dst_row = stride == rows * dst_ld
                              ? row * dst_ld
                              : row / rows * stride + row % rows * dst_ld;
  float* out = dst + dst_row + col;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    if (col + q < cols) out[q] = values[q];
  }
}

// Zeros `floats` floats at out + i * stride for each of the problems i: a
// block kRuns x kThreads of one problem's, `blocks_each` blocks a problem,
// each store instruction a warp's 32 consecutive floats.
template <int kThreads, int kRuns>
__global__ void __launch_bounds__(kThreads)
    ZeroKernel(float* __restrict__ out, int64_t floats, int64_t stride,
               int64_t blocks_each) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  out += blockIdx.x / blocks_each * stride;
  const int64_t first =
      blockIdx.x % blocks_each * int64_t{kRuns * kThreads} + threadIdx.x;
#pragma unroll
  for (int r = 0; r < kRuns; ++r) {
    const int64_t i = first + r * kThreads;
    if (i < floats) out[i] = 0.0f;
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_PAD_ROWS_CUH_
