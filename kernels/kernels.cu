// Host launchers for the kernels declared in kernels.h.
#include <climits>

#include "kernels/kernels.h"
#include "kernels/sgemm_tiled.cuh"
#include "kernels/transpose_tiled.cuh"

namespace matserve::kernels {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The grids here are one-dimensional; gridDim.x stops at 2^31 - 1 blocks.
bool FitsGrid(int64_t blocks) { return blocks <= INT_MAX; }

}  // namespace

cudaError_t Sgemm(int64_t m, int64_t n, int64_t k, const float* a,
                  const float* b, float* c, cudaStream_t stream) {
  constexpr int kTile = 32;
  if (m <= 0 || n <= 0 || k <= 0) return cudaErrorInvalidValue;
  const int64_t tiles_n = CeilDiv(n, kTile);
  const int64_t blocks = CeilDiv(m, kTile) * tiles_n;
  if (!FitsGrid(blocks)) return cudaErrorInvalidConfiguration;
  SgemmTiledKernel<kTile>
      <<<static_cast<unsigned>(blocks), dim3(kTile, kTile), 0, stream>>>(
          m, n, k, a, b, c, tiles_n);
  return cudaGetLastError();
}

cudaError_t Transpose(int64_t rows, int64_t cols, const float* in, float* out,
                      cudaStream_t stream) {
  constexpr int kTile = 32;
  constexpr int kRows = 8;
  if (rows <= 0 || cols <= 0) return cudaErrorInvalidValue;
  const int64_t tiles_cols = CeilDiv(cols, kTile);
  const int64_t blocks = CeilDiv(rows, kTile) * tiles_cols;
  if (!FitsGrid(blocks)) return cudaErrorInvalidConfiguration;
  TransposeTiledKernel<kTile, kRows>
      <<<static_cast<unsigned>(blocks), dim3(kTile, kRows), 0, stream>>>(
          rows, cols, in, out, tiles_cols);
  return cudaGetLastError();
}

}  // namespace matserve::kernels
