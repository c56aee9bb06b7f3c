// Transpose through padded shared-memory tiles of kTileRows x kTileCols
// (64 x 64, say), each thread moving 8 to 16 elements, every load issued
// before the first store.
#ifndef MATSERVE_KERNELS_TRANSPOSE_LARGE_TILE_CUH_
#define MATSERVE_KERNELS_TRANSPOSE_LARGE_TILE_CUH_

#include <cstdint>
#include <type_traits>

#include "kernels/grid_dependency.cuh"

namespace matserve::kernels {

// Where the tiles of a (strided batch of) rows x cols matrices are, and in
// which order blocks take them.
struct TransposeTiling {
  int64_t rows, cols;
  const float* in;
  int64_t in_stride;
  float* out;
  int64_t out_stride;
  int64_t tiles_rows, tiles_cols;  // of one matrix
  int64_t tiles;                   // of the whole batch: the grid
  int64_t group;  // tiles are taken down each tile column of `group` tile rows
};

// Block b moves tile b: a padded kTileRows x kTileCols tile of shared memory.
// Each thread moves kTileRows * kTileCols / kThreads elements, all of its
// loads issued before any of them is used (more bytes in flight per thread
// than the 32 x 32 kernels is what brings a transpose near copy bandwidth).
// Measured on an H200 (docs/benchmarks.md): persistent blocks that load the
// next tile while writing the current one, and evict-first cache hints on
// either side, were slower than this; so were 32 x 128 and 128 x 32 tiles on
// the 16-byte path.
//
// Access pattern, kVectorized (cols, rows, strides multiples of 4, pointers on
// 16 bytes): a warp instruction moves a "unit" of 4 tile rows x 32 columns, 8
// lanes x 16 bytes per row, so every row piece is one full 128-byte line; the
// write side does the same on the transposed tile (4 output rows x 32 output
// columns, each lane gathering 4 elements of a tile column). Scalar: a unit is
// one row x 32 columns, a lane per element, again one full line per warp
// instruction. A tile row is padded by one word (pitch = 1 mod 32 banks), so
// that for both patterns the 32 lanes of a warp touch 32 different banks: the
// lane's bank is (row + column) mod 32 for the vector unit (row in 0..3 by
// lane / 8, column 4 * (lane % 8) + q) and column * pitch + row = lane + const
// for the scalar one.
template <int kTileRows, int kTileCols, int kThreads, bool kVectorized,
          int kMinBlocks = 1>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    TransposeLargeTileKernel(TransposeTiling t) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  static_assert(kTileRows % 32 == 0 && kTileCols % 32 == 0,
                "tile sides are whole warps of words (the bank argument)");
  static_assert(kThreads % 32 == 0, "whole warps");
  constexpr int kWidth = kVectorized ? 4 : 1;     // elements per access
  constexpr int kUnitRows = kVectorized ? 4 : 1;  // rows of a warp's unit
  constexpr int kWarps = kThreads / 32;
  static_assert(kTileRows * kTileCols % (32 * kWidth * kWarps) == 0,
                "each warp moves a whole number of units");
  constexpr int kPerThread = kTileRows * kTileCols / (kThreads * kWidth);
  constexpr int kPitch = kTileCols + 1;
  __shared__ float tile[kTileRows * kPitch];

  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  // The lane's place inside a unit: unit row and column.
  const int unit_row = kVectorized ? lane / 8 : 0;
  const int unit_col = kVectorized ? lane % 8 * 4 : lane;
  // Units per tile row band (load side) and per output row band (store side).
  constexpr int kLoadSegments = kTileCols / 32;
  constexpr int kStoreSegments = kTileRows / 32;

  using Vec = typename std::conditional<kVectorized, float4, float>::type;
  Vec values[kPerThread];

  // Coordinates of tile `index`: its matrix's base pointers and its first
  // row and column.
  struct Place {
    const float* in;
    float* out;
    int64_t row0, col0;
  };
  auto place = [&t](int64_t index) {
    const int64_t per_matrix = t.tiles_rows * t.tiles_cols;
    const int64_t matrix = index / per_matrix;
    const int64_t in_matrix = index - matrix * per_matrix;
    const int64_t per_group = t.group * t.tiles_cols;
    const int64_t first_row = in_matrix / per_group * t.group;
    const int64_t group_rows =
        t.tiles_rows - first_row < t.group ? t.tiles_rows - first_row : t.group;
    const int64_t in_group = in_matrix - first_row * t.tiles_cols;
    Place p;
    p.in = t.in + matrix * t.in_stride;
    p.out = t.out + matrix * t.out_stride;
    p.row0 = (first_row + in_group % group_rows) * kTileRows;
    p.col0 = in_group / group_rows * kTileCols;
    return p;
  };

  auto load = [&](const Place& p) {
#pragma unroll
    for (int s = 0; s < kPerThread; ++s) {
      const int unit = warp + s * kWarps;
      const int r = unit / kLoadSegments * kUnitRows + unit_row;
      const int c = unit % kLoadSegments * 32 + unit_col;
      const int64_t row = p.row0 + r, col = p.col0 + c;
      if constexpr (kVectorized) {
        const float4* from =
            reinterpret_cast<const float4*>(p.in + row * t.cols + col);
        if (row < t.rows && col < t.cols) {
          values[s] = __ldg(from);
        } else {
          values[s] = make_float4(0, 0, 0, 0);
        }
      } else {
        const float* from = p.in + row * t.cols + col;
        if (row < t.rows && col < t.cols) {
          values[s] = __ldg(from);
        } else {
          values[s] = 0;
        }
      }
    }
  };

  auto stage = [&] {
#pragma unroll
    for (int s = 0; s < kPerThread; ++s) {
      const int unit = warp + s * kWarps;
      const int r = unit / kLoadSegments * kUnitRows + unit_row;
      const int c = unit % kLoadSegments * 32 + unit_col;
      float* to = &tile[r * kPitch + c];
      if constexpr (kVectorized) {
        to[0] = values[s].x, to[1] = values[s].y, to[2] = values[s].z,
        to[3] = values[s].w;
      } else {
        to[0] = values[s];
      }
    }
  };

  // Output row j of the tile is input column col0 + j; output column i is
  // input row row0 + i.
  auto store = [&](const Place& p) {
#pragma unroll
    for (int s = 0; s < kPerThread; ++s) {
      const int unit = warp + s * kWarps;
      const int j = unit / kStoreSegments * kUnitRows + unit_row;
      const int i = unit % kStoreSegments * 32 + unit_col;
      const int64_t out_row = p.col0 + j, out_col = p.row0 + i;
      if (out_row >= t.cols || out_col >= t.rows) continue;
      float* to = p.out + out_row * t.rows + out_col;
      if constexpr (kVectorized) {
        const float4 v =
            make_float4(tile[i * kPitch + j], tile[(i + 1) * kPitch + j],
                        tile[(i + 2) * kPitch + j], tile[(i + 3) * kPitch + j]);
        // __stwb: a plain (write-back) store, spelled so that it stays one
        // 16-byte store; as an assignment, nvcc 13.0 split it into four
        // 4-byte stores here, which cost a quarter of the bandwidth.
        __stwb(reinterpret_cast<float4*>(to), v);
      } else {
        *to = tile[i * kPitch + j];
      }
    }
  };

  const Place p = place(blockIdx.x);
  load(p);
  stage();
  __syncthreads();  // the whole tile is in shared memory before any column of
                    // it is read
  store(p);
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_TRANSPOSE_LARGE_TILE_CUH_
