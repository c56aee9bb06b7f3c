// Narrow strips of C past a warp-tiled product's last whole tile column or
// row, where tiles of their own would compute mostly padding. Both read one
// operand whole and little of the other, so they are bound by memory: they
// stage the small operand in shared memory once per slice of K and keep many
// loads of the large one in flight, each warp's 128 contiguous bytes. In a
// column strip each warp takes rows of A and reduces along K across its
// lanes; in a row strip each lane takes a column of B and each warp a part of
// K. Measured on an H200 against the strips before (a chunk of K staged and
// read at a time, blocks placed by 64-bit divisions, row strips of 128
// columns a block; ms, docs/benchmarks.md, session 48): 577^3 x 50 0.5557
// against 0.5794, 449^3 x 44 0.2566 against 0.2793, 321^3 x 122 0.2723
// against 0.3073, 129x4096x129 x 100 0.4434 against 0.5394, 1025^3 x 4 0.2145
// against 0.2270; alone, 577^3 x 50's column strip 26.7 us (with 64-bit K
// counters) against 34.9 and its row strip 22.8 against 36.9. 1100x4000x527's
// 15 columns lost 2% (0.1297 against 0.1272): those strips take two blocks to
// an SM, as they spill at three. Slower alone: a step's loads issued during the
// step before (fewer blocks to an SM), blocks over several rows' groups that
// reuse B's slice (fewer blocks), row strips of 32 columns and 8 warps.
// A column strip's warp adds up its sums by a butterfly that scatters them
// over the lanes (WarpSumScatter: 31 exchanges for 2 rows of 16 columns, where
// 5 a sum took 160, about as many instructions as two steps of its loop).
// Measured on an H200 against 5 exchanges a sum (ms, docs/benchmarks.md,
// session 50): 1100x4000x527 (15 columns) 0.1253 against 0.1296,
// 1024x1024x1030 0.0614 against 0.0628, 1000x3000x777 0.1206 against 0.1221;
// batches cut at 16 columns, 256x256x272 x 200 0.2037 against 0.2348, and 14,
// 258x300x270 x 200 0.2899 against 0.3197; even with one column (577^3 x 50,
// 129x4096x129 x 100). More loads in flight a lane (8 in the wider strips),
// or a slice's first loads issued before B's slice lands, measured within 1%.
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
#include "kernels/fast_divisor.cuh"
#include "kernels/grid_dependency.cuh"

namespace matserve::kernels {

// Strips of up to kRuns runs of 4 columns: blocks of kWarps warps,
// kRowsPerWarp rows of A a warp, kLoads of each row's elements in flight a
// lane (a step of kStep along K), B staged kSliceK rows of K at a time.
template <int kRuns_>
struct StripShape {
  static constexpr int kRuns = kRuns_;
  static constexpr int kWidth = 4 * kRuns;  // columns computed, padding too
  static constexpr int kWarps = 8;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kRowsPerWarp = 2;
  static constexpr int kRows = kWarps * kRowsPerWarp;  // of a block
  // The wider strips' accumulators leave registers for fewer loads.
  static constexpr int kLoads = kRuns == 1 ? 8 : 4;
  static constexpr int kStep = 32 * kLoads;
  // B's slice is staged as it lies, a row of K in an odd number of 16-byte
  // units: the lanes of a warp read consecutive rows, which then fall in
  // distinct banks. 16 KB of it for the narrowest strips, 12 to 20 KB else.
  static constexpr int kPitch = 4 * (kRuns | 1);
  static constexpr int kSliceK = kRuns == 1 ? 1024 : 256;
  // Launch bounds: as many blocks as fit without spilling (the 16-wide
  // strips' 32 accumulators a thread spill at three).
  static constexpr int kMinBlocksPerSm = kRuns == 1 ? 5 : kRuns == 4 ? 2 : 3;
  static_assert(kRuns >= 1 && kRuns <= 4, "a strip of 1 to 16 columns");
  static_assert(kSliceK % kStep == 0 && kSliceK * kRuns % kThreads == 0,
                "whole steps a slice, whole copies per thread");
};

// Adds up kCount sums that each lane of a warp holds a part of, in a
// butterfly over lane offsets kOffset, kOffset / 2, ... 1: while a lane holds
// more than one, each exchange halves them (the lanes whose offset bit is set
// keeping the upper half, and adding the other lane's part of it), then the
// one left is added whole. Lane l returns sum l / (32 / kCount) (kCount a
// power of 2 up to 32, kOffset 16), in kCount - 1 + 5 - log2(kCount)
// exchanges rather than 5 a sum.
template <int kCount, int kOffset>
__device__ inline float WarpSumScatter(float* sums, int lane) {
  if constexpr (kOffset == 0) {
    return sums[0];
  } else if constexpr (kCount == 1) {
    sums[0] += __shfl_xor_sync(0xffffffffu, sums[0], kOffset);
    return WarpSumScatter<1, kOffset / 2>(sums, lane);
  } else {
    constexpr int kHeld = kCount / 2;
    const bool upper = lane & kOffset;
#pragma unroll
    for (int i = 0; i < kHeld; ++i) {
      const float sent = upper ? sums[i] : sums[i + kHeld];
      const float kept = upper ? sums[i + kHeld] : sums[i];
      sums[i] = kept + __shfl_xor_sync(0xffffffffu, sent, kOffset);
    }
    return WarpSumScatter<kHeld, kOffset / 2>(sums, lane);
  }
}

// C[:, 0, width) = A * B[:, 0, width) for a strip of width <= S::kWidth
// columns (b and c point at its first column) of each problem of a strided
// batch (problem i's A at a + i * stride_a, and so on). A is m x k with rows
// lda apart. kVectorB: B's rows start on 16 bytes, so its runs of 4 are
// staged by 16-byte copies. Block x takes problem x / (row_blocks * splits),
// and in it kRows rows of A, (x % row_blocks) * kRows on, and K [s, s + 1) *
// k_per_split for s = x / row_blocks % splits (k_per_split a multiple of
// kStep). Lane l of a warp multiplies K indices l, l + 32, l + 64, ... and the
// warp sums its lanes' parts (WarpSumScatter). Where K splits, the parts are
// added into C with atomics (C holding zeros beforehand), so that they may run
// at once; else they are stored.
template <typename S, bool kVectorB>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmStripKernel(int64_t m, int width, int64_t k,
                     const float* __restrict__ a, int64_t lda, int64_t stride_a,
                     const float* __restrict__ b, int64_t ldb, int64_t stride_b,
                     float* __restrict__ c, int64_t ldc, int64_t stride_c,
                     int64_t k_per_split, FastDivisor row_blocks,
                     FastDivisor splits) {
  AllowDependentLaunch();
  __shared__ float4 staged_words[S::kSliceK * S::kPitch / 4];
  float* const staged = reinterpret_cast<float*>(staged_words);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const uint32_t slot = row_blocks.Divide(blockIdx.x);
  const uint32_t problem = splits.Divide(slot);
  a += problem * stride_a;
  b += problem * stride_b;
  c += problem * stride_c;
  const int64_t first_row =
      (blockIdx.x - slot * row_blocks.divisor) * int64_t{S::kRows} +
      warp * S::kRowsPerWarp;
  const int64_t k_begin = (slot - problem * splits.divisor) * k_per_split;
  const int64_t k_end = k - k_begin < k_per_split ? k : k_begin + k_per_split;
  // Rows past m read row 0 in place of theirs, and their sums are dropped.
  const float* rows[S::kRowsPerWarp];
#pragma unroll
  for (int r = 0; r < S::kRowsPerWarp; ++r) {
    rows[r] = a + (first_row + r < m ? first_row + r : 0) * lda + lane;
  }

  float acc[S::kRowsPerWarp][S::kWidth] = {};
  for (int64_t slice = k_begin; slice < k_end; slice += S::kSliceK) {
    // K indices from the slice's first: its length, and the rows staged,
    // only the strip's columns and up to the last whole step, zeros past K
    // (sums past the width are never stored).
    const int length = static_cast<int>(
        k_end - slice < S::kSliceK ? k_end - slice : S::kSliceK);
    const int staged_rows = (length + S::kStep - 1) / S::kStep * S::kStep;
    const float* const b_slice = b + slice * ldb;
    __syncthreads();  // the slice before has been read by all
#pragma unroll
    for (int t = 0; t < S::kSliceK * S::kRuns / S::kThreads; ++t) {
      const int i = t * S::kThreads + threadIdx.x;
      const int kk = i / S::kRuns;
      const int col = i % S::kRuns * 4;
      if (kk >= staged_rows || col >= width) continue;
      const bool in_k = kk < length;
      const float* src = in_k ? b_slice + kk * ldb + col : b;
      float* dst = &staged[kk * S::kPitch + col];
      if constexpr (kVectorB) {
        CopyAsync16(dst, src, in_k ? 4 * min(width - col, 4) : 0);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          if (q < width - col) CopyAsync4(dst + q, src + q, in_k);
        }
      }
    }
    CopyAsyncCommit();
    CopyAsyncWait<0>();
    __syncthreads();

    for (int step = 0; step < length; step += S::kStep) {
      float part[S::kLoads][S::kRowsPerWarp];
#pragma unroll
      for (int q = 0; q < S::kLoads; ++q) {
        const bool inside = step + 32 * q + lane < length;
#pragma unroll
        for (int r = 0; r < S::kRowsPerWarp; ++r) {
          part[q][r] = inside ? __ldcg(rows[r] + slice + step + 32 * q) : 0.0f;
        }
      }
#pragma unroll
      for (int q = 0; q < S::kLoads; ++q) {
        const float* b_row = &staged[(step + 32 * q + lane) * S::kPitch];
#pragma unroll
        for (int run = 0; run < S::kRuns; ++run) {
          const float4 b_run =
              *reinterpret_cast<const float4*>(b_row + 4 * run);
#pragma unroll
          for (int r = 0; r < S::kRowsPerWarp; ++r) {
            float* out = &acc[r][4 * run];
            out[0] = fmaf(part[q][r], b_run.x, out[0]);
            out[1] = fmaf(part[q][r], b_run.y, out[1]);
            out[2] = fmaf(part[q][r], b_run.z, out[2]);
            out[3] = fmaf(part[q][r], b_run.w, out[3]);
          }
        }
      }
    }
  }

  // The warp's sums, each row's padded to kSpan columns (a power of 2), and
  // how many lanes WarpSumScatter leaves each on.
  constexpr int kSpan = S::kWidth <= 4 ? 4 : S::kWidth <= 8 ? 8 : 16;
  constexpr int kSums = S::kRowsPerWarp * kSpan;
  constexpr int kLanesPerSum = 32 / kSums;
  static_assert(kSums == 8 || kSums == 16 || kSums == 32, "a butterfly");
  float sums[kSums];
#pragma unroll
  for (int r = 0; r < S::kRowsPerWarp; ++r) {
#pragma unroll
    for (int j = 0; j < kSpan; ++j) {
      sums[r * kSpan + j] = j < S::kWidth ? acc[r][j] : 0.0f;
    }
  }
  const float total = WarpSumScatter<kSums, 16>(sums, lane);
  const int sum = lane / kLanesPerSum;
  const int j = sum % kSpan;
  const int64_t row = first_row + sum / kSpan;
  if (lane % kLanesPerSum == 0 && j < width && row < m) {
    if (splits.divisor > 1) {
      atomicAdd(&c[row * ldc + j], total);
    } else {
      c[row * ldc + j] = total;
    }
  }
  WaitForPriorGrid();
}

// Row strips of up to kHeight rows: blocks of kWarps warps over kCols
// columns of C, kLaneCols a lane 32 apart, kLoads of B's rows in flight a
// lane, A staged kSliceK columns at a time.
struct RowStripShape {
  static constexpr int kHeight = 4;
  static constexpr int kWarps = 16;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kLaneCols = 2;
  static constexpr int kCols = 32 * kLaneCols;
  static constexpr int kLoads = 8;
  static constexpr int kStride = kWarps * kLoads;  // K a round of steps
  static constexpr int kSliceK = 1024;             // 16 KB of A
  static constexpr int kMinBlocksPerSm = 2;        // launch bounds
  static_assert(kHeight == 4, "A's column of a slice is one float4");
  static_assert(kSliceK % kStride == 0, "whole rounds a slice");
};

// C[0, height) = A[0, height) * B for a strip of height <= S::kHeight rows
// (a and c point at its first row) of each problem of a strided batch; B is
// k x n, rows ldb apart. Block x takes problem x / col_blocks and in it
// columns (x % col_blocks) * kCols on, lane l columns l, l + 32, ..., so that
// a warp's load of a row of B is 128 contiguous bytes. A's slice is staged
// column by column, a float4 of its rows that the lanes read at one address.
// Warp w takes K indices [w, w + 1) * kLoads of each kStride along the slice,
// its first loads issued before A's slice has landed; the warps' parts are
// summed in shared memory and stored.
template <typename S>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmRowStripKernel(int height, int64_t n, int64_t k,
                        const float* __restrict__ a, int64_t lda,
                        int64_t stride_a, const float* __restrict__ b,
                        int64_t ldb, int64_t stride_b, float* __restrict__ c,
                        int64_t ldc, int64_t stride_c, FastDivisor col_blocks) {
  AllowDependentLaunch();
  __shared__ float4 a_columns[S::kSliceK];
  __shared__ float parts[S::kWarps][S::kHeight][S::kCols];
  float* const a_staged = reinterpret_cast<float*>(a_columns);
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const uint32_t problem = col_blocks.Divide(blockIdx.x);
  const int64_t first_col =
      (blockIdx.x - problem * col_blocks.divisor) * int64_t{S::kCols};
  bool inside[S::kLaneCols];
#pragma unroll
  for (int j = 0; j < S::kLaneCols; ++j) {
    inside[j] = first_col + lane + 32 * j < n;
  }
  a += problem * stride_a;
  b += problem * stride_b + first_col + lane;
  c += problem * stride_c + first_col;

  float acc[S::kHeight][S::kLaneCols] = {};
  for (int64_t slice = 0; slice < k; slice += S::kSliceK) {
    const int64_t slice_end = k - slice < S::kSliceK ? k : slice + S::kSliceK;
    // Only the strip's rows, and the slice's columns up to its last whole
    // round, zeros past K: sums past the height are never stored.
    const int staged_cols =
        static_cast<int>(slice_end - slice + S::kStride - 1) / S::kStride *
        S::kStride;
    __syncthreads();  // the slice before has been read by all
#pragma unroll
    for (int t = 0; t < S::kSliceK * S::kHeight / S::kThreads; ++t) {
      const int i = t * S::kThreads + threadIdx.x;
      const int r = i / S::kSliceK;
      const int kk = i % S::kSliceK;
      if (r >= height || kk >= staged_cols) continue;
      const bool in_k = slice + kk < slice_end;
      CopyAsync4(&a_staged[kk * S::kHeight + r],
                 in_k ? a + r * lda + slice + kk : a, in_k);
    }
    CopyAsyncCommit();

    float run[S::kLoads][S::kLaneCols];
    auto load = [&](int64_t step) {
#pragma unroll
      for (int q = 0; q < S::kLoads; ++q) {
#pragma unroll
        for (int j = 0; j < S::kLaneCols; ++j) {
          run[q][j] = inside[j] && step + q < slice_end
                          ? __ldcg(b + (step + q) * ldb + 32 * j)
                          : 0.0f;
        }
      }
    };
    const int64_t first_step = slice + warp * S::kLoads;
    load(first_step);
    CopyAsyncWait<0>();
    __syncthreads();
    for (int64_t step = first_step; step < slice_end; step += S::kStride) {
#pragma unroll
      for (int q = 0; q < S::kLoads; ++q) {
        const float4 x = a_columns[step - slice + q];
#pragma unroll
        for (int j = 0; j < S::kLaneCols; ++j) {
          acc[0][j] = fmaf(x.x, run[q][j], acc[0][j]);
          acc[1][j] = fmaf(x.y, run[q][j], acc[1][j]);
          acc[2][j] = fmaf(x.z, run[q][j], acc[2][j]);
          acc[3][j] = fmaf(x.w, run[q][j], acc[3][j]);
        }
      }
      if (step + S::kStride < slice_end) load(step + S::kStride);
    }
  }

#pragma unroll
  for (int r = 0; r < S::kHeight; ++r) {
#pragma unroll
    for (int j = 0; j < S::kLaneCols; ++j) {
      parts[warp][r][lane + 32 * j] = acc[r][j];
    }
  }
  __syncthreads();
  for (int e = threadIdx.x; e < height * S::kCols; e += S::kThreads) {
    const int r = e / S::kCols;
    const int col = e % S::kCols;
    if (first_col + col >= n) continue;
    float sum = 0.0f;
#pragma unroll
    for (int w = 0; w < S::kWarps; ++w) sum += parts[w][r][col];
    c[r * ldc + col] = sum;
  }
  WaitForPriorGrid();
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_STRIP_CUH_
