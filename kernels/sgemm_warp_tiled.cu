// The warp-tiled kernel's launches (launch.h), in a translation unit of their
// own so that the kernel alone is built at ptxas -O1 (kernels/CMakeLists.txt):
// ptxas's default -O3 reorders and renames the FMA loop's registers so that
// about a fifth of its FFMAs read two registers of one bank (sm_90 SASS of the
// 64 x 128 split-K loop: 223 of 1024 against 108 at -O1). Measured on an H100
// (docs/benchmarks.md), -O1 against -O3: 2048^3 92.3% of cuBLAS against
// 89.4%, 4096^3 95.3% against 92.6%, 8192^3 97.6% against 95.0%, 3072^3 108%
// against 104%; batches 128^3 x 1024 106% against 104%, 256^3 x 256 107%
// against 110%, 512^3 x 64 91% against 92%.
#include <algorithm>
#include <type_traits>

#include "kernels/launch.h"
#include "kernels/sgemm_warp_tiled.cuh"

namespace matserve::kernels {
namespace {

template <typename S, bool kVectorA, bool kVectorB, bool kSplitK,
          bool kPersistent, bool kWholeSteps = false>
cudaError_t LaunchKernel(const Batch& p, int64_t tiles_m, int64_t tiles_n,
                         int64_t splits, int64_t k_per_split,
                         cudaStream_t stream) {
  constexpr int kGroup = 8;
  constexpr auto kKernel =
      SgemmWarpTiledKernel<S, kVectorA, kVectorB, kSplitK, kGroup, kWholeSteps,
                           kPersistent>;
  int64_t blocks = GridBlocks(tiles_m * tiles_n * splits, p.count);
  if (blocks < 0) return cudaErrorInvalidConfiguration;
  if (cudaError_t error = AllowSharedMemory<kKernel>(S::kSharedBytes)) {
    return error;
  }
  if constexpr (kPersistent) {
    int64_t resident = 0;
    if (cudaError_t error =
            ResidentBlocks<kKernel>(S::kThreads, S::kSharedBytes, &resident)) {
      return error;
    }
    blocks = std::min(blocks, resident);
  }
  return LaunchOverlapped(kKernel, blocks, S::kThreads, S::kSharedBytes, stream,
                          p.m, p.n, p.k, p.a, p.lda, p.stride_a, p.b, p.ldb,
                          p.stride_b, p.c, p.ldc, p.stride_c, tiles_m, tiles_n,
                          splits, k_per_split, p.count);
}

}  // namespace

template <typename S, bool kSplitK, bool kPersistent>
cudaError_t LaunchWarpTiled(const Batch& p, int64_t tiles_m, int64_t tiles_n,
                            int64_t splits, int64_t k_per_split,
                            cudaStream_t stream) {
  constexpr bool kP = kPersistent;
  if (p.VectorA() && p.VectorB()) {
    return LaunchKernel<S, true, true, kSplitK, kP, true>(
        p, tiles_m, tiles_n, splits, k_per_split, stream);
  }
  // With an operand element by element, in unchecked steps or not.
  auto launch = [&](auto whole_steps) {
    constexpr bool kWhole = decltype(whole_steps)::value;
    auto kernel =
        p.VectorA()   ? LaunchKernel<S, true, false, kSplitK, kP, kWhole>
        : p.VectorB() ? LaunchKernel<S, false, true, kSplitK, kP, kWhole>
                      : LaunchKernel<S, false, false, kSplitK, kP, kWhole>;
    return kernel(p, tiles_m, tiles_n, splits, k_per_split, stream);
  };
  // Unchecked steps element by element need the edge tiles to fit inside
  // the matrix (kShiftEdges in sgemm_warp_tiled.cuh).
  if constexpr (!kPersistent) {
    if (p.m >= S::kBlockM && p.n >= S::kBlockN) return launch(std::true_type{});
  }
  return launch(std::false_type{});
}

// The launches kernels.cu makes.
using LaunchWarpTiledFunction = cudaError_t(const Batch&, int64_t, int64_t,
                                            int64_t, int64_t, cudaStream_t);
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledWide, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledWide, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledTall, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledTall, true>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledWide>, false>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledWide>, true>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledTall>, false>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledTall>, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledSmall, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledSmall, true>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledBig, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledBigAlone, false>;
template LaunchWarpTiledFunction LaunchWarpTiled<WarpTiledOneTile, false, true>;
template LaunchWarpTiledFunction
    LaunchWarpTiled<LongSteps<WarpTiledOneTile>, false, true>;

}  // namespace matserve::kernels
