// Register-blocked SGEMM: 128 x 128 block tiles, 8 x 8 of C per thread, A
// transposed in shared memory, 16-byte loads, double-buffered shared tiles.
#ifndef MATSERVE_KERNELS_SGEMM_REGISTER_BLOCKED_CUH_
#define MATSERVE_KERNELS_SGEMM_REGISTER_BLOCKED_CUH_

#include <cstdint>

namespace matserve::kernels {

struct RegisterBlockedShape {
  static constexpr int kBlockM = 128;
  static constexpr int kBlockN = 128;
  static constexpr int kBlockK = 8;
  static constexpr int kThreads = 256;  // 16 x 16, each an 8 x 8 block of C
  static constexpr int kHalf = 64;      // the thread's rows (and columns) are
                                        // two groups of 4, 64 apart
  static_assert(kBlockM * kBlockK == kThreads * 4,
                "each thread loads one float4 of A per K step");
  static_assert(kBlockN * kBlockK == kThreads * 4,
                "each thread loads one float4 of B per K step");
  static_assert(kBlockM == 2 * kHalf && kHalf == 16 * 4,
                "16 threads x 4 elements cover each half of the tile");
};

// Each thread owns rows {ty*4 + i, 64 + ty*4 + i} and columns
// {tx*4 + j, 64 + tx*4 + j}, i, j < 4. Splitting the 8 x 8 block into four
// 4 x 4 pieces 64 apart (rather than 8 adjacent) makes the warp's float4 reads
// of a shared row contiguous (no bank conflicts) and its float4 stores of C
// coalesced.
//
// kVectorized: K % 4 == 0, N % 4 == 0 and A, B, C 16-byte aligned, so a float4
// of A (along K) or of B and C (along N) is either wholly inside the matrix or
// wholly outside, and 16-byte loads are legal. Otherwise every element is
// loaded and stored on its own, each guarded.
//
// Out-of-range elements are staged as zero; since A's and B's K-edges
// coincide, a padding zero only meets another padding zero or an output that
// is never stored.
//
// Blocks are numbered in one grid dimension, problem by problem of a strided
// batch (problem i's A at a + i * stride_a, and so on; a single product is a
// batch of one). Inside a problem they are visited in groups of kGroup tile
// rows, column by column inside a group, so that the blocks resident at one
// time share their A rows and B columns in L2.
template <bool kVectorized, int kGroup>
__global__ void __launch_bounds__(RegisterBlockedShape::kThreads, 1)
    SgemmRegisterBlockedKernel(int64_t m, int64_t n, int64_t k,
                               const float* __restrict__ a, int64_t stride_a,
                               const float* __restrict__ b, int64_t stride_b,
                               float* __restrict__ c, int64_t stride_c,
                               int64_t tiles_m, int64_t tiles_n) {
  using S = RegisterBlockedShape;
  // Two stages: the next K step is stored into one while the other is read.
  __shared__ __align__(16) float a_tile[2][S::kBlockK][S::kBlockM];  // A^T
  __shared__ __align__(16) float b_tile[2][S::kBlockK][S::kBlockN];

  const int64_t problem = blockIdx.x / (tiles_m * tiles_n);
  a += problem * stride_a;
  b += problem * stride_b;
  c += problem * stride_c;

  // Grouped tile order for L2 reuse.
  const int64_t tile = blockIdx.x % (tiles_m * tiles_n);
  const int64_t tiles_per_group = int64_t{kGroup} * tiles_n;
  const int64_t group = tile / tiles_per_group;
  const int64_t first_row = group * kGroup;
  const int64_t rows_in_group =
      tiles_m - first_row < kGroup ? tiles_m - first_row : kGroup;
  const int64_t in_group = tile % tiles_per_group;
  const int64_t block_row = (first_row + in_group % rows_in_group) * S::kBlockM;
  const int64_t block_col = in_group / rows_in_group * S::kBlockN;

  const int tid = threadIdx.x;
  const int tx = tid % 16;
  const int ty = tid / 16;

  // This thread's share of each K step's loads: a float4 of A at
  // (a_row, a_k..a_k+3) and of B at (b_k, b_col..b_col+3).
  const int a_row = tid / 2;
  const int a_k = tid % 2 * 4;
  const int b_k = tid / 32;
  const int b_col = tid % 32 * 4;

  float a_next[4];
  float b_next[4];
  auto load = [&](int64_t k0) {
    const int64_t row = block_row + a_row;
    const int64_t ka = k0 + a_k;
    const int64_t kb = k0 + b_k;
    const int64_t col = block_col + b_col;
    if constexpr (kVectorized) {
      const float4 va = row < m && ka < k
                            ? *reinterpret_cast<const float4*>(&a[row * k + ka])
                            : make_float4(0, 0, 0, 0);
      const float4 vb = kb < k && col < n
                            ? *reinterpret_cast<const float4*>(&b[kb * n + col])
                            : make_float4(0, 0, 0, 0);
      a_next[0] = va.x, a_next[1] = va.y, a_next[2] = va.z, a_next[3] = va.w;
      b_next[0] = vb.x, b_next[1] = vb.y, b_next[2] = vb.z, b_next[3] = vb.w;
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        a_next[i] = row < m && ka + i < k ? a[row * k + ka + i] : 0.0f;
        b_next[i] = kb < k && col + i < n ? b[kb * n + col + i] : 0.0f;
      }
    }
  };
  auto store = [&](int stage) {
#pragma unroll
    for (int i = 0; i < 4; ++i) a_tile[stage][a_k + i][a_row] = a_next[i];
    *reinterpret_cast<float4*>(&b_tile[stage][b_k][b_col]) =
        make_float4(b_next[0], b_next[1], b_next[2], b_next[3]);
  };

  float acc[8][8] = {};
  load(0);
  store(0);
  __syncthreads();  // stage 0 is complete before anyone reads it
  int stage = 0;
  for (int64_t k0 = 0; k0 < k; k0 += S::kBlockK) {
    const bool more = k0 + S::kBlockK < k;
    if (more) load(k0 + S::kBlockK);  // global loads in flight during the math
#pragma unroll
    for (int kk = 0; kk < S::kBlockK; ++kk) {
      float a_frag[8];
      float b_frag[8];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float4 va = *reinterpret_cast<const float4*>(
            &a_tile[stage][kk][h * S::kHalf + ty * 4]);
        const float4 vb = *reinterpret_cast<const float4*>(
            &b_tile[stage][kk][h * S::kHalf + tx * 4]);
        a_frag[h * 4 + 0] = va.x, a_frag[h * 4 + 1] = va.y;
        a_frag[h * 4 + 2] = va.z, a_frag[h * 4 + 3] = va.w;
        b_frag[h * 4 + 0] = vb.x, b_frag[h * 4 + 1] = vb.y;
        b_frag[h * 4 + 2] = vb.z, b_frag[h * 4 + 3] = vb.w;
      }
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < 8; ++j)
          acc[i][j] = fmaf(a_frag[i], b_frag[j], acc[i][j]);
      }
    }
    if (more) {
      // The other stage was last read before the previous barrier, so it is
      // free; one barrier per K step then publishes it.
      store(stage ^ 1);
      __syncthreads();
      stage ^= 1;
    }
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int64_t row = block_row + i / 4 * S::kHalf + ty * 4 + i % 4;
    if (row >= m) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t col = block_col + h * S::kHalf + tx * 4;
      const float* v = &acc[i][h * 4];
      if constexpr (kVectorized) {
        if (col < n) {
          *reinterpret_cast<float4*>(&c[row * n + col]) =
              make_float4(v[0], v[1], v[2], v[3]);
        }
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (col + j < n) c[row * n + col + j] = v[j];
        }
      }
    }
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_REGISTER_BLOCKED_CUH_
