// Per-warp SGEMM for batches of problems up to 32 x 32 of C: each warp
// computes whole problems on its own, through a ring of shared-memory stages
// of its own that cp.async fills several K steps (and problems) ahead. No
// block-wide barrier ever holds a warp back.
#ifndef MATSERVE_KERNELS_SGEMM_PER_WARP_CUH_
#define MATSERVE_KERNELS_SGEMM_PER_WARP_CUH_

#include <cstdint>

#include "kernels/copy_async.cuh"
#include "kernels/grid_dependency.cuh"

namespace matserve::kernels {

// A warp computes a kTile x kTile C in steps of kBlockK along K, kStages steps
// in its ring (kStages - 1 in flight while one is computed); a block holds
// kWarps such warps. Lane l computes rows l / 8 + 4 i (i < 8) and columns
// l % 8 * 4 .. + 3 of C.
template <int kBlockK_, int kStages_, int kWarps_, int kMinBlocksPerSm_>
struct PerWarpShape {
  static constexpr int kTile = 32;
  static constexpr int kBlockK = kBlockK_;
  static constexpr int kStages = kStages_;
  static constexpr int kWarps = kWarps_;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSm_;

  // A is staged as it lies in memory, its rows padded to an odd number of
  // 16-byte units so that the four rows a warp reads at once lie in
  // different banks.
  static constexpr int kPitchA = kBlockK + 4;
  static constexpr int kFloatsA = kTile * kPitchA;
  static constexpr int kStageFloats = kFloatsA + kBlockK * kTile;
  static constexpr int kWarpFloats = kStages * kStageFloats;
  static constexpr int kSharedBytes = kWarps * kWarpFloats * 4;
  // 16-byte runs of A and of B that each lane copies per step.
  static constexpr int kRuns = kTile * kBlockK / 4 / 32;

  static_assert(kBlockK % 4 == 0 && kRuns >= 1, "whole runs per lane");
  static_assert(kPitchA / 4 % 2 == 1, "odd 16-byte units per row of A");
  static_assert(kStages >= 2, "a ring of stages");
};

// C_i = A_i * B_i for i < count (A_i = a + i * stride_a, and so on), packed
// row-major, m and n at most 32, any k.
// Warp w of the grid computes problems w, w + (warps in the grid), and so on;
// its copies run kStages - 1 steps ahead, into its next problem.
//
// kVectorized: every row of every matrix starts on 16 bytes, so a run of 4
// elements along K (A) or N (B) is wholly inside or outside its matrix and is
// one 16-byte copy; otherwise each element is copied and checked alone.
// Out-of-range elements are staged as zero; A's and B's K-edges coincide, so
// a padding zero only meets another padding zero or an output never stored.
template <typename S, bool kVectorized>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmPerWarpKernel(int64_t m, int64_t n, int64_t k,
                       const float* __restrict__ a, int64_t stride_a,
                       const float* __restrict__ b, int64_t stride_b,
                       float* __restrict__ c, int64_t stride_c, int64_t count) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  extern __shared__ float4 shared_words[];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  float* const ring =
      reinterpret_cast<float*>(shared_words) + warp * S::kWarpFloats;
  const int64_t first = int64_t{blockIdx.x} * S::kWarps + warp;
  const int64_t warps = int64_t{gridDim.x} * S::kWarps;
  const int64_t steps = (k + S::kBlockK - 1) / S::kBlockK;

  // Run x of this lane: A's row a_row + x * kRowsA at K offset a_col of the
  // step, and B's K row b_row + x * 4 at column b_col.
  constexpr int kRunsPerRowA = S::kBlockK / 4;
  constexpr int kRowsA = 32 / kRunsPerRowA;
  const int a_row = lane / kRunsPerRowA;
  const int a_col = lane % kRunsPerRowA * 4;
  const int b_row = lane / 8;
  const int b_col = lane % 8 * 4;

  auto run_length = [](int left) {  // of a run with `left` elements ahead
    return left < 0 ? 0 : left > 4 ? 4 : left;
  };
  const int rows = static_cast<int>(m), cols = static_cast<int>(n);  // <= 32

  // The copies: step `copied` of problem copy_problem is the next one. This
  // lane's run 0 of that step starts at a_next in A and b_next in B, run x
  // x * a_run (x * b_run) floats further; k_left of the problem's K remain.
  const int64_t a_run = int64_t{kRowsA} * k;
  const int64_t b_run = 4 * n;
  const int64_t a_lane = a_row * k + a_col;
  const int64_t b_lane = b_row * n + b_col;
  const int b_length = run_length(cols - b_col);
  const bool whole_problems =
      kVectorized && rows == S::kTile && cols == S::kTile;
  int64_t copy_problem = first;
  int64_t copied = 0;
  int64_t k_left = 0;
  const float* a_next = nullptr;
  const float* b_next = nullptr;
  auto copy_next = [&](int stage) {
    if (copy_problem >= count) return;
    if (copied == 0) {
      k_left = k;
      a_next = a + copy_problem * stride_a + a_lane;
      b_next = b + copy_problem * stride_b + b_lane;
    }
    float* const a_stage = ring + stage * S::kStageFloats;
    float* const b_stage = a_stage + S::kFloatsA;
    // Of K, the step's part: at most kBlockK.
    const int k_step =
        k_left < S::kBlockK ? static_cast<int>(k_left) : S::kBlockK;
    if (whole_problems && k_step == S::kBlockK) {  // every run whole
#pragma unroll
      for (int x = 0; x < S::kRuns; ++x) {
        CopyAsync16(&a_stage[(a_row + x * kRowsA) * S::kPitchA + a_col],
                    a_next + x * a_run, 16);
        CopyAsync16(&b_stage[(b_row + x * 4) * S::kTile + b_col],
                    b_next + x * b_run, 16);
      }
    } else {
      const int a_length = run_length(k_step - a_col);
#pragma unroll
      for (int x = 0; x < S::kRuns; ++x) {
        const int row = a_row + x * kRowsA;
        CopyRunAsync<kVectorized>(&a_stage[row * S::kPitchA + a_col], a,
                                  a_next + x * a_run,
                                  row < rows ? a_length : 0);
        const int k_row = b_row + x * 4;
        CopyRunAsync<kVectorized>(&b_stage[k_row * S::kTile + b_col], b,
                                  b_next + x * b_run,
                                  k_row < k_step ? b_length : 0);
      }
    }
    a_next += S::kBlockK;
    b_next += S::kBlockK * n;
    k_left -= S::kBlockK;
    if (++copied < steps) return;
    copied = 0;
    copy_problem += warps;
  };

  const int lane_m = lane / 8;
  const int lane_n = lane % 8 * 4;
  float acc[8][4] = {};
  auto compute_step = [&](int stage) {
    const float* const a_stage = ring + stage * S::kStageFloats;
    const float* const b_stage = a_stage + S::kFloatsA;
#pragma unroll
    for (int kk = 0; kk < S::kBlockK; kk += 4) {
      float4 a_frag[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        a_frag[i] = *reinterpret_cast<const float4*>(
            &a_stage[(lane_m + 4 * i) * S::kPitchA + kk]);
      }
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float4 b4 = *reinterpret_cast<const float4*>(
            &b_stage[(kk + q) * S::kTile + lane_n]);
        const float b_frag[4] = {b4.x, b4.y, b4.z, b4.w};
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const float a_value = q == 0   ? a_frag[i].x
                                : q == 1 ? a_frag[i].y
                                : q == 2 ? a_frag[i].z
                                         : a_frag[i].w;
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            acc[i][j] = fmaf(a_value, b_frag[j], acc[i][j]);
          }
        }
      }
    }
  };

  auto store = [&](float* out_c) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int row = lane_m + 4 * i;
      if (row >= m) continue;
      float* const out = out_c + row * n + lane_n;
      if constexpr (kVectorized) {
        // One 16-byte store (evict-first; write-back, .cg and plain stores
        // measured the same). A float4 assignment compiled to four 4-byte
        // stores here: 0.0178 ms against 0.0158 at 32^3 x 4096 on an H200.
        if (lane_n < n) {
          __stcs(reinterpret_cast<float4*>(out),
                 make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
        }
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (lane_n + j < n) out[j] = acc[i][j];
        }
      }
    }
  };

  // The ring: one commit per step copied (empty past the last problem) keeps
  // "at most kStages - 2 pending" meaning "the step computed next has landed".
#pragma unroll
  for (int s = 0; s < S::kStages - 1; ++s) {
    copy_next(s);
    CopyAsyncCommit();
  }
  int stage = 0;  // of the step computed next
  for (int64_t q = first; q < count; q += warps) {
    for (int64_t s = 0; s < steps; ++s) {
      CopyAsyncWait<S::kStages - 2>();
      // The whole warp's copies of this step are visible, and the stage the
      // copy below refills has been read by every lane.
      __syncwarp();
      copy_next(stage == 0 ? S::kStages - 1 : stage - 1);
      CopyAsyncCommit();
      compute_step(stage);
      stage = stage + 1 == S::kStages ? 0 : stage + 1;
    }
    store(c + q * stride_c);
#pragma unroll
    for (auto& row : acc) {
#pragma unroll
      for (float& value : row) value = 0.0f;
    }
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_PER_WARP_CUH_
