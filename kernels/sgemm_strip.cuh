// A narrow strip of C, the columns past a warp-tiled product's last whole
// tile column, where a tile of its own would compute mostly padding: each
// warp takes rows of A and reduces along K across its lanes.
//
// It runs beside the kernel before it in the stream, the warp-tiled product of
// C's other columns, whose output it neither reads nor writes: it lets the
// next grid launch at once (grid_dependency.cuh) but waits for the one before
// only at its end, so that its own end still marks that kernel's end. What it
// reads (A, B, and the zeros in C it adds to) was written before that kernel's
// blocks passed their own wait, so before this grid was launched at all.
#ifndef MATSERVE_KERNELS_SGEMM_STRIP_CUH_
#define MATSERVE_KERNELS_SGEMM_STRIP_CUH_

#include <cstdint>

#include "kernels/copy_async.cuh"
#include "kernels/grid_dependency.cuh"

namespace matserve::kernels {

// Strips of up to kRuns runs of 4 columns: blocks of kWarps warps,
// kRowsPerWarp rows of A a warp, B staged kChunkK rows of K at a time.
template <int kRuns_>
struct StripShape {
  static constexpr int kRuns = kRuns_;
  static constexpr int kWidth = 4 * kRuns;  // columns computed, padding too
  static constexpr int kWarps = 8;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRowsPerWarp = 2;
  static constexpr int kRows = kWarps * kRowsPerWarp;  // of a block
  // The widest strips' accumulators leave registers for half a chunk: with
  // 256 K a chunk they spilled at three blocks per SM.
  static constexpr int kChunkK = kRuns == 4 ? 128 : 256;
  static constexpr int kMinBlocksPerSm = 3;  // launch bounds
  // B's chunk is staged as it lies, a row of K in an odd number of 16-byte
  // units: the lanes of a warp read consecutive rows, which then fall in
  // distinct banks.
  static constexpr int kPitch = 4 * (kRuns | 1);
  static_assert(kRuns >= 1 && kRuns <= 4, "a strip of 1 to 16 columns");
  static_assert(kChunkK % 128 == 0 && kChunkK * kRuns % kThreads == 0,
                "whole 128s of K per chunk, whole copies per thread");
};

// C[:, 0, width) += A * B[:, 0, width) for a strip of width <= S::kWidth
// columns (b and c point at its first column), C holding zeros or partial
// sums beforehand. A is m x k with rows lda apart. kVectorB: B's rows start on
// 16 bytes, so its runs of 4 are staged by 16-byte copies. Block x takes
// kRows rows of A, (x % row_blocks) * kRows on, and K [s, s + 1) *
// k_per_split for s = x / row_blocks (k_per_split a multiple of kChunkK).
// Lane l of a warp multiplies K indices l, l + 32, l + 64, ... of the chunk
// (each load of A is then 128 contiguous bytes a warp) and the warp sums its
// lanes' parts: outputs are added with atomics, so splits of K may run at
// once.
template <typename S, bool kVectorB>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmStripKernel(int64_t m, int width, int64_t k,
                     const float* __restrict__ a, int64_t lda,
                     const float* __restrict__ b, int64_t ldb,
                     float* __restrict__ c, int64_t ldc, int64_t k_per_split) {
  AllowDependentLaunch();
  __shared__ float4 staged_words[S::kChunkK * S::kPitch / 4];
  float* const staged = reinterpret_cast<float*>(staged_words);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int64_t row_blocks = (m + S::kRows - 1) / S::kRows;
  const int64_t first_row =
      blockIdx.x % row_blocks * S::kRows + warp * S::kRowsPerWarp;
  const int64_t k_begin = blockIdx.x / row_blocks * k_per_split;
  const int64_t k_end = k - k_begin < k_per_split ? k : k_begin + k_per_split;

  // A chunk's loads are all issued before any is used (B's runs by cp.async
  // into shared memory, then A's elements), so that a chunk waits for memory
  // once.
  constexpr int kLaneK = S::kChunkK / 32;  // K indices a lane takes per chunk
  constexpr int kStaged = S::kChunkK * S::kRuns / S::kThreads;
  float acc[S::kRowsPerWarp][S::kWidth] = {};
  for (int64_t chunk = k_begin; chunk < k_end; chunk += S::kChunkK) {
    __syncthreads();  // the chunk before has been read by all
#pragma unroll
    for (int t = 0; t < kStaged; ++t) {
      const int i = t * S::kThreads + threadIdx.x;
      const int kk = i / S::kRuns;
      const int col = i % S::kRuns * 4;
      const int left = chunk + kk < k_end ? width - col : 0;
      const int length = left < 0 ? 0 : left > 4 ? 4 : left;
      const float* src = b + (chunk + kk) * ldb + col;
      float* dst = &staged[kk * S::kPitch + col];
      CopyRunAsync<kVectorB>(dst, b, src, length);
    }
    CopyAsyncCommit();
    float a_part[kLaneK][S::kRowsPerWarp];
    const int64_t lane_k = chunk + lane;
#pragma unroll
    for (int r = 0; r < S::kRowsPerWarp; ++r) {
      const bool inside = first_row + r < m;
      const float* in = a + (first_row + r) * lda + lane_k;
#pragma unroll
      for (int q = 0; q < kLaneK; ++q) {
        a_part[q][r] =
            inside && lane_k + 32 * q < k_end ? __ldcg(in + 32 * q) : 0.0f;
      }
    }
    CopyAsyncWait<0>();
    __syncthreads();
#pragma unroll
    for (int q = 0; q < kLaneK; ++q) {
#pragma unroll
      for (int run = 0; run < S::kRuns; ++run) {
        const float4 b_run = *reinterpret_cast<const float4*>(
            &staged[(lane + 32 * q) * S::kPitch + 4 * run]);
#pragma unroll
        for (int r = 0; r < S::kRowsPerWarp; ++r) {
          float* out = &acc[r][4 * run];
          out[0] = fmaf(a_part[q][r], b_run.x, out[0]);
          out[1] = fmaf(a_part[q][r], b_run.y, out[1]);
          out[2] = fmaf(a_part[q][r], b_run.z, out[2]);
          out[3] = fmaf(a_part[q][r], b_run.w, out[3]);
        }
      }
    }
  }

#pragma unroll
  for (int r = 0; r < S::kRowsPerWarp; ++r) {
    const int64_t row = first_row + r;
#pragma unroll
    for (int j = 0; j < S::kWidth; ++j) {
      if (j >= width) break;
      float sum = acc[r][j];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      }
      if (lane == j && row < m) atomicAdd(&c[row * ldc + j], sum);
    }
  }
  WaitForPriorGrid();
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_STRIP_CUH_
