// A narrow strip of C, the columns past a warp-tiled product's last whole
// tile column, where a tile of its own would compute mostly padding: each
// warp takes rows of A and reduces along K across its lanes. It waits for the
// kernel before it in the stream (grid_dependency.cuh) before touching memory.
#ifndef MATSERVE_KERNELS_SGEMM_STRIP_CUH_
#define MATSERVE_KERNELS_SGEMM_STRIP_CUH_

#include <cstdint>

#include "kernels/copy_async.cuh"
#include "kernels/fast_divisor.cuh"
#include "kernels/grid_dependency.cuh"

namespace matserve::kernels {

// Strips of up to kMaxWidth columns: blocks of kWarps warps, kRowsPerWarp
// rows of A a warp, B staged kChunkK rows of K at a time.
template <int kMaxWidth_>
struct StripShape {
  static constexpr int kMaxWidth = kMaxWidth_;
  static constexpr int kWarps = 8;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRowsPerWarp = 2;
  static constexpr int kRows = kWarps * kRowsPerWarp;  // of a block
  static constexpr int kChunkK = 256;
  static constexpr int kMinBlocksPerSm = 3;  // launch bounds
  // B's chunk is staged transposed, a row of kChunkK per column of the strip
  // (16-byte rows: a lane reads 4 consecutive K of a column at once).
  static constexpr int kPitch = kChunkK + 4;
};

// C[:, 0, width) += A * B[:, 0, width) for a strip of width <= kMaxWidth
// columns (width_d divides by it; b and c point at its first column), C
// holding zeros or partial
// sums beforehand. A is m x k with rows lda apart; A's rows start on 16 bytes
// (lda a multiple of 4, a 16-byte aligned). Block x takes kRows rows of A,
// (x % row_blocks) * kRows on, and K [s, s + 1) * k_per_split for s = x /
// row_blocks (k_per_split a multiple of kChunkK). Lane l of a warp multiplies
// the 4 K indices from 4 l of every 128 and the warp sums its lanes' parts:
// outputs are added with atomics, so splits of K may run at once.
template <typename S>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmStripKernel(int64_t m, FastDivisor width_d, int64_t k,
                     const float* __restrict__ a, int64_t lda,
                     const float* __restrict__ b, int64_t ldb,
                     float* __restrict__ c, int64_t ldc, int64_t k_per_split) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  const int width = static_cast<int>(width_d.divisor);
  static_assert(
      S::kChunkK % 128 == 0 && S::kChunkK * S::kMaxWidth % S::kThreads == 0,
      "whole 128s of K per chunk, whole loads per thread");
  __shared__ float4 staged_words[S::kMaxWidth * S::kPitch / 4];
  float* const staged = reinterpret_cast<float*>(staged_words);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int64_t row_blocks = (m + S::kRows - 1) / S::kRows;
  const int64_t first_row =
      blockIdx.x % row_blocks * S::kRows + warp * S::kRowsPerWarp;
  const int64_t k_begin = blockIdx.x / row_blocks * k_per_split;
  const int64_t k_end = k - k_begin < k_per_split ? k : k_begin + k_per_split;

  // A chunk's loads are all issued before any is used (B's elements by
  // cp.async into shared memory, then A's runs), so that a chunk waits for
  // memory once.
  constexpr int kParts = S::kChunkK / 128;
  constexpr int kStaged = S::kChunkK * S::kMaxWidth / S::kThreads;
  float acc[S::kRowsPerWarp][S::kMaxWidth] = {};
  for (int64_t chunk = k_begin; chunk < k_end; chunk += S::kChunkK) {
    __syncthreads();  // the chunk before has been read by all
#pragma unroll
    for (int t = 0; t < kStaged; ++t) {
      const int i = t * S::kThreads + threadIdx.x;
      if (i >= S::kChunkK * width) break;
      const int kk = static_cast<int>(width_d.Divide(i));
      const int j = i - kk * width;
      const bool inside = chunk + kk < k_end;
      CopyAsync4(&staged[j * S::kPitch + kk],
                 inside ? b + (chunk + kk) * ldb + j : b, inside);
    }
    CopyAsyncCommit();
    float4 a_run[kParts][S::kRowsPerWarp];
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
      const int64_t first_k = chunk + part * 128 + 4 * lane;
#pragma unroll
      for (int r = 0; r < S::kRowsPerWarp; ++r) {
        const int64_t row = first_row + r;
        const float* in = a + row * lda + first_k;
        if (row < m && first_k + 4 <= k_end) {
          a_run[part][r] = *reinterpret_cast<const float4*>(in);
        } else {
          float x[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            x[q] = row < m && first_k + q < k_end ? in[q] : 0.0f;
          }
          a_run[part][r] = make_float4(x[0], x[1], x[2], x[3]);
        }
      }
    }
    CopyAsyncWait<0>();
    __syncthreads();
#pragma unroll
    for (int part = 0; part < kParts; ++part) {
#pragma unroll
      for (int j = 0; j < S::kMaxWidth; ++j) {
        if (j >= width) break;
        const float4 b_run = *reinterpret_cast<const float4*>(
            &staged[j * S::kPitch + part * 128 + 4 * lane]);
#pragma unroll
        for (int r = 0; r < S::kRowsPerWarp; ++r) {
          const float4 x = a_run[part][r];
          float sum = acc[r][j];
          sum = fmaf(x.x, b_run.x, sum);
          sum = fmaf(x.y, b_run.y, sum);
          sum = fmaf(x.z, b_run.z, sum);
          acc[r][j] = fmaf(x.w, b_run.w, sum);
        }
      }
    }
  }

#pragma unroll
  for (int r = 0; r < S::kRowsPerWarp; ++r) {
    const int64_t row = first_row + r;
#pragma unroll
    for (int j = 0; j < S::kMaxWidth; ++j) {
      if (j >= width) break;
      float sum = acc[r][j];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      }
      if (lane == j && row < m) atomicAdd(&c[row * ldc + j], sum);
    }
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_STRIP_CUH_
