// Transpose through a padded shared-memory tile, each thread moving runs of 4
// elements (16-byte loads and stores where the shape allows), for one matrix
// or a strided batch of them.
#ifndef MATSERVE_KERNELS_TRANSPOSE_WIDE_CUH_
#define MATSERVE_KERNELS_TRANSPOSE_WIDE_CUH_

#include <cstdint>

#include "kernels/grid_dependency.cuh"

namespace matserve::kernels {

// A block moves one kTile x kTile tile of one matrix of the batch: matrix i
// starts at in + i * in_stride (out + i * out_stride). Against
// TransposeTiledKernel it keeps more bytes in flight per thread (all of its
// loads are issued before the first shared-memory store) and writes output
// rows in kTile-element runs, both of which a copy at full DRAM bandwidth
// needs.
//
// A run is 4 elements of one tile row. kVectorized (both sizes and both
// strides multiples of 4, pointers 16-byte aligned): a run is 4 adjacent
// elements, one 16-byte access, wholly inside the matrix or wholly outside.
// Otherwise the 4 elements of a run are kTile / 4 apart, so that each of the
// thread's 4 scalar accesses is coalesced across the warp, and each is guarded.
//
// The tile row is padded by one word: a column of the tile then falls in
// different banks (row r starts at bank r mod 32). With kTile = 32 neither the
// row stores nor the column reads then have bank conflicts; wider tiles have
// 2-way ones.
//
// Tiles are visited in groups of kGroup tile rows, down each column of tiles
// inside a group, so that the blocks resident at one time read kGroup * kTile
// input rows and write kGroup * kTile-element runs of output rows.
template <int kTile, int kThreads, bool kVectorized, int kGroup>
__global__ void __launch_bounds__(kThreads)
    TransposeWideKernel(int64_t rows, int64_t cols,
                        const float* __restrict__ in, int64_t in_stride,
                        float* __restrict__ out, int64_t out_stride,
                        int64_t tiles_rows, int64_t tiles_cols) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  constexpr int kRunsPerRow = kTile / 4;
  constexpr int kRunsPerThread = kTile * kRunsPerRow / kThreads;
  static_assert(kTile % 32 == 0, "tile rows are whole warps of words");
  static_assert(kTile * kRunsPerRow % kThreads == 0,
                "each thread moves a whole number of runs");
  __shared__ float tile[kTile][kTile + 1];

  const int64_t tiles_per_matrix = tiles_rows * tiles_cols;
  const int64_t matrix = blockIdx.x / tiles_per_matrix;
  const int64_t tile_index = blockIdx.x % tiles_per_matrix;
  in += matrix * in_stride;
  out += matrix * out_stride;
  const int64_t tiles_per_group = int64_t{kGroup} * tiles_cols;
  const int64_t first_row = tile_index / tiles_per_group * kGroup;
  const int64_t rows_in_group =
      tiles_rows - first_row < kGroup ? tiles_rows - first_row : kGroup;
  const int64_t in_group = tile_index % tiles_per_group;
  const int64_t row0 = (first_row + in_group % rows_in_group) * kTile;
  const int64_t col0 = in_group / rows_in_group * kTile;

  // Tile coordinates of element q of run `run`: along the tile row, 4 adjacent
  // (vectorized) or kRunsPerRow apart (scalar).
  auto along = [](int run, int q) {
    return kVectorized ? run % kRunsPerRow * 4 + q
                       : run % kRunsPerRow + q * kRunsPerRow;
  };

  float values[kRunsPerThread][4];
#pragma unroll
  for (int s = 0; s < kRunsPerThread; ++s) {
    const int run = threadIdx.x + s * kThreads;
    const int64_t r = row0 + run / kRunsPerRow;
    if constexpr (kVectorized) {
      const int64_t c = col0 + along(run, 0);
      const float4 v = r < rows && c < cols
                           ? *reinterpret_cast<const float4*>(&in[r * cols + c])
                           : make_float4(0, 0, 0, 0);
      values[s][0] = v.x, values[s][1] = v.y, values[s][2] = v.z,
      values[s][3] = v.w;
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int64_t c = col0 + along(run, q);
        values[s][q] = r < rows && c < cols ? in[r * cols + c] : 0.0f;
      }
    }
  }
#pragma unroll
  for (int s = 0; s < kRunsPerThread; ++s) {
    const int run = threadIdx.x + s * kThreads;
#pragma unroll
    for (int q = 0; q < 4; ++q)
      tile[run / kRunsPerRow][along(run, q)] = values[s][q];
  }
  __syncthreads();  // the whole tile is in shared memory before any column of
                    // it is read

  // Output row j of the tile is input column col0 + j; its runs go along the
  // input's rows.
#pragma unroll
  for (int s = 0; s < kRunsPerThread; ++s) {
    const int run = threadIdx.x + s * kThreads;
    const int j = run / kRunsPerRow;
    const int64_t out_row = col0 + j;
    if (out_row >= cols) continue;
    if constexpr (kVectorized) {
      const int i = along(run, 0);
      const int64_t out_col = row0 + i;
      if (out_col < rows) {
        *reinterpret_cast<float4*>(&out[out_row * rows + out_col]) =
            make_float4(tile[i][j], tile[i + 1][j], tile[i + 2][j],
                        tile[i + 3][j]);
      }
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int i = along(run, q);
        if (row0 + i < rows) out[out_row * rows + row0 + i] = tile[i][j];
      }
    }
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_TRANSPOSE_WIDE_CUH_
