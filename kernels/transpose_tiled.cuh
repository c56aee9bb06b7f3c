// Transpose through a padded shared-memory tile: coalesced reads and coalesced
// writes.
#ifndef MATSERVE_KERNELS_TRANSPOSE_TILED_CUH_
#define MATSERVE_KERNELS_TRANSPOSE_TILED_CUH_

#include <cstdint>

namespace matserve::kernels {

// A block of kTile x kRows threads moves one kTile x kTile tile, each thread
// kTile / kRows elements. It reads the tile row by row (coalesced), and writes
// it to the output row by row (coalesced), reading the shared tile by column in
// between. The tile row is padded by one word so that a column's kTile elements
// fall in kTile different banks; unpadded, a column read would be a kTile-way
// bank conflict. Tiles are numbered in one grid dimension, as in
// SgemmTiledKernel, matrix by matrix of a strided batch (matrix i at
// in + i * in_stride and out + i * out_stride).
template <int kTile, int kRows>
__global__ void __launch_bounds__(kTile* kRows)
    TransposeTiledKernel(int64_t rows, int64_t cols,
                         const float* __restrict__ in, int64_t in_stride,
                         float* __restrict__ out, int64_t out_stride,
                         int64_t tiles_cols, int64_t tiles_per_matrix) {
  static_assert(kTile % kRows == 0,
                "each thread moves a whole number of tile rows");
  static_assert(kTile == 32,
                "the padding argument assumes one tile row per 32 banks");
  __shared__ float tile[kTile][kTile + 1];

  const int64_t matrix = blockIdx.x / tiles_per_matrix;
  const int64_t tile_index = blockIdx.x % tiles_per_matrix;
  in += matrix * in_stride;
  out += matrix * out_stride;
  const int64_t row0 = tile_index / tiles_cols * kTile;
  const int64_t col0 = tile_index % tiles_cols * kTile;
  const int tx = threadIdx.x;

  for (int j = threadIdx.y; j < kTile; j += kRows) {
    const int64_t r = row0 + j;
    const int64_t c = col0 + tx;
    if (r < rows && c < cols) tile[j][tx] = in[r * cols + c];
  }
  __syncthreads();  // the whole tile is in shared memory before any column of
                    // it is read
  for (int j = threadIdx.y; j < kTile; j += kRows) {
    const int64_t out_row = col0 + j;  // an input column
    const int64_t out_col = row0 + tx;
    if (out_row < cols && out_col < rows)
      out[out_row * rows + out_col] = tile[tx][j];
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_TRANSPOSE_TILED_CUH_
