// Shared-memory tiled SGEMM: the first rung of the ladder and the correctness
// baseline.
#ifndef MATSERVE_KERNELS_SGEMM_TILED_CUH_
#define MATSERVE_KERNELS_SGEMM_TILED_CUH_

#include <cstdint>

namespace matserve::kernels {

// One block computes one kTile x kTile tile of C with one thread per element:
// at each step along K the block stages a kTile x kTile tile of A and one of B
// in shared memory, so each global element is read once per block instead of
// once per thread. Blocks are numbered in one grid dimension (tile = row_tile *
// tiles_n + col_tile) because gridDim.y stops at 65535 and a tall matrix needs
// more tiles than that. Edges are guarded: out-of-range elements are staged as
// zero, and since A's and B's K-edges coincide, a padding zero only ever meets
// another padding zero (no 0 * Inf = NaN leaks into a valid output).
template <int kTile>
__global__ void __launch_bounds__(kTile* kTile)
    SgemmTiledKernel(int64_t m, int64_t n, int64_t k,
                     const float* __restrict__ a, const float* __restrict__ b,
                     float* __restrict__ c, int64_t tiles_n) {
  static_assert(kTile * kTile <= 1024,
                "one thread per element of C's tile: 1024 threads at most");
  __shared__ float a_tile[kTile][kTile];
  __shared__ float b_tile[kTile][kTile];

  const int tx =
      threadIdx.x;  // column within the tile: consecutive across a warp
  const int ty = threadIdx.y;
  const int64_t row = blockIdx.x / tiles_n * kTile + ty;
  const int64_t col = blockIdx.x % tiles_n * kTile + tx;

  float sum = 0.0f;
  for (int64_t k0 = 0; k0 < k; k0 += kTile) {
    const int64_t a_col = k0 + tx;
    const int64_t b_row = k0 + ty;
    a_tile[ty][tx] = (row < m && a_col < k) ? a[row * k + a_col] : 0.0f;
    b_tile[ty][tx] = (b_row < k && col < n) ? b[b_row * n + col] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them
    // a_tile[ty][i] is one address per warp (a broadcast); b_tile[i][tx] is 32
    // consecutive words: neither read has bank conflicts, so no padding is
    // needed here.
#pragma unroll
    for (int i = 0; i < kTile; ++i)
      sum = fmaf(a_tile[ty][i], b_tile[i][tx], sum);
    __syncthreads();  // everyone is done reading before the next step
                      // overwrites the tiles
  }
  if (row < m && col < n) c[row * n + col] = sum;
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_TILED_CUH_
