// Narrow strips of C past a warp-tiled product's last whole tile column or
// row, where tiles of their own would compute mostly padding. In a column
// strip each warp takes rows of A and reduces along K across its lanes; in a
// row strip each lane takes a run of 4 columns of B and each warp a part of K.
//
// A strip runs beside the kernels before it in the stream, the warp-tiled
// product of the rest of C (and a column strip beside it), whose output it
// neither reads nor writes: it lets the next grid launch at once
// (grid_dependency.cuh) but waits for the one before only at its end, so that
// its own end still marks their end. What it reads (A, B, and the zeros in C
// it adds to) was written before the product's blocks passed their own wait,
// so before this grid was launched at all.
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

// C[:, 0, width) = A * B[:, 0, width) for a strip of width <= S::kWidth
// columns (b and c point at its first column) of each problem of a strided
// batch (problem i's A at a + i * stride_a, and so on). A is m x k with rows
// lda apart. kVectorB: B's rows start on 16 bytes, so its runs of 4 are
// staged by 16-byte copies. Block x takes problem x / (row_blocks * splits),
// and in it kRows rows of A, (x % row_blocks) * kRows on, and K [s, s + 1) *
// k_per_split for s = x / row_blocks % splits (k_per_split a multiple of
// kChunkK). Lane l of a warp multiplies K indices l, l + 32, l + 64, ... of
// the chunk (each load of A is then 128 contiguous bytes a warp) and the warp
// sums its lanes' parts. Where K splits, the parts are added into C with
// atomics (C holding zeros beforehand), so that they may run at once; else
// they are stored.
template <typename S, bool kVectorB>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmStripKernel(int64_t m, int width, int64_t k,
                     const float* __restrict__ a, int64_t lda, int64_t stride_a,
                     const float* __restrict__ b, int64_t ldb, int64_t stride_b,
                     float* __restrict__ c, int64_t ldc, int64_t stride_c,
                     int64_t k_per_split) {
  AllowDependentLaunch();
  __shared__ float4 staged_words[S::kChunkK * S::kPitch / 4];
  float* const staged = reinterpret_cast<float*>(staged_words);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int64_t row_blocks = (m + S::kRows - 1) / S::kRows;
  const int64_t splits = (k + k_per_split - 1) / k_per_split;
  const int64_t problem = blockIdx.x / (row_blocks * splits);
  a += problem * stride_a;
  b += problem * stride_b;
  c += problem * stride_c;
  const int64_t first_row =
      blockIdx.x % row_blocks * S::kRows + warp * S::kRowsPerWarp;
  const int64_t k_begin = blockIdx.x / row_blocks % splits * k_per_split;
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
      if (lane != j || row >= m) continue;
      if (splits > 1) {
        atomicAdd(&c[row * ldc + j], sum);
      } else {
        c[row * ldc + j] = sum;
      }
    }
  }
  WaitForPriorGrid();
}

// Row strips of up to kHeight rows: blocks of kWarps warps over kCols
// columns of C (a run of 4 a lane), each warp a part of K, with kLoads of B's
// runs in flight a lane.
struct RowStripShape {
  static constexpr int kHeight = 4;
  static constexpr int kWarps = 8;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kCols = 128;
  static constexpr int kLoads = 8;
  static constexpr int kMinBlocksPerSm = 2;  // launch bounds
  static_assert(kCols == 32 * 4, "a run of 4 a lane");
};

// The first `length` (0 to 4) of the 4 floats at global `src`, and zeros for
// the rest, reading nothing for them: one 16-byte load where kVector (src on
// 16 bytes) and the run is whole.
template <bool kVector>
__device__ inline float4 LoadRun(const float* src, int length) {
  if (kVector && length == 4) {
    return __ldcg(reinterpret_cast<const float4*>(src));
  }
  float v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) v[j] = j < length ? __ldcg(src + j) : 0.0f;
  return make_float4(v[0], v[1], v[2], v[3]);
}

// C[0, height) = A[0, height) * B for a strip of height <= S::kHeight rows
// (a and c point at its first row) of each problem of a strided batch; B is
// k x n, rows ldb apart. Block x takes problem x / col_blocks and in it
// columns (x % col_blocks) * kCols on; warp w takes K [w, w + 1) * k_per_warp
// (a multiple of 32), each lane a run of 4 columns of B's rows (read as one
// 16-byte load where kVectorB: B's rows start on 16 bytes). Each lane reads
// A's rows at 32 consecutive K (128 bytes a warp) and the warp hands them
// round by shuffles. The warps' parts are summed in shared memory and stored.
template <typename S, bool kVectorB>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmRowStripKernel(int height, int64_t n, int64_t k,
                        const float* __restrict__ a, int64_t lda,
                        int64_t stride_a, const float* __restrict__ b,
                        int64_t ldb, int64_t stride_b, float* __restrict__ c,
                        int64_t ldc, int64_t stride_c, int64_t col_blocks) {
  AllowDependentLaunch();
  __shared__ float4 parts[S::kWarps * S::kHeight * S::kCols / 4];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int64_t problem = blockIdx.x / col_blocks;
  const int64_t first_col = blockIdx.x % col_blocks * S::kCols;
  a += problem * stride_a;
  b += problem * stride_b + first_col + lane * 4;
  c += problem * stride_c + first_col;
  const int64_t k_per_warp = (k + 32 * S::kWarps - 1) / (32 * S::kWarps) * 32;
  const int64_t k_begin = warp * k_per_warp;
  const int64_t k_end = k - k_begin < k_per_warp ? k : k_begin + k_per_warp;
  const int64_t left = n - first_col - lane * 4;
  const int length = left < 0 ? 0 : left > 4 ? 4 : static_cast<int>(left);

  float acc[S::kHeight][4] = {};
  for (int64_t chunk = k_begin; chunk < k_end; chunk += 32) {
    float a_lane[S::kHeight];
#pragma unroll
    for (int r = 0; r < S::kHeight; ++r) {
      a_lane[r] = r < height && chunk + lane < k_end
                      ? __ldcg(a + r * lda + chunk + lane)
                      : 0.0f;
    }
#pragma unroll 1
    for (int g = 0; g < 32; g += S::kLoads) {
      float4 run[S::kLoads];
#pragma unroll
      for (int q = 0; q < S::kLoads; ++q) {
        const int64_t kk = chunk + g + q;
        run[q] = kk < k_end ? LoadRun<kVectorB>(b + kk * ldb, length)
                            : make_float4(0, 0, 0, 0);
      }
#pragma unroll
      for (int q = 0; q < S::kLoads; ++q) {
#pragma unroll
        for (int r = 0; r < S::kHeight; ++r) {
          const float x = __shfl_sync(0xffffffffu, a_lane[r], g + q);
          acc[r][0] = fmaf(x, run[q].x, acc[r][0]);
          acc[r][1] = fmaf(x, run[q].y, acc[r][1]);
          acc[r][2] = fmaf(x, run[q].z, acc[r][2]);
          acc[r][3] = fmaf(x, run[q].w, acc[r][3]);
        }
      }
    }
  }

#pragma unroll
  for (int r = 0; r < S::kHeight; ++r) {
    parts[(warp * S::kHeight + r) * (S::kCols / 4) + lane] =
        make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
  }
  __syncthreads();
  const float* sums = reinterpret_cast<const float*>(parts);
  for (int e = threadIdx.x; e < height * S::kCols; e += S::kThreads) {
    const int r = e / S::kCols;
    const int col = e % S::kCols;
    if (first_col + col >= n) continue;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < S::kWarps; ++w) {
      sum += sums[(w * S::kHeight + r) * S::kCols + col];
    }
    c[r * ldc + col] = sum;
  }
  WaitForPriorGrid();
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_STRIP_CUH_
