// Small-tile SGEMM for many problems in one launch: same-shape batches of
// small matrices (several problems per block) and grouped problems of mixed
// shapes (a problem table on the device).
#ifndef MATSERVE_KERNELS_SGEMM_SMALL_TILE_CUH_
#define MATSERVE_KERNELS_SGEMM_SMALL_TILE_CUH_

#include <cstdint>

#include "kernels/kernels.h"

namespace matserve::kernels {

// A kTile x kTile tile of C is computed by (kTile / kThreadTile)^2 threads,
// each a kThreadTile x kThreadTile block of it, stepping along K by kBlockK.
// A 256-thread block holds as many such tiles (of different problems) as fit:
// a 16 x 16 problem is too small to give a whole block work, and blocks per
// SM are capped, so four of them share one.
template <int kTile_, int kThreadTile_, int kBlockK_>
struct SmallTileShape {
  static constexpr int kTile = kTile_;
  static constexpr int kThreadTile = kThreadTile_;
  static constexpr int kBlockK = kBlockK_;
  static constexpr int kThreads = 256;
  static constexpr int kSide = kTile / kThreadTile;  // threads along a side
  static constexpr int kThreadsPerTile = kSide * kSide;
  static constexpr int kTilesPerBlock = kThreads / kThreadsPerTile;
  // 16-byte runs of a K step's A (kTile x kBlockK) and B (kBlockK x kTile)
  // that each thread loads.
  static constexpr int kRuns = kTile * kBlockK / 4 / kThreadsPerTile;
  static_assert(kThreads % kThreadsPerTile == 0, "whole tiles per block");
  static_assert(kRuns >= 1 && kTile * kBlockK % (4 * kThreadsPerTile) == 0,
                "each thread loads whole 4-element runs");
  static_assert(kThreadTile == 2 || kThreadTile == 4,
                "a thread's row of C is one 8- or 16-byte access");

  // A is stored as loaded (row-major) with each row padded by 4 words: the
  // rows a warp reads at one K step then start in different banks and stay
  // 16-byte aligned for float4 reads.
  struct Storage {
    __align__(16) float a[kTile][kBlockK + 4];
    __align__(16) float b[kBlockK][kTile];
  };
};

template <int kWidth>
struct Vector;
template <>
struct Vector<2> {
  using Type = float2;
};
template <>
struct Vector<4> {
  using Type = float4;
};

// Computes the tile of C at (row0, col0) of one m x n x k problem as the
// thread numbered `t` of the tile's kThreadsPerTile. Every thread of the
// block must call it with the same k (it has block-wide barriers).
//
// kVectorized: K % 4 == 0, N % 4 == 0 and A, B, C 16-byte aligned, so a run
// of 4 elements along K (A) or N (B) is wholly inside or outside the matrix.
// Out-of-range elements are staged as zero; A's and B's K-edges coincide, so
// a padding zero only meets another padding zero or an output never stored.
template <typename S, bool kVectorized>
__device__ void SmallTileGemm(int64_t m, int64_t n, int64_t k,
                              const float* __restrict__ a,
                              const float* __restrict__ b,
                              float* __restrict__ c, int64_t row0, int64_t col0,
                              int t, typename S::Storage& storage) {
  constexpr int kT = S::kThreadTile;
  using VectorT = typename Vector<kT>::Type;
  const int ty = t / S::kSide;
  const int tx = t % S::kSide;

  // Loads 4 elements of `matrix` (cols wide) at (row, col..col+3).
  auto load_run = [](const float* matrix, int64_t rows, int64_t cols,
                     int64_t row, int64_t col, float* run) {
    if constexpr (kVectorized) {
      const float4 v =
          row < rows && col < cols
              ? *reinterpret_cast<const float4*>(&matrix[row * cols + col])
              : make_float4(0, 0, 0, 0);
      run[0] = v.x, run[1] = v.y, run[2] = v.z, run[3] = v.w;
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        run[q] =
            row < rows && col + q < cols ? matrix[row * cols + col + q] : 0.0f;
      }
    }
  };

  float acc[kT][kT] = {};
  for (int64_t k0 = 0; k0 < k; k0 += S::kBlockK) {
    // All of this step's global loads are issued before the barrier.
    float a_runs[S::kRuns][4];
    float b_runs[S::kRuns][4];
#pragma unroll
    for (int s = 0; s < S::kRuns; ++s) {
      const int run = t + s * S::kThreadsPerTile;
      const int a_row = run / (S::kBlockK / 4);
      const int a_k = run % (S::kBlockK / 4) * 4;
      load_run(a, m, k, row0 + a_row, k0 + a_k, a_runs[s]);
      const int b_k = run / (S::kTile / 4);
      const int b_col = run % (S::kTile / 4) * 4;
      load_run(b, k, n, k0 + b_k, col0 + b_col, b_runs[s]);
    }
    __syncthreads();  // the previous step's reads are done: overwrite
#pragma unroll
    for (int s = 0; s < S::kRuns; ++s) {
      const int run = t + s * S::kThreadsPerTile;
      const float* va = a_runs[s];
      const float* vb = b_runs[s];
      *reinterpret_cast<float4*>(
          &storage.a[run / (S::kBlockK / 4)][run % (S::kBlockK / 4) * 4]) =
          make_float4(va[0], va[1], va[2], va[3]);
      *reinterpret_cast<float4*>(
          &storage.b[run / (S::kTile / 4)][run % (S::kTile / 4) * 4]) =
          make_float4(vb[0], vb[1], vb[2], vb[3]);
    }
    __syncthreads();  // the step is complete before anyone reads it

#pragma unroll
    for (int kk = 0; kk < S::kBlockK; kk += 4) {
      float a_frag[kT][4];
#pragma unroll
      for (int i = 0; i < kT; ++i) {
        const float4 v =
            *reinterpret_cast<const float4*>(&storage.a[ty * kT + i][kk]);
        a_frag[i][0] = v.x, a_frag[i][1] = v.y, a_frag[i][2] = v.z,
        a_frag[i][3] = v.w;
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const VectorT vb =
            *reinterpret_cast<const VectorT*>(&storage.b[kk + q][tx * kT]);
        const float* b_frag = reinterpret_cast<const float*>(&vb);
#pragma unroll
        for (int i = 0; i < kT; ++i) {
#pragma unroll
          for (int j = 0; j < kT; ++j)
            acc[i][j] = fmaf(a_frag[i][q], b_frag[j], acc[i][j]);
        }
      }
    }
  }

  const int64_t col = col0 + tx * kT;
#pragma unroll
  for (int i = 0; i < kT; ++i) {
    const int64_t row = row0 + ty * kT + i;
    if (row >= m) continue;
    if constexpr (kVectorized) {
      if (col < n)
        *reinterpret_cast<VectorT*>(&c[row * n + col]) =
            *reinterpret_cast<const VectorT*>(acc[i]);
    } else {
#pragma unroll
      for (int j = 0; j < kT; ++j) {
        if (col + j < n) c[row * n + col + j] = acc[i][j];
      }
    }
  }
}

// C_i = A_i * B_i for i < batch (A_i = a + i * stride_a, and so on). Block x
// takes tile x % tiles_per_problem of kTilesPerBlock consecutive problems;
// threads past the last problem stage zeros and store nothing, but still
// reach every barrier.
template <typename S, bool kVectorized>
__global__ void __launch_bounds__(S::kThreads)
    SgemmSmallTileBatchedKernel(int64_t m, int64_t n, int64_t k,
                                const float* __restrict__ a, int64_t stride_a,
                                const float* __restrict__ b, int64_t stride_b,
                                float* __restrict__ c, int64_t stride_c,
                                int64_t batch, int64_t tiles_n,
                                int64_t tiles_per_problem) {
  __shared__ typename S::Storage storage[S::kTilesPerBlock];
  const int slot = threadIdx.x / S::kThreadsPerTile;
  const int64_t problem =
      blockIdx.x / tiles_per_problem * S::kTilesPerBlock + slot;
  const int64_t tile = blockIdx.x % tiles_per_problem;
  // A problem past the batch computes on an empty (0 x 0) matrix.
  const bool real = problem < batch;
  const int64_t offset = real ? problem : 0;
  SmallTileGemm<S, kVectorized>(
      real ? m : 0, real ? n : 0, k, a + offset * stride_a,
      b + offset * stride_b, c + offset * stride_c, tile / tiles_n * S::kTile,
      tile % tiles_n * S::kTile, threadIdx.x % S::kThreadsPerTile,
      storage[slot]);
}

// One launch for problems of different shapes: block x finds, by binary
// search of the table's first_tile, the problem whose tiles include x. A
// problem's alignment decides its path, so each block branches once,
// uniformly.
template <typename S>
__global__ void __launch_bounds__(S::kThreads)
    SgemmGroupedKernel(const GroupedGemmEntry* __restrict__ entries,
                       int64_t count) {
  static_assert(S::kTilesPerBlock == 1, "one tile of one problem per block");
  __shared__ typename S::Storage storage;
  int64_t low = 0, high = count - 1;  // the last entry with first_tile <= x
  while (low < high) {
    const int64_t mid = (low + high + 1) / 2;
    if (entries[mid].first_tile <= blockIdx.x) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  const GroupedGemmEntry entry = entries[low];
  const GemmProblem& p = entry.problem;
  const int64_t tiles_n = (p.n + S::kTile - 1) / S::kTile;
  const int64_t tile = blockIdx.x - entry.first_tile;
  const int64_t row0 = tile / tiles_n * S::kTile;
  const int64_t col0 = tile % tiles_n * S::kTile;
  if (entry.vectorized) {
    SmallTileGemm<S, true>(p.m, p.n, p.k, p.a, p.b, p.c, row0, col0,
                           threadIdx.x, storage);
  } else {
    SmallTileGemm<S, false>(p.m, p.n, p.k, p.a, p.b, p.c, row0, col0,
                            threadIdx.x, storage);
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_SMALL_TILE_CUH_
