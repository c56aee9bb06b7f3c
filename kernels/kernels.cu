// Host launchers for the kernels declared in kernels.h.
#include <climits>
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/sgemm_naive.cuh"
#include "kernels/sgemm_register_blocked.cuh"
#include "kernels/sgemm_tiled.cuh"
#include "kernels/transpose_tiled.cuh"

namespace matserve::kernels {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The grids here are one-dimensional; gridDim.x stops at 2^31 - 1 blocks.
bool FitsGrid(int64_t blocks) { return blocks <= INT_MAX; }

// Launches `kernel` with one kBlock x kBlock thread block per kBlock x kBlock
// tile of C (the naive and tiled rungs).
template <int kBlock, typename Kernel>
cudaError_t LaunchBlockPerTile(Kernel kernel, int64_t m, int64_t n, int64_t k,
                               const float* a, const float* b, float* c,
                               cudaStream_t stream) {
  const int64_t tiles_n = CeilDiv(n, kBlock);
  const int64_t blocks = CeilDiv(m, kBlock) * tiles_n;
  if (!FitsGrid(blocks)) return cudaErrorInvalidConfiguration;
  kernel<<<static_cast<unsigned>(blocks), dim3(kBlock, kBlock), 0, stream>>>(
      m, n, k, a, b, c, tiles_n);
  return cudaGetLastError();
}

cudaError_t SgemmTiled(int64_t m, int64_t n, int64_t k, const float* a,
                       const float* b, float* c, cudaStream_t stream) {
  constexpr int kTile = 32;
  return LaunchBlockPerTile<kTile>(SgemmTiledKernel<kTile>, m, n, k, a, b, c,
                                   stream);
}

bool Aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

cudaError_t SgemmRegisterBlocked(int64_t m, int64_t n, int64_t k,
                                 const float* a, const float* b, float* c,
                                 cudaStream_t stream) {
  using S = RegisterBlockedShape;
  constexpr int kGroup = 8;
  const int64_t tiles_m = CeilDiv(m, S::kBlockM);
  const int64_t tiles_n = CeilDiv(n, S::kBlockN);
  const int64_t blocks = tiles_m * tiles_n;
  if (!FitsGrid(blocks)) return cudaErrorInvalidConfiguration;
  const bool vectorized =
      k % 4 == 0 && n % 4 == 0 && Aligned16(a) && Aligned16(b) && Aligned16(c);
  auto kernel = vectorized ? SgemmRegisterBlockedKernel<true, kGroup>
                           : SgemmRegisterBlockedKernel<false, kGroup>;
  kernel<<<static_cast<unsigned>(blocks), S::kThreads, 0, stream>>>(
      m, n, k, a, b, c, tiles_m, tiles_n);
  return cudaGetLastError();
}

}  // namespace

const char* SgemmVariantName(SgemmVariant variant) {
  switch (variant) {
    case SgemmVariant::kAuto:
      return "auto";
    case SgemmVariant::kNaive:
      return "naive";
    case SgemmVariant::kTiled:
      return "tiled";
    case SgemmVariant::kRegisterBlocked:
      return "register_blocked";
  }
  return "unknown";
}

cudaError_t Sgemm(int64_t m, int64_t n, int64_t k, const float* a,
                  const float* b, float* c, cudaStream_t stream,
                  SgemmVariant variant) {
  if (m <= 0 || n <= 0 || k <= 0) return cudaErrorInvalidValue;
  switch (variant) {
    case SgemmVariant::kNaive:
      return LaunchBlockPerTile<16>(SgemmNaiveKernel<16>, m, n, k, a, b, c,
                                    stream);
    case SgemmVariant::kTiled:
      return SgemmTiled(m, n, k, a, b, c, stream);
    case SgemmVariant::kAuto:
      // Measured on an H200 (docs/benchmarks.md): below one 128-row or
      // 128-column block tile, the register-blocked grid is too small to fill
      // the GPU and the 32 x 32 tiles win (64x4096x4096: 20% of cuBLAS
      // against 15%); from there on the register-blocked kernel wins.
      return m < RegisterBlockedShape::kBlockM ||
                     n < RegisterBlockedShape::kBlockN
                 ? SgemmTiled(m, n, k, a, b, c, stream)
                 : SgemmRegisterBlocked(m, n, k, a, b, c, stream);
    case SgemmVariant::kRegisterBlocked:
      return SgemmRegisterBlocked(m, n, k, a, b, c, stream);
  }
  return cudaErrorInvalidValue;
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
