// Small-tile SGEMM for many problems in one launch: same-shape batches of
// small matrices (several problems per block, blocks streaming through the
// batch) and grouped problems of mixed shapes (a problem table on the
// device), both copying the next K step into shared memory (cp.async) while
// computing the current one.
#ifndef MATSERVE_KERNELS_SGEMM_SMALL_TILE_CUH_
#define MATSERVE_KERNELS_SGEMM_SMALL_TILE_CUH_

#include <cstdint>

#include "kernels/copy_async.cuh"
#include "kernels/float_vector.cuh"
#include "kernels/grid_dependency.cuh"
#include "kernels/grouped_table.cuh"
#include "kernels/kernels.h"

namespace matserve::kernels {

// A kTile x kTile tile of C is computed by (kTile / kThreadTile)^2 threads,
// each a kThreadTile x kThreadTile block of it, stepping along K by kBlockK.
// A 256-thread block holds as many such tiles (of different problems) as fit:
// a 16 x 16 problem is too small to give a whole block work, and blocks per
// SM are capped, so four of them share one.
template <int kTile_, int kThreadTile_, int kBlockK_, int kMinBlocksPerSm_ = 1>
struct SmallTileShape {
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSm_;  // launch bounds
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

// One K step of one tile: where its operands are, and whether it is the
// tile's last step (its result is then stored).
struct TileStep {
  const float* a;
  const float* b;
  float* c;
  int64_t m, n, k;
  int64_t row0, col0, k0;
  bool last;
};

// Issues the copies of a step's A (kTile x kBlockK) and B (kBlockK x kTile)
// into `storage`, as thread `t` of the tile. Out-of-range elements are staged
// as zero; A's and B's K-edges coincide, so a padding zero only meets another
// padding zero or an output that is never stored.
//
// kVectorized: K % 4 == 0, N % 4 == 0 and A, B, C 16-byte aligned, so a run
// of 4 elements along K (A) or N (B) is wholly inside or outside the matrix
// and one 16-byte copy; otherwise each element is copied and checked alone.
template <typename S, bool kVectorized>
__device__ void CopyStepAsync(const TileStep& step, int t,
                              typename S::Storage& storage) {
  auto copy_run = [](float* dst, const float* matrix, int64_t rows,
                     int64_t cols, int64_t row, int64_t col) {
    if constexpr (kVectorized) {
      const bool valid = row < rows && col < cols;
      CopyAsync16(dst, valid ? &matrix[row * cols + col] : matrix,
                  valid ? 16 : 0);
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const bool valid = row < rows && col + q < cols;
        CopyAsync4(dst + q, valid ? &matrix[row * cols + col + q] : matrix,
                   valid);
      }
    }
  };
#pragma unroll
  for (int s = 0; s < S::kRuns; ++s) {
    const int run = t + s * S::kThreadsPerTile;
    const int a_row = run / (S::kBlockK / 4);
    const int a_k = run % (S::kBlockK / 4) * 4;
    copy_run(&storage.a[a_row][a_k], step.a, step.m, step.k, step.row0 + a_row,
             step.k0 + a_k);
    const int b_k = run / (S::kTile / 4);
    const int b_col = run % (S::kTile / 4) * 4;
    copy_run(&storage.b[b_k][b_col], step.b, step.k, step.n, step.k0 + b_k,
             step.col0 + b_col);
  }
}

// acc += this thread's kThreadTile x kThreadTile block of A_step * B_step.
template <typename S>
__device__ void ComputeStep(const typename S::Storage& storage, int t,
                            float (&acc)[S::kThreadTile][S::kThreadTile]) {
  constexpr int kT = S::kThreadTile;
  using VectorT = typename FloatVector<kT>::Type;
  const int ty = t / S::kSide;
  const int tx = t % S::kSide;
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

// Stores the thread's block of the tile, the parts inside C.
template <typename S, bool kVectorized>
__device__ void StoreTile(const float (&acc)[S::kThreadTile][S::kThreadTile],
                          const TileStep& step, int t) {
  constexpr int kT = S::kThreadTile;
  using VectorT = typename FloatVector<kT>::Type;
  const int64_t col = step.col0 + t % S::kSide * kT;
#pragma unroll
  for (int i = 0; i < kT; ++i) {
    const int64_t row = step.row0 + t / S::kSide * kT + i;
    if (row >= step.m) continue;
    if constexpr (kVectorized) {
      if (col < step.n) {
        *reinterpret_cast<VectorT*>(&step.c[row * step.n + col]) =
            *reinterpret_cast<const VectorT*>(acc[i]);
      }
    } else {
#pragma unroll
      for (int j = 0; j < kT; ++j) {
        if (col + j < step.n) step.c[row * step.n + col + j] = acc[i][j];
      }
    }
  }
}

// Runs steps 0 .. steps-1 (locate(s) says where step s is) as thread `t` of a
// tile, through two shared-memory stages: step s + 1's copies are in flight
// while step s is computed, across tile and problem boundaries alike. Every
// thread of the block must call it with the same `steps` (it has block-wide
// barriers).
template <typename S, bool kVectorized, typename Locate>
__device__ void RunSteps(int64_t steps, const Locate& locate, int t,
                         typename S::Storage* stage0,
                         typename S::Storage* stage1) {
  auto stage = [&](int64_t s) ->
      typename S::Storage& { return s % 2 ? *stage1 : *stage0; };
  float acc[S::kThreadTile][S::kThreadTile] = {};
  if (steps == 0) return;
  TileStep current = locate(0);
  CopyStepAsync<S, kVectorized>(current, t, stage(0));
  CopyAsyncCommit();
  for (int64_t s = 0; s < steps; ++s) {
    TileStep next = current;
    if (s + 1 < steps) {
      next = locate(s + 1);
      CopyStepAsync<S, kVectorized>(next, t, stage(s + 1));
    }
    CopyAsyncCommit();   // possibly empty: one group per step either way
    CopyAsyncWait<1>();  // this thread's copies of step s have landed ...
    __syncthreads();     // ... and everyone else's too
    ComputeStep<S>(stage(s), t, acc);
    if (current.last) {
      StoreTile<S, kVectorized>(acc, current, t);
#pragma unroll
      for (auto& row : acc) {
#pragma unroll
        for (float& value : row) value = 0.0f;
      }
    }
    __syncthreads();  // stage(s) is read by all before step s + 2 refills it
    current = next;
  }
}

// C_i = A_i * B_i for i < batch (A_i = a + i * stride_a, and so on). The
// work items are (kTilesPerBlock consecutive problems, one tile of each);
// block x takes items x, x + gridDim.x, ..., so a grid of what fits on the GPU
// at once streams through the batch with the next step's copies always in
// flight. A slot past the last problem computes on an empty (0 x 0) matrix: it
// copies zeros and stores nothing, but reaches every barrier.
template <typename S, bool kVectorized>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmSmallTileBatchedKernel(int64_t m, int64_t n, int64_t k,
                                const float* __restrict__ a, int64_t stride_a,
                                const float* __restrict__ b, int64_t stride_b,
                                float* __restrict__ c, int64_t stride_c,
                                int64_t batch, int64_t tiles_n,
                                int64_t tiles_per_problem) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  __shared__ typename S::Storage stages[2][S::kTilesPerBlock];
  const int slot = threadIdx.x / S::kThreadsPerTile;
  const int64_t steps_per_tile = (k + S::kBlockK - 1) / S::kBlockK;
  const int64_t items =
      (batch + S::kTilesPerBlock - 1) / S::kTilesPerBlock * tiles_per_problem;
  const int64_t my_items =
      blockIdx.x < items ? (items - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  auto locate = [&](int64_t s) {
    const int64_t item = blockIdx.x + s / steps_per_tile * gridDim.x;
    const int64_t problem = item / tiles_per_problem * S::kTilesPerBlock + slot;
    const int64_t tile = item % tiles_per_problem;
    const bool real = problem < batch;
    const int64_t offset = real ? problem : 0;
    const int64_t k_step = s % steps_per_tile;
    return TileStep{a + offset * stride_a,
                    b + offset * stride_b,
                    c + offset * stride_c,
                    real ? m : 0,
                    real ? n : 0,
                    k,
                    tile / tiles_n * S::kTile,
                    tile % tiles_n * S::kTile,
                    k_step * S::kBlockK,
                    k_step == steps_per_tile - 1};
  };
  RunSteps<S, kVectorized>(my_items * steps_per_tile, locate,
                           threadIdx.x % S::kThreadsPerTile, &stages[0][slot],
                           &stages[1][slot]);
}

// One launch for problems of different shapes: block x finds, by binary
// search of the table's first_tile, the problem whose tiles include x, and
// computes that tile. A problem's alignment decides its path, so each block
// branches once, uniformly.
template <typename S>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmGroupedKernel(const GroupedGemmEntry* __restrict__ entries,
                       int64_t count) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  static_assert(S::kTilesPerBlock == 1, "one tile of one problem per block");
  __shared__ typename S::Storage stages[2];
  const GroupedGemmEntry entry = GroupedEntryOf(entries, count, blockIdx.x);
  const GemmProblem& p = entry.problem;
  const int64_t tiles_n = (p.n + S::kTile - 1) / S::kTile;
  const int64_t tile = blockIdx.x - entry.first_tile;
  const int64_t steps = (p.k + S::kBlockK - 1) / S::kBlockK;
  auto locate = [&](int64_t s) {
    return TileStep{p.a,
                    p.b,
                    p.c,
                    p.m,
                    p.n,
                    p.k,
                    tile / tiles_n * S::kTile,
                    tile % tiles_n * S::kTile,
                    s * S::kBlockK,
                    s == steps - 1};
  };
  if (entry.vectorized) {
    RunSteps<S, true>(steps, locate, threadIdx.x, &stages[0], &stages[1]);
  } else {
    RunSteps<S, false>(steps, locate, threadIdx.x, &stages[0], &stages[1]);
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_SMALL_TILE_CUH_
