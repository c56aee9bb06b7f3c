// Warp-specialized SGEMM for batches of problems up to 64 x 64 of C whose
// rows all start on 16 bytes (sm_90 and later): in each block one producer
// thread stages the operands of the block's problems, a K slab at a time, into
// shared-memory stages with bulk tensor copies (bulk_copy.cuh), two copies a
// slab, and pairs of consumer warps compute whole problems from the stages,
// each pair its own problems from a ring of stages of its own. The consumers
// issue no copies and meet at no block-wide barrier: a stage's full barrier
// tells its pair that the stage has landed, and its empty barrier tells the
// producer that the pair is done with it.
#ifndef MATSERVE_KERNELS_SGEMM_STAGED_CUH_
#define MATSERVE_KERNELS_SGEMM_STAGED_CUH_

#include <cuda.h>

#include <cstdint>

#include "kernels/bulk_copy.cuh"
#include "kernels/float_vector.cuh"
#include "kernels/grid_dependency.cuh"
#include "kernels/outer_product.cuh"

namespace matserve::kernels {

// kPairs pairs of consumer warps, each with a ring of kRing stages of K slabs
// of 32; a lane reads its A fragment kFragK columns at a time.
template <int kPairs_, int kRing_, int kFragK_>
struct StagedShape {
  static constexpr int kTile = 64;
  static constexpr int kSlabK = 32;
  static constexpr int kPairs = kPairs_;
  static constexpr int kRing = kRing_;
  static constexpr int kStages = kPairs * kRing;
  static constexpr int kFragK = kFragK_;
  static constexpr int kThreads = 64 * kPairs + 32;

  // A stage holds a 64 x 32 box of A, its 128-byte rows swizzled (the 16-byte
  // units of row r in order u ^ (r % 8), as the copy lays them out: four rows
  // apart by less than 8 then lie in different banks), and a 32 x 64
  // box of B as it lies in memory. Elements past the matrices are zeros.
  static constexpr int kFloatsA = kTile * kSlabK;
  static constexpr int kStageBytes = 4 * (kFloatsA + kSlabK * kTile);
  // A swizzled box starts on 1024 bytes; after the stages, a full and an
  // empty barrier per stage.
  static constexpr int kBarriersOffset = kStages * kStageBytes;
  static constexpr int kSharedBytes = kBarriersOffset + 2 * kStages * 8;

  static_assert(kStageBytes % 1024 == 0, "stages on 1024 bytes");
  static_assert(kFragK == 1 || kFragK == 2 || kFragK == 4, "a vector read");
};

#if __CUDA_ARCH__ >= 900

// acc += the lane's 8 x 8 block of A[:, kk..kk + kFragK) * B[kk..kk +
// kFragK, :) of a stage, with `a` at the lane's first row, `row` (< 8), and
// `b` at its first column. Lane rows are 8 apart, so that all lie in the
// same order of units and one address serves the eight reads (H200, against
// rows 4 apart, ms: 64^3 x 4096 0.0637 against 0.0649, 48^3 x 8192 0.0916
// against 0.0961), and its columns two runs of 4, 32 apart.
template <typename S>
__device__ inline void MultiplyFragment(float (&acc)[8][8], const float* a,
                                        int row, const float* b, int kk) {
  using FragK = typename FloatVector<S::kFragK>::Type;
  const float* const unit = a + (kk / 4 ^ row) * 4 + kk % 4;
  float a_frag[8][S::kFragK];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    *reinterpret_cast<FragK*>(a_frag[i]) =
        *reinterpret_cast<const FragK*>(&unit[8 * i * S::kSlabK]);
  }
#pragma unroll
  for (int q = 0; q < S::kFragK; ++q) {
    float b_frag[8];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      *reinterpret_cast<float4*>(&b_frag[4 * h]) =
          *reinterpret_cast<const float4*>(&b[(kk + q) * S::kTile + 32 * h]);
    }
    OuterProduct(acc, a_frag, q, b_frag);
  }
}

#endif  // __CUDA_ARCH__ >= 900

// C_i = A_i * B_i for i < count, row-major, m and n at most 64, with `a_map`
// the tensor of the A_i (k x m x count, innermost first, boxes of 32 x 64 x 1
// with 128-byte swizzle) and `b_map` that of the B_i (n x k x count, boxes of
// 64 x 32 x 1); C_i at c + i * stride_c, its rows on 16 bytes.
//
// Block x computes problems x, x + gridDim.x, and so on (its problems 0, 1,
// ...), and pair p of them its problems p, p + kPairs, and so on: the pair's
// items, one per K slab, the i-th of which lies in stage i % kRing of its
// ring. A stage is only ever the pair's, so the pair can never wait on one
// more than a phase ahead of its barriers (their parity tells no more).
template <typename S>
__global__ void __launch_bounds__(S::kThreads, 1)
    SgemmStagedKernel(const __grid_constant__ CUtensorMap a_map,
                      const __grid_constant__ CUtensorMap b_map, int m, int n,
                      int k, float* __restrict__ c, int64_t stride_c,
                      int count) {
#if __CUDA_ARCH__ >= 900
  WaitForPriorGrid();
  AllowDependentLaunch();
  extern __shared__ __align__(1024) float4 shared_words[];
  char* const shared = reinterpret_cast<char*>(shared_words);
  uint64_t* const full =
      reinterpret_cast<uint64_t*>(shared + S::kBarriersOffset);
  uint64_t* const empty = full + S::kStages;
  auto stage_a = [&](int slot) {
    return reinterpret_cast<float*>(shared + slot * S::kStageBytes);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < S::kStages; ++s) {
      BarrierInit(&full[s], 1);
      BarrierInit(&empty[s], 64);
    }
    FenceBarrierInit();
  }
  __syncthreads();

  const int problems = (count - 1 - blockIdx.x) / gridDim.x + 1;
  const int slabs = (k + S::kSlabK - 1) / S::kSlabK;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  if (warp == 2 * S::kPairs) {  // the producer: one lane issues the copies
    if (lane != 0) return;
    // A round of problems, one per pair, slab by slab and pair by pair, so
    // that every pair's ring fills alike.
    for (int first = 0; first < problems; first += S::kPairs) {
      for (int slab = 0; slab < slabs; ++slab) {
        const int item = first / S::kPairs * slabs + slab;
        for (int pair = 0; pair < S::kPairs && first + pair < problems;
             ++pair) {
          const int slot = pair * S::kRing + item % S::kRing;
          const int problem = blockIdx.x + (first + pair) * gridDim.x;
          // The pair is done with the stage's last item (item - kRing).
          BarrierWait(&empty[slot], (item / S::kRing & 1) ^ 1);
          BarrierArriveExpecting(&full[slot], S::kStageBytes);
          BulkTensorCopy(stage_a(slot), a_map, slab * S::kSlabK, 0, problem,
                         &full[slot]);
          BulkTensorCopy(stage_a(slot) + S::kFloatsA, b_map, 0,
                         slab * S::kSlabK, problem, &full[slot]);
        }
      }
    }
    return;
  }

  // The lane's block of C: rows row + 8 i (i < 8), columns col..+3 and
  // col + 32..+3; the pair's two warps take rows 0-3 and 4-7 modulo 8.
  const int pair = warp / 2;
  const int row = warp % 2 * 4 + lane / 8;
  const int col = lane % 8 * 4;
  for (int q = pair; q < problems; q += S::kPairs) {
    float acc[8][8] = {};
    int item = q / S::kPairs * slabs;
    for (int k0 = 0; k0 < k; k0 += S::kSlabK, ++item) {
      const int slot = pair * S::kRing + item % S::kRing;
      BarrierWait(&full[slot], item / S::kRing & 1);
      const float* const a = stage_a(slot) + row * S::kSlabK;
      const float* const b = stage_a(slot) + S::kFloatsA + col;
      // The last slab's zeros past K are not worth their FMAs. A whole slab
      // runs as a loop with 16 K indices unrolled: the slab unrolled whole
      // missed the instruction cache (H200, ms: 64^3 x 4096 0.0674 against
      // 0.0651, 36^3 x 4096 0.0442 against 0.0402; 8 or 4 K indices in
      // between).
      if (k - k0 >= S::kSlabK) {
#pragma unroll(16 / S::kFragK)
        for (int kk = 0; kk < S::kSlabK; kk += S::kFragK) {
          MultiplyFragment<S>(acc, a, row, b, kk);
        }
      } else {
        for (int kk = 0; kk < k - k0; kk += S::kFragK) {
          MultiplyFragment<S>(acc, a, row, b, kk);
        }
      }
      BarrierArrive(&empty[slot]);
    }
    // A pointer that walks the lane's rows: the stores indexed from the
    // problem's start took 360 instructions a problem against 60 (H200, ms:
    // 64^3 x 4096 0.0584 against 0.0632, 48^3 x 8192 0.0827 against 0.0913).
    float* out =
        c + (blockIdx.x + int64_t{q} * gridDim.x) * stride_c + row * n + col;
#pragma unroll
    for (int i = 0; i < 8 && row + 8 * i < m; ++i, out += 8 * n) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (col + 32 * h >= n) continue;
        const float* v = &acc[i][4 * h];
        __stcs(reinterpret_cast<float4*>(out + 32 * h),
               make_float4(v[0], v[1], v[2], v[3]));
      }
    }
  }
#endif  // __CUDA_ARCH__ >= 900
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_STAGED_CUH_
