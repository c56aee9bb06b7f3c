// LaunchWarpTiled (launch.h): the warp-tiled kernel's launches, for the
// translation units that instantiate them shape by shape at their ptxas levels
// (sgemm_warp_tiled.cu and sgemm_warp_tiled_wide.cu at -O1,
// sgemm_warp_tiled_o3.cu at -O3). The helpers' namespace is unnamed: each unit
// keeps its own copies.
#ifndef MATSERVE_KERNELS_LAUNCH_WARP_TILED_CUH_
#define MATSERVE_KERNELS_LAUNCH_WARP_TILED_CUH_

#include <cuda.h>

#include <algorithm>
#include <climits>
#include <type_traits>

#include "kernels/launch.h"
#include "kernels/sgemm_warp_tiled.cuh"

namespace matserve::kernels {
namespace {

constexpr int kGroup = 8;

// Sets *overlapped to whether kKernel (of shape S) launches over `blocks`
// blocks, `bytes` of dynamic shared memory each, as a programmatic dependent
// launch (Launch in launch.h). The one-warp 32 x 32 tiles launch plain where
// their grid fills over half of the blocks the GPU holds at once but at most
// kMostPlainFill: the next grid's blocks, let in while this one runs, take the
// slots it leaves free and then those its first blocks to finish free, and
// stack unevenly on the SMs. Measured on an H200 back to back against
// overlapped launches (ms, docs/benchmarks.md, session 44; means of two rounds;
// the GPU holds 2112 of these blocks at once, 16 an SM, by the batches the rule
// switched): 270x131x130 x 30 (1350 blocks) 0.0192 against 0.0214, 200x131x130
// x 40 (1400) 0.0192 against 0.0220, 160^3 x 60 (1500) 0.0199 against 0.0221,
// 530x251x260 x 10 (1530) 0.0305 against 0.0336, and with the rule set, three
// fresh batches: 310x121x140 x 30 (1500) 0.0181 against 0.0198, 260x131x130 x
// 33 (1485) 0.0199 against 0.0217, 150x151x150 x 60 (1500) 0.0218 against
// 0.0236. With more blocks, launched plain, they lost: 330x131x130 x 30 (1650)
// 0.0231 against 0.0229, 72^3 x 200 (1800) 0.0145 against 0.0140, 300x101x150 x
// 40 (2000) 0.0209 against 0.0197. Other tiles launched plain over half a round
// and in one were mostly behind (318^3 x 16 0.0396 against 0.0391, 512^3 x 6
// 0.0437 against 0.0427; 450x451x450 x 5 0.0431 against 0.0444).
template <typename S, auto kKernel>
cudaError_t OverlapsPriorGrid(int64_t blocks, int bytes, bool* overlapped) {
  constexpr double kMostPlainFill = 0.75;
  *overlapped = true;
  if constexpr (S::kThreads == 32) {
    int64_t slots = 0;
    if (cudaError_t error =
            ResidentBlocks<kKernel>(S::kThreads, bytes, &slots)) {
      return error;
    }
    *overlapped = 2 * blocks <= slots || blocks > kMostPlainFill * slots;
  }
  return cudaSuccess;
}

// Launches kKernel (an instance of SgemmWarpTiledKernel of shape S) over p in
// `blocks` blocks with `bytes` of dynamic shared memory.
template <typename S, auto kKernel, bool kBulk>
cudaError_t LaunchOver(const Batch& p, int64_t blocks, int bytes,
                       int64_t tiles_m, int64_t tiles_n, int64_t splits,
                       int64_t k_per_split, const BulkMaps<kBulk>& maps,
                       cudaStream_t stream) {
  bool overlapped = true;
  if (cudaError_t error =
          OverlapsPriorGrid<S, kKernel>(blocks, bytes, &overlapped)) {
    return error;
  }
  return Launch(overlapped, kKernel, blocks, S::kThreads, bytes, stream, p.m,
                p.n, p.k, p.a, p.lda, p.stride_a, p.b, p.ldb, p.stride_b, p.c,
                p.ldc, p.stride_c, tiles_m, tiles_n, splits, k_per_split,
                p.count, maps, p.wait_at_end);
}

template <typename S, int kWidthA, int kWidthB, bool kSplitK, bool kPersistent,
          bool kWholeSteps = false, bool kRealignC = false,
          bool kAlternatePairs = false>
cudaError_t LaunchKernel(const Batch& p, int64_t tiles_m, int64_t tiles_n,
                         int64_t splits, int64_t k_per_split,
                         cudaStream_t stream) {
  constexpr auto kKernel =
      SgemmWarpTiledKernel<S, kWidthA, kWidthB, kSplitK, kGroup, kWholeSteps,
                           kPersistent, false, false, kRealignC,
                           kAlternatePairs>;
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
  return LaunchOver<S, kKernel>(p, blocks, S::kSharedBytes, tiles_m, tiles_n,
                                splits, k_per_split, BulkMaps<false>(), stream);
}

// Launches the kernel of shape S with bulk copies over p (every row of A and
// B on 16 bytes), if it was built for the device and the driver can describe
// p's operands as tensors; sets *launched to whether it did. Its blocks per
// SM are held to the launch bounds' (its loop needs fewer registers than the
// copies by cp.async, and more blocks would make other rounds than the split
// rules count on). Measured on an H100, with bulk copies for every launch on
// 16 bytes, against the kernel as built, four 64-wide blocks per SM (ms):
// 256^3 x 45 0.0394 against 0.0440, 384^3 x 71 0.1803 against 0.1918, 512^3
// x 40 0.2328 against 0.2493, 600^3 x 3 0.0484 against 0.0546; four led where
// their rounds filled better (256^3 x 238 0.1836 against 0.1743, 512x128x512
// x 200 0.3230 against 0.3020), which the split rules do not count.
template <typename S, bool kSplitK>
cudaError_t LaunchBulk(const Batch& p, int64_t tiles_m, int64_t tiles_n,
                       int64_t splits, int64_t k_per_split, cudaStream_t stream,
                       bool* launched) {
  constexpr auto kKernel =
      SgemmWarpTiledKernel<S, 4, 4, kSplitK, kGroup, false, false, true>;
  constexpr CUtensorMapSwizzle kSwizzleA =
      S::kBlockK == 32 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
  static_assert(S::kBlockK == 32 || S::kBlockK == 16, "a swizzle of A's rows");
  *launched = false;
  bool built = false;
  if (cudaError_t error = BuiltForBulkCopies<kKernel>(&built)) return error;
  BulkMaps<true> maps;
  // The copies' coordinates are ints.
  if (!built || p.m > INT_MAX || p.n > INT_MAX || p.count > INT_MAX ||
      !BatchTensorMap(p.a, p.m, p.k, p.lda, p.stride_a, p.count, S::kBlockM,
                      S::kBlockK, kSwizzleA, &maps.a) ||
      !BatchTensorMap(p.b, p.k, p.n, p.ldb, p.stride_b, p.count, S::kBlockK,
                      S::kBlockN, CU_TENSOR_MAP_SWIZZLE_NONE, &maps.b)) {
    return cudaSuccess;
  }
  const int64_t blocks = GridBlocks(tiles_m * tiles_n * splits, p.count);
  if (blocks < 0) return cudaErrorInvalidConfiguration;
  int64_t bytes = 0;
  if (cudaError_t error = HoldBlocksPerSm<kKernel>(
          S::kThreads, S::kBulkSharedBytes, S::kMinBlocksPerSm, &bytes)) {
    return error;
  }
  *launched = true;
  return LaunchOver<S, kKernel>(p, blocks, static_cast<int>(bytes), tiles_m,
                                tiles_n, splits, k_per_split, maps, stream);
}

// Launches the grouped kernel of shape S, pieces kWidth wide.
template <typename S, int kWidth, bool kWholeSteps>
cudaError_t LaunchGroupedKernel(const GroupedGemmEntry* entries, int64_t count,
                                int64_t blocks, cudaStream_t stream) {
  constexpr auto kKernel =
      SgemmWarpTiledKernel<S, kWidth, kWidth, false, kGroup, kWholeSteps, false,
                           false, true>;
  if (cudaError_t error = AllowSharedMemory<kKernel>(S::kSharedBytes)) {
    return error;
  }
  // Each problem's sizes and pointers come from its entry: the batch's are
  // unused, but for one split and one problem.
  const float* const none = nullptr;
  return LaunchOverlapped(kKernel, blocks, S::kThreads, S::kSharedBytes, stream,
                          0, 0, 0, none, 0, 0, none, 0, 0, nullptr, 0, 0, 0, 0,
                          /*splits=*/1, 0, /*count=*/1,
                          GroupedTable{entries, count}, /*wait_at_end=*/false);
}

}  // namespace

template <typename S, bool kSplitK, bool kPersistent>
cudaError_t LaunchWarpTiled(const Batch& p, int64_t tiles_m, int64_t tiles_n,
                            int64_t splits, int64_t k_per_split,
                            cudaStream_t stream) {
  constexpr bool kP = kPersistent;
  if (p.VectorOperands()) {
    // Bulk copies where rows don't all start on 128-byte lines (cp.async
    // copies of such rows took 43% more L1 tag requests, and their address
    // registers stalled the loop: docs/benchmarks.md, session 19) and for the
    // 128 x 128 tiles. Measured on an H100 against cp.async for all (ms,
    // docs/benchmarks.md, session 20): 260^3 x 43 0.0730 against 0.0896, 900^3
    // x 5 0.2221 against 0.2559, 1000^3 x 2 0.0989 against 0.1060,
    // 1000x300x2000 0.0360 against 0.0378; 128 x 128 tiles on 128-byte lines
    // 512^3 x 64 0.3530 against 0.3680, 2048^3 0.3495 against 0.3592, 1024^3 x
    // 2 0.0967 against 0.0987, but 4096x64x4096 (two K steps) 0.0645 against
    // 0.0630. With 64-wide tiles on 128-byte lines, bulk copies lost where K
    // splits (4096^3 2.735 against 2.642, 768^3 x 2 0.0569 against 0.0543) and
    // measured even elsewhere.
    if constexpr (!kPersistent && S::kBulkable) {
      if (kWholeK<S> || !p.OperandsOnLines()) {
        bool launched = false;
        const cudaError_t error = LaunchBulk<S, kSplitK>(
            p, tiles_m, tiles_n, splits, k_per_split, stream, &launched);
        if (error || launched) return error;
      }
    }
    return LaunchKernel<S, 4, 4, kSplitK, kP, true>(p, tiles_m, tiles_n, splits,
                                                    k_per_split, stream);
  }
  // With an operand in pairs (where kPairsOfA, kPairsOfB) or element by
  // element, in unchecked steps or not.
  auto launch = [&](auto whole_steps) {
    constexpr bool kWhole = decltype(whole_steps)::value;
    const int width_b = p.WidthB();
    auto with_width_a = [&](auto width_a) {
      constexpr int kA = decltype(width_a)::value;
      auto kernel = LaunchKernel<S, kA, 1, kSplitK, kP, kWhole>;
      if constexpr (kPairsOfB<S>) {
        if (width_b == 2) kernel = LaunchKernel<S, kA, 2, kSplitK, kP, kWhole>;
      }
      if constexpr (kA != 4) {  // else B's rows are off 16 bytes
        if (width_b == 4) kernel = LaunchKernel<S, kA, 4, kSplitK, kP, kWhole>;
      }
      // A element by element in rows an odd number of elements apart, and B
      // too if it goes so: every other row in pairs (kAlternatePairs). Two
      // blocks to an SM, only where B goes so too (AlternatesBothOperands).
      if constexpr (kA == 1 && kWhole && kAlternatePairsOf<S>) {
        if constexpr (S::kMinBlocksPerSm == 1) {
          if (p.lda % 2 != 0 && (width_b != 1 || p.ldb % 2 != 0)) {
            kernel =
                width_b == 4
                    ? LaunchKernel<S, 1, 4, kSplitK, kP, true, false, true>
                : width_b == 2
                    ? LaunchKernel<S, 1, 2, kSplitK, kP, true, false, true>
                    : LaunchKernel<S, 1, 1, kSplitK, kP, true, false, true>;
          }
        } else {
          if (AlternatesBothOperands<S>(p)) {
            kernel = LaunchKernel<S, 1, 1, kSplitK, kP, true, false, true>;
          }
        }
      }
      // Split K into C's rows off 16 bytes (B's too, in a packed batch),
      // realigned in parts of K from kMinRealignedK.
      if constexpr (kSplitK && kWhole) {
        if (width_b != 4 && !p.VectorC() && AddsRealigned<S>(p, k_per_split)) {
          kernel = LaunchKernel<S, kA, 1, true, false, true, true>;
          if constexpr (kPairsOfB<S>) {
            if (width_b == 2)
              kernel = LaunchKernel<S, kA, 2, true, false, true, true>;
          }
        }
      }
      return kernel(p, tiles_m, tiles_n, splits, k_per_split, stream);
    };
    using std::integral_constant;
    switch (p.WidthA()) {
      case 4:
        return with_width_a(integral_constant<int, 4>{});
      case 2:
        if constexpr (kPairsOfA<S>) {
          return with_width_a(integral_constant<int, 2>{});
        }
        [[fallthrough]];
      default:
        return with_width_a(integral_constant<int, 1>{});
    }
  };
  if constexpr (!kPersistent) {
    if (UncheckedSteps<S>(p)) return launch(std::true_type{});
  }
  return launch(std::false_type{});
}

template <typename S>
cudaError_t LaunchWarpTiledGrouped(const GroupedGemmEntry* entries,
                                   int64_t count, int64_t blocks, int width,
                                   cudaStream_t stream) {
  if (width == 4) {
    return LaunchGroupedKernel<S, 4, true>(entries, count, blocks, stream);
  }
  if constexpr (kPairsOfA<S>) {
    if (width == 2) {
      return LaunchGroupedKernel<S, 2, false>(entries, count, blocks, stream);
    }
  }
  return LaunchGroupedKernel<S, 1, false>(entries, count, blocks, stream);
}

// The launches kernels.cu makes.
using LaunchWarpTiledFunction = cudaError_t(const Batch&, int64_t, int64_t,
                                            int64_t, int64_t, cudaStream_t);

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_LAUNCH_WARP_TILED_CUH_
