// Host launchers for the kernels declared in kernels.h.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/launch.h"
#include "kernels/pad_rows.cuh"
#include "kernels/sgemm_naive.cuh"
#include "kernels/sgemm_per_warp.cuh"
#include "kernels/sgemm_register_blocked.cuh"
#include "kernels/sgemm_small_tile.cuh"
#include "kernels/sgemm_staged.cuh"
#include "kernels/sgemm_strip.cuh"
#include "kernels/sgemm_tiled.cuh"
#include "kernels/sgemm_warp_tiled.cuh"
#include "kernels/transpose_tiled.cuh"
#include "kernels/transpose_wide.cuh"

// The transpose rungs past the first two.
#include "kernels/transpose_large_tile.cuh"
#include "kernels/transpose_packed.cuh"

namespace matserve::kernels {
namespace {

// Launches `kernel` with one kBlock x kBlock thread block per kBlock x kBlock
// tile of C (the naive and tiled rungs).
template <int kBlock, typename Kernel>
cudaError_t LaunchBlockPerTile(Kernel kernel, int64_t m, int64_t n, int64_t k,
                               const float* a, const float* b, float* c,
                               cudaStream_t stream) {
  const int64_t tiles_n = CeilDiv(n, kBlock);
  const int64_t blocks = GridBlocks(CeilDiv(m, kBlock), tiles_n);
  if (blocks < 0) return cudaErrorInvalidConfiguration;
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

Batch Single(int64_t m, int64_t n, int64_t k, const float* a, const float* b,
             float* c) {
  return {m, n, k, a, 0, b, 0, c, 0, 1};
}

cudaError_t SgemmRegisterBlocked(const Batch& p, cudaStream_t stream) {
  using S = RegisterBlockedShape;
  constexpr int kGroup = 8;
  const int64_t tiles_m = CeilDiv(p.m, S::kBlockM);
  const int64_t tiles_n = CeilDiv(p.n, S::kBlockN);
  const int64_t blocks = GridBlocks(tiles_m * tiles_n, p.count);
  if (blocks < 0) return cudaErrorInvalidConfiguration;
  auto kernel = p.Vectorized() ? SgemmRegisterBlockedKernel<true, kGroup>
                               : SgemmRegisterBlockedKernel<false, kGroup>;
  kernel<<<static_cast<unsigned>(blocks), S::kThreads, 0, stream>>>(
      p.m, p.n, p.k, p.a, p.stride_a, p.b, p.stride_b, p.c, p.stride_c, tiles_m,
      tiles_n);
  return cudaGetLastError();
}

// How many parts a single product of `tiles` block tiles splits K into, on a
// GPU that holds `slots` blocks at once. Blocks run in rounds of `slots`, and
// a last round only partly full leaves SMs idle (at 2048^3, 1.3 rounds cost
// the kernel a fifth of its speed against 3.9 rounds with K split in 3). So:
// of the splits that leave between kMinSplitK and kMaxSplitK of K to each
// (at most kMostSplits), the fewest whose rounds are on average at least
// kFullRounds full, else the fullest. Measured on an H200
// (docs/benchmarks.md): this splits 1024^3 in 3 (124% of cuBLAS; 1, 2, 4:
// 118%, 116%, 100%), 1536^3 in 4 (118%; 1: 95%), 2048^3 in 3 (89%; 1: 72%),
// 4096^3 in 3 (92%; 1: 90%) and 8192^3 in 2 (94%; 1: 92.5%: splits of K over
// 4096 keep more of the operands in L2).
constexpr double kFullRounds = 0.95;
constexpr int64_t kMaxSplitK = 4096;

// How full, on average, the rounds of `blocks` blocks are on a GPU that holds
// `slots` at once.
double RoundsFill(int64_t blocks, int64_t slots) {
  return static_cast<double>(blocks) / (CeilDiv(blocks, slots) * slots);
}

constexpr int64_t kMinSplitK = 64;

// The counts of parts K may split into: parts of at most kMaxSplitK and at
// least min_split_k of K, at most kMostSplits of them (at least one count).
struct SplitCounts {
  int64_t fewest, most;
};
SplitCounts AllowedSplits(int64_t k, int64_t min_split_k) {
  constexpr int64_t kMostSplits = 64;
  const int64_t fewest = std::max<int64_t>(1, CeilDiv(k, kMaxSplitK));
  return {fewest, std::max(fewest, std::min(k / min_split_k, kMostSplits))};
}

int64_t SplitCount(int64_t tiles, int64_t k, int64_t slots,
                   int64_t min_split_k = kMinSplitK) {
  const auto [fewest, most] = AllowedSplits(k, min_split_k);
  auto fill = [&](int64_t splits) { return RoundsFill(tiles * splits, slots); };
  int64_t fullest = fewest;
  for (int64_t s = fewest; s <= most; ++s) {
    if (fill(s) >= kFullRounds) return s;
    if (fill(s) > fill(fullest)) fullest = s;
  }
  return fullest;
}

// How many warp-tiled blocks of shape S the current device holds at once.
template <typename S>
cudaError_t WarpTiledSlots(int64_t* slots) {
  int64_t sms = 0;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  *slots = sms * S::kMinBlocksPerSm;
  return cudaSuccess;
}

// The problems of a batch (`count` of `tiles` block tiles each) that run
// with K unsplit, the rest running afterwards split along K (SplitCount over
// their tiles). Blocks run in rounds of `slots`; where the batch fills at
// most kMostRounds of them and leaves the next under half full, the problems
// of that last part split. Measured on an H200 against no split (% of
// cuBLAS's strided batch): 256^3 x 20, x 52, x 60, x 100: 117/102/94/111%
// against 112/80/83/99%; 512^3 x 5, x 13, x 25: 108/105/113% against
// 96/77/106%; 200x1000x300 x 55: 97% against 91%; with 3 or 4 full rounds
// (64-wide tiles; ms, docs/benchmarks.md, session 15): 256^3 x 150 0.1227
// against 0.1376, 256^3 x 200 0.1597 against 0.1737, 512^3 x 40 0.2342
// against 0.2592, 512^3 x 50 0.2967 against 0.3049, 1024^3 x 10 0.4564
// against 0.5027, 640^3 x 25 0.2934 against 0.3205, 300^3 x 80 0.1589 against
// 0.1659; 200x1000x300 x 40, 1024^3 x 13 and 512x256x1024 x 100 even. With
// more rounds the split gained little or lost (256^3 x 300 0.2317 against
// 0.2420, 768^3 x 30 0.5857 against 0.5757, 640^3 x 50 0.5617 against 0.5485,
// 768^3 x 40 0.7645 against 0.7473; 512^3 x 100 and 256^3 x 500 even), and so
// it did with K under kMinK (128^3 x 400, K split in two: -9 points) and
// where the last round was over half full (256^3 x 30, 512^3 x 10, all split:
// 97% and 110% against 123% and 119%; 384^3 x 100 0.2594 against 0.2502).
// Splitting every problem of a large batch lost too (128^3 x 1024, 256^3 x
// 256 and 512^3 x 64: 86%, 94% and 85% against 107%, 109% and 90% unsplit).
int64_t UnsplitProblems(int64_t tiles, int64_t count, int64_t k,
                        int64_t slots) {
  constexpr int64_t kMostRounds = 4;
  constexpr int64_t kMinK = 256;
  const int64_t full_rounds = tiles * count / slots;
  const int64_t last_round = tiles * count % slots;
  if (full_rounds > kMostRounds || 2 * last_round >= slots || k < kMinK ||
      2 * tiles > slots) {
    return count;
  }
  return full_rounds * slots / tiles;
}

constexpr int64_t kMinBatchSplitK = 256;

// Whether every problem of a batch splits K, in parts of at least
// kMinBatchSplitK, in place of UnsplitProblems' plan, which leaves `unsplit`
// of them whole: where those whole problems fill their rounds under kPoorFill
// and such parts fill them better. Measured on an H200 against that plan (ms,
// docs/benchmarks.md, session 15): 900^3 x 2 0.0998 against 0.1101, 1000^3 x 2
// 0.1057 against 0.1145, 1024^3 x 2 0.1031 against 0.1069, 800^3 x 3 0.0849
// against 0.0880, 1536^3 x 2 0.3158 against 0.3537 and x 3 0.4786 against
// 0.5499 (one and two problems whole before the rest split). Where the whole
// problems filled their rounds better, splitting all lost: 512^3 x 13 0.1064
// against 0.0865 and x 25 0.1811 against 0.1553 (12 and 24 whole, 97% full),
// 768^3 x 9 0.1908 against 0.1823 (all whole, 82% full); and where
// UnsplitProblems already splits all, parts of at least kMinBatchSplitK lost
// to its shorter ones at 200x1100x136 x 3 (0.0232 against 0.0186), though not
// at 512^3 x 5 (0.0422 against 0.0452).
bool SplitsWholeBatch(int64_t tiles, int64_t count, int64_t unsplit, int64_t k,
                      int64_t slots) {
  constexpr double kPoorFill = 0.75;
  return unsplit > 0 && RoundsFill(tiles * unsplit, slots) < kPoorFill &&
         SplitCount(tiles * count, k, slots, kMinBatchSplitK) > 1;
}

// How many problems of the batch p (`tiles` block tiles each, on a GPU that
// holds `slots` blocks at once) run with K whole, as UnsplitProblems and
// SplitsWholeBatch say; the rest split K in parts of at least *min_split_k.
int64_t WholeProblems(const Batch& p, int64_t tiles, int64_t slots,
                      int64_t* min_split_k) {
  *min_split_k = kMinSplitK;
  const int64_t unsplit = UnsplitProblems(tiles, p.count, p.k, slots);
  if (!SplitsWholeBatch(tiles, p.count, unsplit, p.k, slots)) return unsplit;
  *min_split_k = kMinBatchSplitK;
  return 0;
}

// The depth of each part where K splits in `splits` in tiles of shape S (a
// whole number of steps; the last part may be shorter).
template <typename S>
int64_t PartK(int64_t k, int64_t splits) {
  return RoundUp(CeilDiv(k, splits), S::kBlockK);
}

// How many parts K splits into for a batch's split problems (`tiles` block
// tiles of shape S in all, on a GPU that holds `slots` at once): of the
// counts AllowedSplits gives, the one whose rounds of blocks take least, a
// round taking as long as its part of K and kOverheadK more (the block's start
// and its adds into C). SplitCount's fullest rounds (a single product's rule)
// took many short parts: 836^3 x 2 in 128 x 64 tiles split in 11 (parts of 80)
// where this splits in 2. Measured on an H200 against SplitCount (ms,
// docs/benchmarks.md, session 39): 836^3 x 2 0.0690 against 0.0827 (cuBLAS
// 0.0689), 512^3 x 5 0.0422 against 0.0454, 800^3 x 2 0.0640 against 0.0660,
// 200x1000x300 x 55 0.2170 against 0.2239, 768^3 x 2 0.0539 against 0.0534;
// with kOverheadK 96, 768^3 x 2 (0.0595) and 640^3 x 3 (0.0514 against
// 0.0448) lost.
template <typename S>
int64_t BatchSplitCount(int64_t tiles, int64_t k, int64_t slots,
                        int64_t min_split_k) {
  constexpr int64_t kOverheadK = 32;
  const auto [fewest, most] = AllowedSplits(k, min_split_k);
  int64_t best = fewest, best_time = INT64_MAX;
  for (int64_t s = fewest; s <= most; ++s) {
    const int64_t part = PartK<S>(k, s);
    const int64_t time =
        CeilDiv(tiles * CeilDiv(k, part), slots) * (part + kOverheadK);
    if (time < best_time) best = s, best_time = time;
  }
  return best;
}

// How p runs in tiles of shape S: its first *unsplit problems with K whole,
// the rest with K in *splits parts (1: none split). A single product splits
// as SplitCount says, a batch as WholeProblems and BatchSplitCount, and the
// shapes that keep K whole (kWholeK) not at all. The four-warp 64 x 64 tiles
// (WarpTiledQuad, as SgemmQuadTiles plans them) split K where every problem
// does, but where WholeProblems would split only the last problems, after a
// round or more of whole ones, none. Measured on an H100 against the last
// problems split (ms, docs/benchmarks.md, session 34): on 16 bytes, 272^3 x 37
// 0.0607 against 0.0704, 192x256x192 x 100 0.0543 against 0.0623, x 90 0.0538
// against 0.0565, 180x256x180 x 100 0.0592 against 0.0652, 176x320x176 x 100
// 0.0699 against 0.0778, 192x512x192 x 90 0.0968 against 0.0988; with an
// operand off 16 bytes, 190x300x191 x 80 0.0596 against 0.0741, 170x301x171 x
// 100 0.0670 against 0.0833, 170x300x170 x 150 0.0962 against 0.1062,
// 120x400x121 x 200 0.0821 against 0.0931; with long K, 100x1000x101 x 200
// 0.1938 against 0.1916. (Planned like the others, batches whose 128 x 128
// tiles filled under half a round split, though their kernel ran K whole, and
// so padded C for nothing where its rows don't start on 16 bytes: 380x300x250 x
// 20 0.0566 ms against 0.0412, H100, docs/benchmarks.md, session 19.)
//
// PlanSplitsOn plans for a GPU that holds `slots` blocks of S at once.
template <typename S>
void PlanSplitsOn(const Batch& p, int64_t slots, int64_t* unsplit,
                  int64_t* splits) {
  if constexpr (kWholeK<S>) {
    *unsplit = p.count;
    *splits = 1;
    return;
  }
  const int64_t tiles = CeilDiv(p.m, S::kBlockM) * CeilDiv(p.n, S::kBlockN);
  int64_t min_split_k = kMinSplitK;
  *unsplit = p.count == 1 ? 0 : WholeProblems(p, tiles, slots, &min_split_k);
  if (std::is_same_v<S, WarpTiledQuad> && *unsplit > 0) *unsplit = p.count;
  const int64_t rest = p.count - *unsplit;
  if (rest == 0) {
    *splits = 1;
  } else if (p.count == 1) {
    *splits = SplitCount(tiles, p.k, slots, min_split_k);
  } else {
    *splits = BatchSplitCount<S>(tiles * rest, p.k, slots, min_split_k);
  }
}

template <typename S>
cudaError_t PlanSplits(const Batch& p, int64_t* unsplit, int64_t* splits) {
  int64_t slots = 0;
  if (cudaError_t error = WarpTiledSlots<S>(&slots)) return error;
  PlanSplitsOn<S>(p, slots, unsplit, splits);
  return cudaSuccess;
}

// How many parts K splits into in tiles of shape S (PlanSplits).
template <typename S>
cudaError_t WarpTiledSplits(const Batch& p, int64_t* splits) {
  int64_t unsplit = 0;
  return PlanSplits<S>(p, &unsplit, splits);
}

// C = 0 for the problems of p (rows ldc apart, the padding past n zeroed too),
// as one matrix where they lie one after another.
cudaError_t ZeroC(const Batch& p, cudaStream_t stream) {
  constexpr int kThreads = 256;
  constexpr int kRuns = 4;
  const bool one = p.OneMatrixC();
  const int64_t floats = p.m * p.ldc * (one ? p.count : 1);
  const int64_t blocks_each = CeilDiv(floats, kThreads * kRuns);
  return LaunchOverlapped(ZeroKernel<kThreads, kRuns>,
                          blocks_each * (one ? 1 : p.count), kThreads, 0,
                          stream, p.c, floats, p.stride_c, blocks_each);
}

// Runs p in warp-tiled blocks of shape S as planned: its first `unsplit`
// problems with K whole, the rest with K in `splits` parts (PlanSplits). Where
// S has kOverlappedTail (sgemm_warp_tiled.cuh), such a split tail runs beside
// the whole problems' last blocks: C is zeroed before the whole problems, and
// the tail's blocks wait for them only at their end (Batch::wait_at_end), so
// that they take the slots those leave as they finish. Measured on an H200
// against the tail after the whole problems (ms, docs/benchmarks.md, session
// 59; medians of two or three rounds): 577^3 x 40 0.4238 against 0.4426 (cuBLAS
// 0.4304), 449^3 x 50 0.2760 against 0.2916, 545x855x1073 x 6 0.1831 against
// 0.2025, 860x264x756 x 5 0.0568 against 0.0613, 1021x1064x960 x 11 0.5066
// against 0.5456, 529^3 x 40 0.3570 against 0.3632; behind at 576x577x576 x 40
// (0.3680 against 0.3627), 954x848x828 x 17 (0.5101 against 0.5021) and
// 385x600x385 x 50 (0.2620 against 0.2592). In K steps of 32 every such batch
// lost: 539x819x883 x 28 0.5923 against 0.5492, 985x1032x736 x 18 0.6706
// against 0.6261, 370x904x536 x 65 0.6189 against 0.5780, 256x1024x256 x 200
// 0.5756 against 0.5666.
template <typename S>
cudaError_t SgemmWarpTiledPlanned(const Batch& p, int64_t unsplit,
                                  int64_t splits, cudaStream_t stream) {
  // The kernel keeps K positions in an int.
  if (p.k > INT_MAX / 2) return SgemmRegisterBlocked(p, stream);
  const int64_t tiles_m = CeilDiv(p.m, S::kBlockM);
  const int64_t tiles_n = CeilDiv(p.n, S::kBlockN);
  const int64_t whole_k = RoundUp(p.k, S::kBlockK);
  // The 128 x 128 tiles (kWholeK) have no split-K kernel: TakesBigTiles takes
  // them only where they fill their rounds unsplit (or fit one to an SM), and
  // PlanSplits splits nothing for them.
  if constexpr (!kWholeK<S>) {
    if (splits > 1) {
      Batch rest = p;
      rest.count -= unsplit;
      rest.a += unsplit * p.stride_a;
      rest.b += unsplit * p.stride_b;
      rest.c += unsplit * p.stride_c;
      rest.wait_at_end = unsplit > 0 && kOverlappedTail<S>;
      const int64_t k_per_split = PartK<S>(p.k, splits);
      if (!rest.c_zeroed && rest.wait_at_end) {
        if (cudaError_t error = ZeroC(rest, stream)) return error;
      }
      if (unsplit > 0) {
        Batch head = p;
        head.count = unsplit;
        if (cudaError_t error = LaunchWarpTiled<S, false>(
                head, tiles_m, tiles_n, 1, whole_k, stream)) {
          return error;
        }
      }
      if (!rest.c_zeroed && !rest.wait_at_end) {
        if (cudaError_t error = ZeroC(rest, stream)) return error;
      }
      return LaunchWarpTiled<S, true>(rest, tiles_m, tiles_n,
                                      CeilDiv(p.k, k_per_split), k_per_split,
                                      stream);
    }
  }
  return LaunchWarpTiled<S, false>(p, tiles_m, tiles_n, 1, whole_k, stream);
}

// Runs p in warp-tiled blocks of shape S, K split as PlanSplits<S> says; a
// batch's two-warp 64 x 64 tiles with A off 16 bytes in three stages
// (WarpTiledSmallOffLines), which plan alike.
template <typename S>
cudaError_t SgemmWarpTiledAs(const Batch& p, cudaStream_t stream) {
  if constexpr (std::is_same_v<S, WarpTiledSmall>) {
    if (p.count > 1 && !p.VectorA()) {
      return SgemmWarpTiledAs<WarpTiledSmallOffLines>(p, stream);
    }
  }
  int64_t unsplit = 0, splits = 1;
  if (cudaError_t error = PlanSplits<S>(p, &unsplit, &splits)) return error;
  return SgemmWarpTiledPlanned<S>(p, unsplit, splits, stream);
}

// The staged kernel's shape: four pairs of consumer warps, each with a ring of
// three stages (twelve of 16 KiB; thirteen fit). Measured on an H200 against
// the persistent warp-tiled blocks it replaces on 16 bytes (ms, three rounds;
// docs/benchmarks.md, session 13): 36^3 x 4096 0.0372 against 0.0615, 48^3 x
// 8192 0.0915 against 0.1136, 60x64x60 x 4096 0.0634 against 0.0799, 64^3 x
// 4096 0.0631 against 0.0679, 64^3 x 16384 0.2274 against 0.2572, 64x200x64 x
// 2048 0.0877 against 0.1018, 64x1000x64 x 500 0.0986 against 0.1176. Three,
// five or six pairs (rings of four, two, two) lost 8-26% at 64^3 x 4096, and
// so did pairs that feed themselves with no producer warp (52%).
using Staged = StagedShape<4, 3, 4>;

// Launches the staged kernel over p (a batch of one-tile problems, every row
// on 16 bytes): a block per SM, or per problem where there are fewer. Sets
// *launched to false, launching nothing, where the kernel was not built for
// the device or the driver cannot describe p's operands as tensors.
cudaError_t SgemmStaged(const Batch& p, cudaStream_t stream, bool* launched) {
  using S = Staged;
  constexpr auto kKernel = SgemmStagedKernel<S>;
  *launched = false;
  bool built = false;
  if (cudaError_t error = BuiltForBulkCopies<kKernel>(&built)) return error;
  CUtensorMap a_map, b_map;
  if (!built || p.count > INT_MAX ||
      !BatchTensorMap(p.a, p.m, p.k, p.lda, p.stride_a, p.count, S::kTile,
                      S::kSlabK, CU_TENSOR_MAP_SWIZZLE_128B, &a_map) ||
      !BatchTensorMap(p.b, p.k, p.n, p.ldb, p.stride_b, p.count, S::kSlabK,
                      S::kTile, CU_TENSOR_MAP_SWIZZLE_NONE, &b_map)) {
    return cudaSuccess;
  }
  if (cudaError_t error = AllowSharedMemory<kKernel>(S::kSharedBytes)) {
    return error;
  }
  int64_t sms = 0;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  *launched = true;
  return LaunchOverlapped(kKernel, std::min(p.count, sms), S::kThreads,
                          S::kSharedBytes, stream, a_map, b_map, p.m, p.n, p.k,
                          p.c, p.stride_c, p.count);
}

// The area of C that p's tiles of shape S cover.
template <typename S>
int64_t PaddedArea(const Batch& p) {
  return RoundUp(p.m, S::kBlockM) * RoundUp(p.n, S::kBlockN);
}

// Batches of problems under 128 on a side take 64 x 64 tiles. Where each
// problem is one tile, the staged kernel takes the batch if it can (every row
// on 16 bytes, a batch the driver can describe as tensors); otherwise the
// blocks stream through the batch (as many as fit on the GPU), each copying
// its next problem's first K steps while it finishes one. Measured on an H200
// against a block per problem: 64^3 x 4096 122% of cuBLAS's strided batch
// against 114% (the block per problem took 78 us, its copies alone 58 us and
// its arithmetic alone 60 us: they overlapped badly); 48^3 x 8192 and 64x200x64
// x 2048 within a point either way. Rings of 3-6 stages at 3-5 blocks per SM
// measured within 2 points of each other, and 2 stages 2-4 points ahead; 6
// blocks per SM lost 10 points. K steps of 32 (LongSteps), where K pads no
// further to them than to steps of 16, measured on an H200 against steps of 16
// (ms): 64^3 x 4096 0.0676 against 0.0698, 64x1000x64 x 500 0.1123 against
// 0.1172; where it pads further they lost (48^3 x 8192 0.1371 against 0.1137,
// 64x200x64 x 2048 0.1020 against 0.1010), and so did steps of 32 for 64 x 64
// tiles of problems over 64 (100x1000x100 x 200 0.1843 against 0.1749,
// 96x512x96 x 1000 0.3994 against 0.3867).
cudaError_t SgemmWarpTiledSmall(const Batch& p, cudaStream_t stream) {
  using S = WarpTiledOneTile;
  using Long = LongSteps<S>;
  if (p.count == 1 || p.m > S::kBlockM || p.n > S::kBlockN ||
      p.k > INT_MAX / 2) {
    return SgemmWarpTiledAs<WarpTiledSmall>(p, stream);
  }
  if (p.Vectorized()) {
    bool launched = false;
    const cudaError_t error = SgemmStaged(p, stream, &launched);
    if (error || launched) return error;
  }
  const int64_t whole_k = RoundUp(p.k, S::kBlockK);
  if (RoundUp(p.k, Long::kBlockK) == whole_k) {
    return LaunchWarpTiled<Long, false, true>(p, 1, 1, 1, whole_k, stream);
  }
  return LaunchWarpTiled<S, false, true>(p, 1, 1, 1, whole_k, stream);
}

// The shape whose tiles pad C less, 64 x 128 on a tie (as for the squares).
// Measured on an H200 against choosing 128 x 64 only for N <= 64
// (docs/benchmarks.md): 2000x2000x700 went from 98% of cuBLAS to 104%,
// 1000x1000x300 from 100% to 109%, 500x4000x900 from 85% to 95%, and
// 1000x3000x777 from 80% to 78%.
bool TallPadsLess(const Batch& p) {
  return PaddedArea<WarpTiledTall>(p) < PaddedArea<WarpTiledWide>(p);
}

// The area of C that p's 64-wide tiles cover, in the shape that pads it less.
int64_t WidePaddedArea(const Batch& p) {
  return std::min(PaddedArea<WarpTiledWide>(p), PaddedArea<WarpTiledTall>(p));
}

// The block tiles of shape S that `count` problems of m x n cover.
template <typename S>
int64_t Tiles(int64_t m, int64_t n, int64_t count) {
  return CeilDiv(m, S::kBlockM) * CeilDiv(n, S::kBlockN) * count;
}

template <typename S>
int64_t Tiles(const Batch& p) {
  return Tiles<S>(p.m, p.n, p.count);
}

// The rounds of blocks that p's tiles of shape S take on the current device.
template <typename S>
cudaError_t Rounds(const Batch& p, int64_t* rounds) {
  int64_t slots = 0;
  if (cudaError_t error = WarpTiledSlots<S>(&slots)) return error;
  *rounds = CeilDiv(Tiles<S>(p), slots);
  return cudaSuccess;
}

// Sets *small to whether a batch of problems at least 128 on a side takes 64 x
// 64 tiles (WarpTiledSmall) rather than the 64-wide shape S that
// WithWarpTiledShape would take. Where its rows allow 16-byte copies: where
// those tiles pad C less. Measured on an H200 against the shapes of
// WithWarpTiledShape (ms, docs/benchmarks.md, session 15): 136^3 x 1000 0.2670
// against 0.3548, 192^3 x 500 0.1724 against 0.2288, 300^3 x 300 0.4411
// against 0.5367, 448^3 x 100 0.3933 against 0.4559, 576^3 x 50 0.4224
// against 0.4631, 704^3 x 30 0.4492 against 0.4923, 832^3 x 20 0.5127 against
// 0.5246, 1088^3 x 8 0.4423 against 0.5024; where they pad C 3-5% less,
// 1984^3 x 3 0.9749 against 1.0350, 1472^3 x 4 even, 1216^3 x 6 0.4919
// against 0.4873, 2112^3 x 2 0.8434 against 0.8338. Where they pad C as much,
// they lost (256^3 x 256 0.2085 against 0.1945, 512^3 x 64 0.3767 against
// 0.3669, 640^3 x 25 0.3001 against 0.2934) or measured even (200^3 x 400,
// 240^3 x 300, 1000x200x500 x 100).
//
// Element by element: where they take fewer rounds of blocks than S's tiles
// (a round of either holds as many warp tiles, so it takes about as long),
// since each of their threads copies a third more elements per multiply-add.
// Measured on an H100 against S (ms, docs/benchmarks.md, session 16): fewer
// rounds, 129^3 x 150 0.0637 against 0.0712, 129^3 x 1000 0.3560 against
// 0.3844, 150x151x150 x 250 0.1056 against 0.1170, 257^3 x 236 0.3837 against
// 0.4066, 300x301x300 x 60 0.1146 against 0.1242, 400x401x400 x 64 0.2805
// against 0.3409; as many rounds, 257^3 x 44 0.0965 against 0.0832, 257^3 x 70
// 0.1394 against 0.1281, 777^3 x 10 0.3473 against 0.3345, 777^3 x 20 0.6546
// against 0.6428, though 257^3 x 100 0.1830 against 0.1859, 300x301x300 x 100
// 0.1859 against 0.1932 and 400x401x400 x 40 0.1901 against 0.1930.
template <typename S>
cudaError_t TakesSmallTiles(const Batch& p, bool* small) {
  *small = PaddedArea<WarpTiledSmall>(p) < PaddedArea<S>(p);
  if (!*small || p.Vectorized()) return cudaSuccess;
  int64_t small_rounds = 0, rounds = 0;
  if (cudaError_t error = Rounds<WarpTiledSmall>(p, &small_rounds)) {
    return error;
  }
  if (cudaError_t error = Rounds<S>(p, &rounds)) return error;
  *small = small_rounds < rounds;
  return cudaSuccess;
}

// Sets *mid to whether a batch of problems under 128 on a side takes 96 x 96
// tiles (WarpTiledMid), one a problem, rather than 64 x 64 ones: where its
// problems fit them, they pad C less, and they cover three SMs in five. With
// fewer problems the 64 x 64 tiles, four a problem, spread wider: 70^3 x 66
// 0.0140 ms against 0.0118, 96^3 x 66 0.0141 against 0.0111 (six stages); at
// three stages (session 25, 16-byte batches), 80^3 x 70 0.0126 against
// 0.0125, but from 80 the 96 x 96 tiles led: 72^3 x 85 0.0119 against 0.0127,
// 84^3 x 90 0.0137 against 0.0147, 96^3 x 80 0.0139 against 0.0146,
// 96x200x96 x 85 0.0237 against 0.0245, 76^3 x 82 0.0126 against 0.0129,
// 92^3 x 80 0.0145 against 0.0146. Measured on an H100 against
// 64 x 64 tiles (ms, docs/benchmarks.md, session 24): 70^3 x 100 0.0141
// against 0.0189, 70^3 x 200 0.0196 against 0.0281, 77^3 x 100 0.0152 against
// 0.0196, 88^3 x 132 0.0141 against 0.0188, 96^3 x 132 0.0145 against 0.0207,
// 90x1000x91 x 132 0.0871 against 0.1217; against the 96 x 96 tiles at two
// blocks per SM from 264 problems (session 23), 70^3 x 2048 0.1121 against
// 0.1381, 65^3 x 4096 0.2115 against 0.2611, 96^3 x 1000 0.0656 against
// 0.0756, 70^3 x 300 0.0284 against 0.0352, but 70^3 x 264 0.0196 against
// 0.0190, 88^3 x 600 0.0560 against 0.0538 and 96^3 x 600 0.0576 against
// 0.0556. Where the split rules cut K into many short parts, they lost to
// 64 x 64 tiles: 90x1000x91 x 200 (13 parts) 0.1875 against 0.1647 (a batch
// that TakesTinyTiles now gives 32 x 32 tiles: 0.1266).
cudaError_t TakesMidTiles(const Batch& p, bool* mid) {
  int64_t sms = 0;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  *mid = 5 * p.count >= 3 * sms && p.m <= WarpTiledMid::kBlockM &&
         p.n <= WarpTiledMid::kBlockN &&
         PaddedArea<WarpTiledMid>(p) < PaddedArea<WarpTiledSmall>(p);
  return cudaSuccess;
}

// Which 128 x 128 tiles a product takes in place of 64-wide ones.
enum class BigTiles { kNone, kTwoPerSm, kOnePerSm };

// Sets *big to the 128 x 128 tiles p takes rather than the 64-wide shape S, if
// any: where those tiles fill their rounds (kFullRounds) with K unsplit and no
// longer than kMaxSplitK, while the 64-wide tiles, unsplit, fill theirs less,
// and split (a single product), leave each split under kLongSplitK of K.
// Where they number at most one per SM they run one block to an SM
// (WarpTiledBigAlone), and fill rounds of one to an SM; else two
// (WarpTiledBig). Measured on an H200 (ms, docs/benchmarks.md),
// the rule against the 64-wide tiles alone: 2048^3 0.3654 against 0.3708 (K
// split in 3, 683 a split), 2000^3 0.3639 against 0.3804, 4096x1024x4096
// 0.7262 against 0.7514, 4096x64x4096 0.0627 against 0.0685; batches 512^3 x
// 64 0.3731 against 0.3912, 256^3 x 256 0.1985 against 0.2089, 128^3 x 1024
// 0.1126 against 0.1204; even elsewhere (K steps of 16 for both; with steps
// of 32 for both, 2048^3 0.3596 against 0.3661). With 128 x 128 tiles in
// place of 64 x 128 everywhere, where the rule keeps the 64-wide ones:
// 4096^3 (1366 a split) 2.8491 against 2.7906, 8192^3 22.02 against 21.81,
// 3072^3 (unsplit, its rounds 97% full) 1.2224 against 1.1893, 64x4096x4096
// 0.1076 against 0.0548.
//
// A batch (K up to kMaxSplitK) also takes them where they number at most one
// per SM while its 64-wide tiles number more and run unsplit
// (SgemmWarpTiledAs). Measured on an H200 against the 64-wide tiles (ms,
// docs/benchmarks.md, session 15): 256^3 x 30 0.0299 against 0.0348, 256^3 x
// 33 0.0302 against 0.0351, 384^3 x 13 0.0423 against 0.0441, 480^3 x 7
// 0.0538 against 0.0552, 640^3 x 5 0.0683 against 0.0693, 1024x512x1024 x 2
// 0.0560 against 0.0570, 512^3 x 8 even.
// Where the 64-wide tiles split K, they led: 384^3 x 10 0.0339 against
// 0.0421, 512^3 x 6 0.0423 against 0.0556, 896^3 x 2 0.0688 against 0.0919,
// 256x2048x256 x 30 0.1864 against 0.2008, 768^3 x 3 0.0784 against 0.0799.
//
// One block to an SM there, against two, on an H100 (ms, docs/benchmarks.md,
// session 19): 256^3 x 30 0.0294 against 0.0305, 384^3 x 13 0.0410 against
// 0.0428, 480^3 x 7 0.0510 against 0.0537, 640^3 x 5 0.0653 against 0.0688,
// 512^3 x 8 0.0538 against 0.0565, 380x300x250 x 20 0.0397 against 0.0412;
// 257^3 x 13 even. Where one round of them one to an SM is full and the
// 64-wide tiles would split K, against those: 1024^3 x 2 0.0988 against
// 0.1035, 1024x1024x2048 0.0988 against 0.1025, 2048x1024x1024 0.0988 against
// 0.1026, 1000x1000x2000 0.1050 against 0.1212; 1000^3 x 2 even; 1001^3 x 2
// (element by element) 0.1171 against 0.1156.
//
// A batch on 16 bytes (bulk copies, fragments read ahead) takes them two to
// an SM from kMinBulkBigRounds rounds of them where they pad C no more than
// the 64-wide tiles and fill their rounds at least as well. Measured on an
// H100 against the 64-wide tiles (ms, docs/benchmarks.md, session 35): 384^3
// x 71 0.1687 against 0.1831, 640^3 x 25 0.2703 against 0.2928, 1024^3 x 10
// 0.4266 against 0.4585, 600^3 x 19 0.2088 against 0.2300, 512^3 x 30 0.1768
// against 0.1847; outside the sweep the rule was drawn from, 640x320x640 x 30
// 0.1700 against 0.1817, 2048x512x2048 x 3 0.2605 against 0.2788, 256^3 x 150
// 0.1198 against 0.1238 (768^3 x 20 0.3853 against 0.3821). Forced on the
// sweep's other 16-byte batches, they lost where they fill their rounds less
// (480^3 x 36 0.2060 against 0.1998, 384x768x384 x 60 0.3261 against 0.3079),
// pad C more (448^3 x 44 0.2307 against 0.1927) or take fewer rounds (1536^3
// x 3, 1.6 rounds, 0.5073 against 0.4795).
// Off 16 bytes they do so too where the 64-wide tiles would split K for the
// batch's last problems (WholeProblems) and K is under kLongSplitK. Measured
// on an H200 against the 64-wide tiles (ms, docs/benchmarks.md, session 44),
// 26 batches, 21 of them random: 23 ahead by 1-15% (511^3 x 30 0.2037
// against 0.2062, 599^3 x 19 0.2340 against 0.2613, 255x257x253 x 121 0.1165
// against 0.1306, 986x931x986 x 10 0.4165 against 0.4533), the others within
// 0.8% (465x799x465 x 30 0.3044 against 0.3039). With K from 1085 they lost at
// 6 of 11 (384x1130x384 x 76 0.5951 against 0.5471); where the 64-wide tiles
// split no problem, they lost or were even (767^3 x 20 0.4374 against 0.4159,
// 1001^3 x 8 0.3778 against 0.3775).
//
// Where both operands go element by element in rows an odd number of elements
// apart, the tiles two to an SM copy every other row in pairs
// (AlternatesBothOperands), and take a batch where kBigRoundCost times their
// rounds are fewer than the 64-wide tiles' (or as many, where they pad C no
// more than 64 x 128 tiles would) and they pad C at most kMaxBigPadding times
// as much (a round of them took about 1.25 times as long as one of the
// 64-wide tiles': 1.27 against 64 x 128, 1.19 against 128 x 64, fitted to 44
// random such batches forced into each shape on an H200; docs/benchmarks.md,
// session 56). Measured there against the rules before on fresh random
// batches (ms, two rounds): one round against two, 511x367x381 x 19 0.0760
// against 0.0942, 368x635x631 x 15 0.1212 against 0.1338, 682x693x593 x 8
// 0.1318 against 0.1424, 730x1025x537 x 8 0.1873 against 0.2062; two against
// three, 723x827x935 x 10 0.2996 against 0.3272, 349x921x1019 x 19
// 0.3320 against 0.3473, 777^3 x 10 0.2833 against 0.2995, but 349x765x999 x
// 17 0.2800 against 0.2589 and 980x873x599 x 10 0.3159 against 0.2995 (the
// 64-wide tiles' third round 6% and 2% full), 652x1015x611 x 16 0.3642 against
// 0.3569; three against four, 717x435x805 x 16 0.2497 against 0.2586, but
// 811x1003x345 x 35 0.5326 against 0.5181 and 358x825x795 x 33 0.4445 against
// 0.4385. Padding C 1.14-1.2 times as much, they lost (303x637x863 x 34 0.3512
// against 0.3114, 429x789x879 x 17 0.2903 against 0.2724), and so they did
// with as many rounds (forced: 703^3 x 12 0.2606 against 0.2120, 801^3 x 4
// 0.1497 against 0.1233), padding C more than 64 x 128 tiles. Padding it no
// more, as many rounds measured against the rules before (session 57): on
// random batches drawn where the rule fires (seeds 62 and 63), 597x457x615 x
// 34 0.3036 against 0.3371, 871x1015x503 x 32 0.6302 against 0.6642,
// 466x459x477 x 51 0.3032 against 0.3105, 637x873x355 x 65 0.6221 against
// 0.6314; in place of 128 x 64 tiles in K steps of 32 (TakesTallTiles),
// 593x523x1051 x 19 0.3410 against 0.3684, 340x747x551 x 61 0.4695 against
// 0.4919, 870x905x807 x 18 0.5692 against 0.5843; on fresh ones (seeds 64 and
// 65), 1001x667x1017 x 13 0.4233 against 0.4398, 768x423x697 x 27 0.3234
// against 0.3314, 887x673x809 x 21 0.4882 against 0.5147; 333^3 x 108 0.2626
// against 0.2615.
template <typename S>
cudaError_t TakesBigTiles(const Batch& p, BigTiles* big) {
  constexpr double kMinBulkBigRounds = 1.75;
  constexpr int64_t kLongSplitK = 1024;
  constexpr double kBigRoundCost = 1.25;
  constexpr double kMaxBigPadding = 1.12;
  *big = BigTiles::kNone;
  int64_t big_slots = 0, slots = 0;
  if (cudaError_t error = WarpTiledSlots<WarpTiledBig>(&big_slots)) {
    return error;
  }
  if (cudaError_t error = WarpTiledSlots<S>(&slots)) return error;
  const int64_t tiles = Tiles<S>(p);
  const int64_t big_tiles = Tiles<WarpTiledBig>(p);
  int64_t sms = 0;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  const BigTiles taken =
      big_tiles <= sms ? BigTiles::kOnePerSm : BigTiles::kTwoPerSm;
  if (p.count > 1 && p.k <= kMaxSplitK) {
    int64_t min_split_k = 0;
    const bool whole =
        WholeProblems(p, tiles / p.count, slots, &min_split_k) == p.count;
    if (big_tiles <= sms && tiles > sms && whole) {
      *big = taken;
      return cudaSuccess;
    }
    const double big_rounds =
        kBigRoundCost * static_cast<double>(CeilDiv(big_tiles, big_slots));
    const double rounds = static_cast<double>(CeilDiv(tiles, slots));
    const int64_t big_area = PaddedArea<WarpTiledBig>(p);
    if (AlternatesBothOperands<WarpTiledBig>(p) &&
        big_area <= kMaxBigPadding * PaddedArea<S>(p) &&
        (big_rounds < rounds ||
         (big_rounds == rounds && big_area <= PaddedArea<WarpTiledWide>(p)))) {
      *big = BigTiles::kTwoPerSm;
      return cudaSuccess;
    }
    if ((p.VectorOperands() || (!whole && p.k < kLongSplitK)) &&
        big_tiles >= kMinBulkBigRounds * big_slots &&
        RoundsFill(big_tiles, big_slots) >= RoundsFill(tiles, slots) &&
        PaddedArea<WarpTiledBig>(p) <= PaddedArea<S>(p)) {
      *big = BigTiles::kTwoPerSm;
      return cudaSuccess;
    }
  }
  const bool fill =
      RoundsFill(big_tiles, big_slots) >= kFullRounds ||
      (big_tiles <= sms && RoundsFill(big_tiles, sms) >= kFullRounds);
  if (p.k > kMaxSplitK || !fill || RoundsFill(tiles, slots) >= kFullRounds) {
    return cudaSuccess;
  }
  if (p.count > 1 || p.k / SplitCount(tiles, p.k, slots) < kLongSplitK) {
    *big = taken;
  }
  return cudaSuccess;
}

// Launches of at least kLongStepsRounds rounds of blocks (of the GPU's slots
// for the shape), each block's part of K (K split as SplitCount says for a
// single product, whole for a batch) at least kLongStepsK, take K steps of 32
// (LongSteps). Measured on an H200 against steps of 16 (ms): 4096^3 (15.5
// rounds, 1366 a split) 2.6641 against 2.7904, 8192^3 (41 rounds, 4096)
// 20.68 against 21.81, 4095^3 2.7605 against 2.8849, 4096x8192x960 (128 x 64
// tiles, 4.8 rounds, 2048) 1.3092 against 1.3521. With fewer rounds the steps
// of 32 gained at most 0.9% and lost up to 9%, most where all blocks start at
// once: 3072^3 (2.9 rounds, unsplit) 1.1777 against 1.1887, 1536x2048x1536
// (2.9, 512) 0.2141 against 0.2139; one round: 1024x3072x1024 (1024) 0.1429
// against 0.1425, 1000x3000x768 beside its strip (750) 0.1312 against
// 0.1297, 1024x1536x1024 (512) 0.0785 against 0.0764, 1024^3 (342) 0.0551
// against 0.0540; batches 512^3 x 13 0.0901 against 0.0867, 256^3 x 52
// 0.0552 against 0.0507.
constexpr double kLongStepsRounds = 4;
constexpr int64_t kLongStepsK = 512;

// Whether p is a batch whose 128 x 64 tiles would copy both operands' rows in
// pairs (AlternatesBothOperands), the batches of TakesTallTiles' exception and
// of kTallPairsLongStepsRounds.
bool TallPairsBatch(const Batch& p) {
  return p.count > 1 && AlternatesBothOperands<WarpTiledTall>(p);
}

// A batch in 128 x 64 tiles whose operands both go element by element in rows
// an odd number of elements apart (TallPairsBatch) takes K steps of 32
// from kTallPairsLongStepsRounds rounds (and kLongStepsK of K): each step
// copies A's rows in pieces twice as long. Measured on an H200, forced into
// those tiles, against steps of 16 (ms, one round, docs/benchmarks.md,
// session 57): from K 512 and a round, ahead at 31 of 31 random such batches
// (1032x641x289 x 19 by 0.04%), by up to 20% (615x573x795 x 10, 1.6 rounds,
// 0.1509 against 0.1815; 502x685x671 x 14 0.1764 against 0.2083;
// 1042x635x829 x 9 0.2590 against 0.2769); behind under a round (688x719x409
// x 4, 0.4 rounds, 0.0702 against 0.0677) and with K short (716x333x823 x 12
// 0.1663 against 0.1615). Against steps of 16 up to kLongStepsRounds (the
// rule before), on 35 fresh random batches it moves (seeds 66 and 67, two
// rounds): ahead at 33, by up to 7% (328x1079x553 x 53 0.5701 against 0.6100,
// 602x941x317 x 57 0.5067 against 0.5320, 922x697x567 x 16 0.3157 against
// 0.3299), within 0.1% at the others.
constexpr double kTallPairsLongStepsRounds = 1;

// Sets *long_steps to whether p's tiles of shape S, K split in `splits` parts,
// take K steps of 32: at least kLongStepsK of K a part in at least min_rounds
// rounds of blocks.
template <typename S>
cudaError_t TakesLongSteps(const Batch& p, int64_t splits, double min_rounds,
                           bool* long_steps) {
  int64_t slots = 0;
  if (cudaError_t error = WarpTiledSlots<S>(&slots)) return error;
  *long_steps = CeilDiv(p.k, splits) >= kLongStepsK &&
                Tiles<S>(p) * splits >= min_rounds * slots;
  return cudaSuccess;
}

// Sets *tall to whether p takes 128 x 64 tiles rather than 64 x 128 ones:
// where they pad C less (TallPadsLess), except in a batch whose operands both
// go element by element in rows an odd number of elements apart
// (TallPairsBatch), which takes them only where they also take fewer
// rounds or, by the rule for every shape (kLongStepsRounds), K steps of 32.
// Measured on an H200 against taking them wherever they pad C less (ms, two
// rounds, docs/benchmarks.md, session 57). On random such batches drawn where
// the rule fires (seeds 61-63), in as many rounds in K steps of 16:
// 819x401x553 x 11 0.1164 against 0.1387, 1074x467x821 x 5 0.1299 against
// 0.1612, 946x625x435 x 19 0.2635 against 0.2951, 690x1053x535 x 20 0.4221
// against 0.4745, 1064x1005x805 x 5 0.2560 against 0.2864; but 341x775x675 x
// 15 0.1873 against 0.1785, 766x447x831 x 8 0.1383 against 0.1352,
// 1042x635x829 x 9 0.2822 against 0.2770. In K steps of 32 the 128 x 64 tiles
// kept their lead (against the 64 x 128 ones: 926x689x569 x 26 0.5017 against
// 0.5270, 870x905x807 x 18 0.5843 against 0.6094, 491x741x959 x 34 0.5890
// against 0.6173). On 80 fresh ones (seeds 64 and 65, with TakesBigTiles'
// clause of as many rounds), none behind by more than 0.7%: 684x555x555 x 20
// 0.2339 against 0.2632, 881x983x807 x 12 0.4309 against 0.4527, 344x585x565
// x 24 0.1582 against 0.1856, 744x305x949 x 12 0.1538 against 0.1651,
// 694x715x567 x 27 0.4095 against 0.4375, 1024x965x809 x 7 0.2839 against
// 0.2983.
cudaError_t TakesTallTiles(const Batch& p, bool* tall) {
  *tall = TallPadsLess(p);
  if (!*tall || !TallPairsBatch(p)) return cudaSuccess;
  bool long_steps = false;
  int64_t tall_rounds = 0, wide_rounds = 0;
  if (cudaError_t error =
          TakesLongSteps<WarpTiledTall>(p, 1, kLongStepsRounds, &long_steps)) {
    return error;
  }
  if (cudaError_t error = Rounds<WarpTiledTall>(p, &tall_rounds)) return error;
  if (cudaError_t error = Rounds<WarpTiledWide>(p, &wide_rounds)) return error;
  *tall = long_steps || tall_rounds < wide_rounds;
  return cudaSuccess;
}

// Calls shaped(S()) with the warp-tiled shape S that p takes, and returns what
// it returns.
template <typename Shaped>
cudaError_t WithWarpTiledShape(const Batch& p, Shaped shaped) {
  auto unless_big = [&](auto narrow) {
    using S = decltype(narrow);
    BigTiles big = BigTiles::kNone;
    if (cudaError_t error = TakesBigTiles<S>(p, &big)) return error;
    if (big == BigTiles::kOnePerSm) return shaped(WarpTiledBigAlone());
    if (big == BigTiles::kTwoPerSm) return shaped(WarpTiledBig());
    int64_t splits = 1;
    if (p.count == 1) {
      if (cudaError_t error = WarpTiledSplits<S>(p, &splits)) return error;
    }
    const bool tall_pairs =
        std::is_same_v<S, WarpTiledTall> && TallPairsBatch(p);
    bool long_steps = false;
    if (cudaError_t error = TakesLongSteps<S>(
            p, splits,
            tall_pairs ? kTallPairsLongStepsRounds : kLongStepsRounds,
            &long_steps)) {
      return error;
    }
    return long_steps ? shaped(LongSteps<S>()) : shaped(narrow);
  };
  bool tall = false;
  if (cudaError_t error = TakesTallTiles(p, &tall)) return error;
  return tall ? unless_big(WarpTiledTall()) : unless_big(WarpTiledWide());
}

cudaError_t SgemmWarpTiledShaped(const Batch& p, cudaStream_t stream) {
  return WithWarpTiledShape(p, [&](auto shape) {
    return SgemmWarpTiledAs<decltype(shape)>(p, stream);
  });
}

// Scratch memory for operand copies: a stream-ordered pool on the current
// device that keeps up to kKeptBytes mapped between calls, so that steady
// traffic does not map and unmap memory for every product.
cudaError_t ScratchPool(cudaMemPool_t* pool) {
  constexpr int kMaxDevices = 64;
  constexpr uint64_t kKeptBytes = uint64_t{256} << 20;
  static std::mutex mutex;
  static cudaMemPool_t pools[kMaxDevices];
  int device = 0;
  if (cudaError_t error = cudaGetDevice(&device)) return error;
  if (device >= kMaxDevices) return cudaErrorInvalidDevice;
  std::lock_guard<std::mutex> lock(mutex);
  if (pools[device] == nullptr) {
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t created = nullptr;
    if (cudaError_t error = cudaMemPoolCreate(&created, &props)) return error;
    uint64_t kept = kKeptBytes;
    if (cudaError_t error = cudaMemPoolSetAttribute(
            created, cudaMemPoolAttrReleaseThreshold, &kept)) {
      cudaMemPoolDestroy(created);
      return error;
    }
    pools[device] = created;
  }
  *pool = pools[device];
  return cudaSuccess;
}

// Copies `matrix` (rows x cols, rows *ld apart) into `scratch` with rows
// RoundUp(cols, 4) apart (zeros past the matrix), and points *matrix and *ld
// there; zeros `zero_words` 16-byte words at `zero` in the same pass. Measured
// on an H200 against a block per 256 runs of a row and C zeroed by a kernel of
// its own (ms): 1000x3000x777 (B and C padded) 0.1442 against 0.1471, 2047^3
// (A, B and C) 0.4159 against 0.4199, 4095^3 2.9996 against 3.0125.
cudaError_t PadRows(int64_t rows, int64_t cols, float* scratch,
                    const float** matrix, int64_t* ld, float* zero,
                    int64_t zero_words, cudaStream_t stream) {
  constexpr int kThreads = 256;
  constexpr int kRuns = 4;
  const int64_t padded_ld = RoundUp(cols, 4);
  const int64_t runs = rows * padded_ld / 4;
  const int64_t blocks = CeilDiv(runs + zero_words, kThreads * kRuns);
  if (blocks > INT_MAX) return cudaErrorInvalidConfiguration;
  if (cudaError_t error =
          LaunchOverlapped(PadRowsKernel<kThreads, kRuns>, blocks, kThreads, 0,
                           stream, cols, *matrix, *ld, scratch, padded_ld, runs,
                           reinterpret_cast<float4*>(zero), zero_words)) {
    return error;
  }
  *matrix = scratch;
  *ld = padded_ld;
  return cudaSuccess;
}

// Copies the C of each problem of p from `padded` (the problems one after
// another, rows padded_ld elements apart, a multiple of 4, 16-byte aligned)
// back to p.c (rows p.ldc apart, problems p.stride_c apart).
cudaError_t UnpadRows(const Batch& p, const float* padded, int64_t padded_ld,
                      cudaStream_t stream) {
  constexpr int kThreads = 256;
  const int64_t segments = CeilDiv(padded_ld / 4, kThreads);
  const int64_t blocks = GridBlocks(segments, p.count * p.m);
  if (blocks < 0) return cudaErrorInvalidConfiguration;
  return LaunchOverlapped(UnpadRowsKernel<kThreads>, blocks, kThreads, 0,
                          stream, p.n, padded, padded_ld, p.c, p.ldc, p.m,
                          p.OneMatrixC() ? p.m * p.ldc : p.stride_c, segments);
}

// Runs `run` on p with A (pad_a) and B (pad_b) copied into rows that start on
// 16 bytes in scratch memory (PadRows; a batch's problems as one matrix, so
// they must follow one another), and with C computed in such rows and copied
// back (pad_c; zeroed in the first pad's pass, or on its own; p's C need not
// follow one another, as the whole 64s cut at a batch's edges do not). Where
// nothing pads or scratch memory can't be had, runs p as it is.
template <typename Run>
cudaError_t SgemmPadded(const Batch& p, bool pad_a, bool pad_b, bool pad_c,
                        cudaStream_t stream, Run run) {
  if (!(pad_a || pad_b || pad_c)) return run(p);
  const int64_t rows_a = p.count * p.m, rows_b = p.count * p.k;
  const int64_t floats_a = pad_a ? rows_a * RoundUp(p.k, 4) : 0;
  const int64_t floats_b = pad_b ? rows_b * RoundUp(p.n, 4) : 0;
  const int64_t floats_c = pad_c ? p.count * p.m * RoundUp(p.n, 4) : 0;
  cudaMemPool_t pool = nullptr;
  void* scratch = nullptr;
  if (ScratchPool(&pool) != cudaSuccess ||
      cudaMallocFromPoolAsync(&scratch,
                              (floats_a + floats_b + floats_c) * sizeof(float),
                              pool, stream) != cudaSuccess) {
    cudaGetLastError();  // not the caller's error: run unpadded
    return run(p);
  }
  Batch padded = p;
  float* const scratch_a = static_cast<float*>(scratch);
  float* const scratch_b = scratch_a + floats_a;
  float* const scratch_c = scratch_b + floats_b;
  // The first pad also zeros a padded C, which the split K adds into.
  int64_t zero_words = floats_c / 4;
  cudaError_t error = cudaSuccess;
  if (pad_a) {
    error = PadRows(rows_a, p.k, scratch_a, &padded.a, &padded.lda, scratch_c,
                    zero_words, stream);
    padded.stride_a = p.m * padded.lda;
    zero_words = 0;
  }
  if (pad_b && !error) {
    error = PadRows(rows_b, p.n, scratch_b, &padded.b, &padded.ldb, scratch_c,
                    zero_words, stream);
    padded.stride_b = p.k * padded.ldb;
  }
  if (pad_c) {
    padded.c = scratch_c;
    padded.ldc = RoundUp(p.n, 4);
    padded.stride_c = p.m * padded.ldc;
    padded.c_zeroed = pad_a || pad_b;
  }
  if (!error) error = run(padded);
  if (pad_c && !error) {
    error = UnpadRows(p, padded.c, padded.ldc, stream);
  }
  const cudaError_t freed = cudaFreeAsync(scratch, stream);
  return error ? error : freed;
}

// C[:, 0, width) = A * B[:, 0, width) for each problem of p, with b and c at
// the strip's first column (sgemm_strip.cuh), width 1 to 16. A single
// product's K splits so that the blocks about fill the GPU once, and adds
// into C, which must hold zeros; a batch's K stays whole.
template <int kRuns, bool kVectorB>
cudaError_t LaunchStrip(const Batch& p, int width, const float* b, float* c,
                        cudaStream_t stream) {
  using S = StripShape<kRuns>;
  int64_t sms = 0;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  const int64_t row_blocks = CeilDiv(p.m, S::kRows);
  const int64_t steps = CeilDiv(p.k, S::kStep);
  const int64_t wanted =
      p.count > 1 ? 1 : CeilDiv(S::kMinBlocksPerSm * sms, row_blocks);
  const int64_t k_per_split =
      CeilDiv(steps, std::clamp<int64_t>(wanted, 1, steps)) * S::kStep;
  const int64_t splits = CeilDiv(p.k, k_per_split);
  const int64_t blocks = GridBlocks(row_blocks * splits, p.count);
  if (blocks < 0) return cudaErrorInvalidConfiguration;
  return LaunchOverlapped(SgemmStripKernel<S, kVectorB>, blocks, S::kThreads, 0,
                          stream, p.m, width, p.k, p.a, p.lda, p.stride_a, b,
                          p.ldb, p.stride_b, c, p.ldc, p.stride_c, k_per_split,
                          FastDivisor::For(static_cast<uint32_t>(row_blocks)),
                          FastDivisor::For(static_cast<uint32_t>(splits)));
}

template <bool kVectorB>
cudaError_t SgemmStripAs(const Batch& p, int width, const float* b, float* c,
                         cudaStream_t stream) {
  switch (CeilDiv(width, 4)) {
    case 1:
      return LaunchStrip<1, kVectorB>(p, width, b, c, stream);
    case 2:
      return LaunchStrip<2, kVectorB>(p, width, b, c, stream);
    case 3:
      return LaunchStrip<3, kVectorB>(p, width, b, c, stream);
    default:
      return LaunchStrip<4, kVectorB>(p, width, b, c, stream);
  }
}

cudaError_t SgemmStrip(const Batch& p, int width, const float* b, float* c,
                       cudaStream_t stream) {
  return Vectorizable(b, p.ldb, p.stride_b)
             ? SgemmStripAs<true>(p, width, b, c, stream)
             : SgemmStripAs<false>(p, width, b, c, stream);
}

// C[0, height) = A[0, height) * B for each problem of p, with a and c at the
// strip's first row (sgemm_strip.cuh), height 1 to RowStripShape::kHeight.
cudaError_t SgemmRowStrip(const Batch& p, int height, const float* a, float* c,
                          cudaStream_t stream) {
  using S = RowStripShape;
  const int64_t col_blocks = CeilDiv(p.n, S::kCols);
  const int64_t blocks = GridBlocks(col_blocks, p.count);
  if (blocks < 0) return cudaErrorInvalidConfiguration;
  return LaunchOverlapped(SgemmRowStripKernel<S>, blocks, S::kThreads, 0,
                          stream, height, p.n, p.k, a, p.lda, p.stride_a, p.b,
                          p.ldb, p.stride_b, c, p.ldc, p.stride_c,
                          FastDivisor::For(static_cast<uint32_t>(col_blocks)));
}

// p's product (a single one, K split in `splits` by SgemmWarpTiledShaped's
// shape). Where K splits, so that C is zeroed anyway, and 1 to kMaxStrip of
// C's columns lie past the last whole 64, those run as a strip of their own
// beside the product of the whole 64s, instead of a tile column that is mostly
// padding. Measured (ms, docs/benchmarks.md) on an H200 against the tile
// column, with the strip after the product: 1000x3000x777 (B and C padded)
// 0.1347 against 0.1439, 1100x4000x527 0.1399 against 0.1508, 1000x1000x772
// 0.0505 against 0.0601; on an H100, this strip kernel beside the product
// against the one before it after the product: 0.1310 against 0.1364, 0.1331
// against 0.1401, 0.0487 against 0.0510. Below kMinMacs the strip's launch
// weighs more (H200, after the product): 768x768x772 0.0369 against 0.0334,
// 300x300x324 0.0135 against 0.0101.
cudaError_t SgemmWarpTiledStrip(Batch p, int64_t splits, cudaStream_t stream) {
  constexpr int64_t kStripTile = 64;
  constexpr int64_t kMaxStrip = 16;
  constexpr double kMinMacs = 1 << 29;
  const int64_t strip = p.n % kStripTile;
  if (splits == 1 || p.n < kStripTile || strip == 0 || strip > kMaxStrip ||
      static_cast<double>(p.m) * p.n * p.k < kMinMacs) {
    return SgemmWarpTiledShaped(p, stream);
  }
  if (!p.c_zeroed) {
    if (cudaError_t error = ZeroC(p, stream)) return error;
    p.c_zeroed = true;
  }
  Batch whole = p;
  whole.n -= strip;
  if (cudaError_t error = SgemmWarpTiledShaped(whole, stream)) return error;
  return SgemmStrip(p, static_cast<int>(strip), p.b + whole.n, p.c + whole.n,
                    stream);
}

// A single product whose A or B rows don't start on 16 bytes copies that
// operand element by element (or in 8-byte pairs). A large one first copies it
// into padded rows in scratch memory, one pass over it. Measured on an H200
// (docs/benchmarks.md), padding alone (before the split rule and the unchecked
// copies) took 4095^3 from 84% of cuBLAS to 90%, 8191^3 from 86% to 91% and
// 2047^3 from 77% to 81%; it cost 1023^3 7 points and 767^3 9 (the copies'
// launches and passes weigh more there). So it pads from kMinPaddedMacs
// multiply-adds, and where they are at least kMinMacsPerCopied times the
// elements copied. Against the unchecked element-wise steps of session 17
// (H100, ms, docs/benchmarks.md) it still led at 4097^3 (2.956 against
// 3.146), 3001x3001x2945 (1.193 against 1.248) and 2049^3 (0.4310 against
// 0.4446), and lost at 1539x1537x1541 (0.2207 against 0.2034), 3073^3 (1.359
// against 1.327) and 2000x2001x2000 (0.3757 against 0.3697): no rule from
// those, so the threshold stands. Where scratch memory can't be had, the
// product runs unpadded.
//
// A batch whose problems lie one after another pads the same way, an operand
// of all its problems as one matrix (count * m rows of A, count * k of B),
// from kMinPaddedMacs multiply-adds in all and where they are at least
// kMinBatchMacsPerCopied times the elements copied. Against the unchecked
// element-wise steps of session 17, measured on an H100 against no padding
// (ms, docs/benchmarks.md): 4097^3 x 2 6.156 against 6.294 (2048 multiply-adds
// per element copied), 3001^3 x 2 2.513 against 2.526 (1500), 1200x1201x4000
// x 2 0.5601 against 0.5595 (4000, A alone); below 1500 it lost: 2049x4097x2049
// x 2 1.8373 against 1.7007 (1024), 2049^3 x 2 0.9292 against 0.8650 (1024),
// 1200x1201x1200 x 4 0.3619 against 0.3352 (1200, A alone). (Against the
// checked element-wise steps before, padding had gained from 1000 per element
// copied, and against a run of 4 per lane from 450; sessions 15 and 16.) With
// fewer multiply-adds in all it lost more (session 15, H200: 511^3 x 6 0.0647
// against 0.0605, 380x300x250 x 20 0.0724 against 0.0420). A batch with both
// operands off 16 bytes can pad before the rules pick its tiles instead
// (SgemmBatch): 2049^3 x 2, padded there, gained 7% (session 36).
cudaError_t SgemmWarpTiled(const Batch& p, cudaStream_t stream) {
  constexpr int64_t kMinPaddedMacs = int64_t{1} << 31;
  constexpr int64_t kMinMacsPerCopied = 512;
  constexpr int64_t kMinBatchMacsPerCopied = 1500;
  constexpr double kMinPaddedCMacs = 1e8;
  if (p.k > INT_MAX / 2) return SgemmWarpTiledShaped(p, stream);
  int64_t unsplit = 0, splits = 1;
  // Whether the split blocks can add into C realigned (AddsRealigned).
  bool realignable = false;
  if (cudaError_t error = WithWarpTiledShape(p, [&](auto shape) {
        using S = decltype(shape);
        const cudaError_t error = PlanSplits<S>(p, &unsplit, &splits);
        realignable = AddsRealigned<S>(p, PartK<S>(p.k, splits));
        return error;
      })) {
    return error;
  }
  const double macs = p.MultiplyAdds();
  // Split K adds into C with atomics, four to a run of C where its rows don't
  // start on 16 bytes. Then C is computed in padded rows (zeroed in the first
  // pad's pass, or on its own; the problems one after another in scratch
  // memory) and copied back to where each problem's C lies, where every
  // problem splits and from kMinPaddedCMacs multiply-adds. Measured on an H200
  // beside padded A and B: 1000x3000x777, K split 11, 0.148 ms against 0.161.
  // On its own, on an H100 (ms, docs/benchmarks.md, session 16): 511^3 0.0173
  // against 0.0221, 1000x1000x777 0.0543 against 0.0594, 1023^3 0.0686
  // against 0.0725, 777^3 0.0470 against 0.0479; batches 901x1323x901 x 2
  // 0.1346 against 0.1581, 511^3 x 6 0.0577 against 0.0621, 1001^3 x 2 0.1265
  // against 0.1289. Where some problems ran whole, C's passes cost more than
  // the split saved (511^3 x 30, 24 whole: 0.2422 against 0.2321; 777^3 x 10
  // 0.3398 against 0.3307), and so they did below kMinPaddedCMacs (333^3
  // 0.0137 against 0.0130, 129^3 0.0128 against 0.0115).
  bool pad_c =
      splits > 1 && unsplit == 0 && !p.VectorC() && macs >= kMinPaddedCMacs;
  bool pad_a = !p.VectorA() && p.OneMatrixA();
  bool pad_b = !p.VectorB() && p.OneMatrixB();
  const int64_t copied =
      p.count * ((pad_a ? p.m * p.k : 0) + (pad_b ? p.k * p.n : 0) +
                 (pad_c ? p.m * p.n : 0));
  const int64_t per_copied =
      p.count == 1 ? kMinMacsPerCopied : kMinBatchMacsPerCopied;
  if (macs < kMinPaddedMacs ||
      macs < static_cast<double>(per_copied) * copied) {
    pad_a = pad_b = false;
  }
  // Where B's rows stay off 16 bytes, the blocks can add into C realigned.
  if (realignable && !pad_b && !p.VectorB()) pad_c = false;
  return SgemmPadded(p, pad_a, pad_b, pad_c, stream, [&](const Batch& padded) {
    return SgemmWarpTiledStrip(padded, splits, stream);
  });
}

// Small-tile shapes: <tile, thread tile, K step, blocks per SM>. Four 16 x 16
// tiles share a block; a 64 x 64 tile (grouped launches) takes one. Measured
// on an H200 (docs/benchmarks.md): these K steps beat the alternatives, and so
// does holding registers to 64 for four blocks per SM.
using SmallTile16 = SmallTileShape<16, 2, 16, 4>;
using SmallTile64 = SmallTileShape<64, 4, 32, 4>;

template <typename S, bool kVectorized>
cudaError_t LaunchSmallTile(const Batch& p, cudaStream_t stream) {
  constexpr auto kKernel = SgemmSmallTileBatchedKernel<S, kVectorized>;
  const int64_t tiles_n = CeilDiv(p.n, S::kTile);
  const int64_t tiles = CeilDiv(p.m, S::kTile) * tiles_n;
  const int64_t items = GridBlocks(tiles, CeilDiv(p.count, S::kTilesPerBlock));
  if (items < 0) return cudaErrorInvalidConfiguration;
  int64_t resident = 0;
  if (cudaError_t error = ResidentBlocks<kKernel>(S::kThreads, 0, &resident)) {
    return error;
  }
  return LaunchOverlapped(kKernel, std::min(items, resident), S::kThreads, 0,
                          stream, p.m, p.n, p.k, p.a, p.stride_a, p.b,
                          p.stride_b, p.c, p.stride_c, p.count, tiles_n, tiles);
}

template <typename S>
cudaError_t SgemmSmallTile(const Batch& p, cudaStream_t stream) {
  return p.Vectorized() ? LaunchSmallTile<S, true>(p, stream)
                        : LaunchSmallTile<S, false>(p, stream);
}

// The per-warp kernel's shape: K steps of 16, two stages, two warps per block,
// eight blocks per SM (sixteen warps). Measured on an H200 against the
// small-tile kernel it replaced (four 32 x 32 problems per block, 4 x 4 of C
// per thread; docs/benchmarks.md): 32^3 x 4096 154% of cuBLAS against 139%,
// 24^3 153% against 132%, 17 x 31 x 29 137% against 117%. One or four warps
// per block measured within three points; ten blocks per SM (96 registers)
// lost up to 22; K steps of 32 at three stages, eight warps per SM, led only at
// 32^3 x 16384 (137% against 127%) and lost up to 40 points elsewhere.
using PerWarp = PerWarpShape<16, 2, 2, 8>;
// On the 16-byte path, four warps per block and four blocks per SM. Measured
// on an H200 against the shape above once the kernel stored C in 16 bytes
// (five rounds, ms): 32^3 x 4096 0.0157 against 0.0159, 32^3 x 16384 0.0567
// against 0.0571, 32x64x32 x 4096 0.0262 against 0.0265, 28^3 x 4096 0.0144
// against 0.0147, 32x100x32 x 2048 0.0220 against 0.0224. Element-wise it
// lost (17x31x29 x 4096 0.0177 against 0.0175, 30x32x30 x 4096 0.0196
// against 0.0194), so that path keeps two warps per block.
using PerWarpVector = PerWarpShape<16, 2, 4, 4>;
// With long K the ring matters more than the warps: K steps of 32, three
// stages, one warp per block, eight per SM. Measured on an H200 against the
// shape above (ms): 32 x 512 x 32 x 4096 0.154 against 0.180, 32 x 256 x 32 x
// 390 0.017 against 0.021, 32 x 2000 x 32 x 1000 0.150 against 0.182,
// 24 x 700 x 24 x 500 0.033 against 0.044, 32 x 128 x 32 x 4096 0.049
// against 0.052; at K 64 even, at K 77 and 100 5-10% behind (the last step
// mostly padding), at 32^3 x 2048 5% behind. Four to six stages at four to
// seven warps per SM were even or behind.
using PerWarpLongK = PerWarpShape<32, 3, 1, 8>;
// Problems up to 24 on a side whose K pads further to steps of 16 than of 8
// take K steps of 8 in a ring of four (three in flight). Measured on an H200
// against the 16-step shape (x 4096, ms): 20^3 0.0113 against 0.0130, 18^3
// 0.0131 against 0.0152, 24^3 0.0122 against 0.0136, 24x8x24 0.0066 against
// 0.0078, 24x40x24 0.0166 against 0.0178, 24x72x24 0.0260 against 0.0271,
// 20x100x20 0.0354 against 0.0361. Where K pads the same they lost (24x64x24
// 0.0235 against 0.0219, 32^3 0.0184 against 0.0161), and so did problems 32
// wide except at K 8 (32x24x32 0.0150 against 0.0147, 32x40x32 0.0211
// against 0.0202, 32x100x32 0.0240 against 0.0223; 32x8x32 0.0084 against
// 0.0092).
using PerWarpShortSteps = PerWarpShape<8, 4, 2, 8>;

template <typename S, bool kVectorized>
cudaError_t LaunchPerWarp(const Batch& p, cudaStream_t stream) {
  constexpr auto kKernel = SgemmPerWarpKernel<S, kVectorized>;
  if (cudaError_t error = AllowSharedMemory<kKernel>(S::kSharedBytes)) {
    return error;
  }
  int64_t resident = 0;
  if (cudaError_t error =
          ResidentBlocks<kKernel>(S::kThreads, S::kSharedBytes, &resident)) {
    return error;
  }
  const int64_t blocks = std::min(CeilDiv(p.count, S::kWarps), resident);
  return LaunchOverlapped(kKernel, blocks, S::kThreads, S::kSharedBytes, stream,
                          p.m, p.n, p.k, p.a, p.stride_a, p.b, p.stride_b, p.c,
                          p.stride_c, p.count);
}

template <typename S>
cudaError_t SgemmPerWarp(const Batch& p, cudaStream_t stream) {
  return p.Vectorized() ? LaunchPerWarp<S, true>(p, stream)
                        : LaunchPerWarp<S, false>(p, stream);
}

// Problems up to 32 x 32 take the small-tile kernel (up to 16 x 16) or the
// per-warp kernel (with K from kLongK, its shape with the deeper ring; up to
// kShortStepsSide on a side, its short steps where K pads less to them), each
// giving a problem's whole K to one warp or a quarter of a block. Batches of
// under a quarter of a round of 64 x 64 blocks with K from kSplitFromK split K
// on warp-tiled blocks instead. Measured on an H200 (32 x K x 32, per-warp
// against split, ms): count 5, K 1000: 0.050 against 0.019; count 30, K 2000:
// 0.100 against 0.031; count 100, K 1000: 0.055 against 0.046; count 100, K
// 512: even; with K 128 or 256, or 200 problems or more, the split took up to
// twice as long (count 150, K 512: 0.036 against 0.033).
cudaError_t SgemmSmallProblems(const Batch& p, cudaStream_t stream) {
  constexpr int64_t kSplitFromK = 512;
  constexpr int64_t kLongK = 128;
  constexpr int64_t kShortStepsSide = 24;
  int64_t slots = 0;
  if (cudaError_t error = WarpTiledSlots<WarpTiledSmall>(&slots)) return error;
  if (4 * p.count < slots && p.k >= kSplitFromK) {
    return SgemmWarpTiledAs<WarpTiledSmall>(p, stream);
  }
  if (std::max(p.m, p.n) <= SmallTile16::kTile) {
    return SgemmSmallTile<SmallTile16>(p, stream);
  }
  if (p.k >= kLongK) return SgemmPerWarp<PerWarpLongK>(p, stream);
  const int64_t short_k = PerWarpShortSteps::kBlockK;
  if (std::max(p.m, p.n) <= kShortStepsSide &&
      RoundUp(p.k, short_k) < RoundUp(p.k, PerWarp::kBlockK)) {
    return SgemmPerWarp<PerWarpShortSteps>(p, stream);
  }
  return p.Vectorized() ? LaunchPerWarp<PerWarpVector, true>(p, stream)
                        : LaunchPerWarp<PerWarp, false>(p, stream);
}

template <int kTile, int kThreads, int kGroup>
cudaError_t TransposeWide(int64_t rows, int64_t cols, const float* in,
                          int64_t in_stride, float* out, int64_t out_stride,
                          int64_t batch, cudaStream_t stream) {
  const int64_t tiles_cols = CeilDiv(cols, kTile);
  const int64_t tiles = CeilDiv(rows, kTile) * tiles_cols;
  const int64_t blocks = GridBlocks(tiles, batch);
  if (blocks < 0) return cudaErrorInvalidConfiguration;
  const bool vectorized =
      Vectorizable(in, cols, in_stride) && Vectorizable(out, rows, out_stride);
  auto kernel = vectorized
                    ? TransposeWideKernel<kTile, kThreads, true, kGroup>
                    : TransposeWideKernel<kTile, kThreads, false, kGroup>;
  return LaunchOverlapped(kernel, blocks, kThreads, 0, stream, rows, cols, in,
                          in_stride, out, out_stride, CeilDiv(rows, kTile),
                          tiles_cols);
}

cudaError_t TransposeTiled(int64_t rows, int64_t cols, const float* in,
                           int64_t in_stride, float* out, int64_t out_stride,
                           int64_t batch, cudaStream_t stream) {
  constexpr int kTile = 32;
  constexpr int kRows = 8;
  const int64_t tiles_cols = CeilDiv(cols, kTile);
  const int64_t tiles = CeilDiv(rows, kTile) * tiles_cols;
  const int64_t blocks = GridBlocks(tiles, batch);
  if (blocks < 0) return cudaErrorInvalidConfiguration;
  TransposeTiledKernel<kTile, kRows>
      <<<static_cast<unsigned>(blocks), dim3(kTile, kRows), 0, stream>>>(
          rows, cols, in, in_stride, out, out_stride, tiles_cols, tiles);
  return cudaGetLastError();
}

// The large-tile kernel's shapes, one for the 16-byte path and one for the
// element-wise path, with the number of tile rows taken together. Measured on
// an H200 (docs/benchmarks.md): 64 x 64 tiles of 512 threads (8 elements per
// thread) beat 256 and 1024 threads, 128 x 64 and 64 x 128 tiles on the 16-byte
// path; the element-wise path keeps more bytes in flight with 128 x 32 tiles
// of 256 threads. Groups of 64 tile rows gained 3-6% on the element-wise path
// and about 1% on the 16-byte path (96.4% of a copy at 4096^2). On the 16-byte
// path groups of 256 (whole tile columns up to 16384 rows, so the blocks in
// flight write longer runs of each output row) then measured 97% of a copy at
// 8192^2 against 95% with 64, 96% against 94% at 16384^2 and 91% against 88%
// at 20000 x 3000, within a point elsewhere; the element-wise path keeps 64
// (whole columns lost 1-3 points at 4093 x 4099 and 8191^2).
template <int kRows, int kCols, int kThreads, int64_t kGroupRows>
struct LargeTileShape {
  static constexpr int kTileRows = kRows, kTileCols = kCols;
  static constexpr int kBlockThreads = kThreads;
  static constexpr int64_t kGroup = kGroupRows;
};
using LargeTileVector = LargeTileShape<64, 64, 512, 256>;
using LargeTileScalar = LargeTileShape<128, 32, 256, 64>;

template <typename S, bool kVectorized>
cudaError_t LaunchLargeTile(int64_t rows, int64_t cols, const float* in,
                            int64_t in_stride, float* out, int64_t out_stride,
                            int64_t batch, cudaStream_t stream) {
  TransposeTiling t{rows,
                    cols,
                    in,
                    in_stride,
                    out,
                    out_stride,
                    CeilDiv(rows, S::kTileRows),
                    CeilDiv(cols, S::kTileCols),
                    0,
                    S::kGroup};
  t.tiles = GridBlocks(t.tiles_rows * t.tiles_cols, batch);
  if (t.tiles < 0) return cudaErrorInvalidConfiguration;
  return LaunchOverlapped(
      TransposeLargeTileKernel<S::kTileRows, S::kTileCols, S::kBlockThreads,
                               kVectorized>,
      t.tiles, S::kBlockThreads, 0, stream, t);
}

cudaError_t TransposeLargeTile(int64_t rows, int64_t cols, const float* in,
                               int64_t in_stride, float* out,
                               int64_t out_stride, int64_t batch,
                               cudaStream_t stream) {
  return Vectorizable(in, cols, in_stride) &&
                 Vectorizable(out, rows, out_stride)
             ? LaunchLargeTile<LargeTileVector, true>(
                   rows, cols, in, in_stride, out, out_stride, batch, stream)
             : LaunchLargeTile<LargeTileScalar, false>(
                   rows, cols, in, in_stride, out, out_stride, batch, stream);
}

// The packed kernel's shape: threads per block and elements staged per block.
// Measured on an H200 (docs/benchmarks.md): of 64-512 threads and 1024-8192
// elements, 512 threads and 4096 elements were the best or within 4 points
// of it on every batch measured (8 x 8 to 1000 x 3) but 16 x 16 / 4096, and
// they take matrices up to 4093 elements.
struct PackedShape {
  static constexpr int kThreads = 512, kCapacity = 4096;
  // The largest matrix it takes: a block's range may start 3 elements into
  // a 16-byte word.
  static constexpr int64_t kMaxSize = kCapacity - 3;
};

template <bool kVectorizedIn, bool kVectorizedOut>
cudaError_t LaunchPacked(const PackedTransposeArgs& a, cudaStream_t stream) {
  using S = PackedShape;
  const int64_t blocks = CeilDiv(a.batch, a.per_block);
  if (blocks > INT_MAX) return cudaErrorInvalidConfiguration;
  return LaunchOverlapped(TransposePackedKernel<S::kThreads, S::kCapacity,
                                                kVectorizedIn, kVectorizedOut>,
                          blocks, S::kThreads, 0, stream, a);
}

// Small matrices (rows * cols <= PackedShape::kMaxSize) only.
cudaError_t TransposePacked(int64_t rows, int64_t cols, const float* in,
                            int64_t in_stride, float* out, int64_t out_stride,
                            int64_t batch, cudaStream_t stream) {
  using S = PackedShape;
  const int64_t size = rows * cols;
  PackedTransposeArgs a{rows,
                        cols,
                        in,
                        in_stride,
                        out,
                        out_stride,
                        batch,
                        std::max<int64_t>(1, S::kMaxSize / size),
                        FastDivisor::For(static_cast<uint32_t>(size)),
                        FastDivisor::For(static_cast<uint32_t>(rows))};
  // A dense side (stride == size, or a batch of one) on 16 bytes moves
  // 16-byte words.
  const bool dense_in = in_stride == size || batch == 1;
  const bool dense_out = out_stride == size || batch == 1;
  const bool vector_in = dense_in && Aligned16(in);
  const bool vector_out = dense_out && Aligned16(out);
  if (vector_in) a.in_stride = size;
  if (vector_out) a.out_stride = size;
  if (vector_in) {
    return vector_out ? LaunchPacked<true, true>(a, stream)
                      : LaunchPacked<true, false>(a, stream);
  }
  return vector_out ? LaunchPacked<false, true>(a, stream)
                    : LaunchPacked<false, false>(a, stream);
}

// A 1 x N or N x 1 matrix has the same bytes as its transpose.
cudaError_t CopyVectors(int64_t count, const float* in, int64_t in_stride,
                        float* out, int64_t out_stride, int64_t batch,
                        cudaStream_t stream) {
  const size_t bytes = count * sizeof(float);
  if (batch == 1) {
    return cudaMemcpyAsync(out, in, bytes, cudaMemcpyDeviceToDevice, stream);
  }
  return cudaMemcpy2DAsync(out, out_stride * sizeof(float), in,
                           in_stride * sizeof(float), bytes, batch,
                           cudaMemcpyDeviceToDevice, stream);
}

// Finds the variant among `variants` whose name is `name`.
template <typename Variant, size_t kCount>
bool ParseVariant(const char* name, const Variant (&variants)[kCount],
                  const char* (*name_of)(Variant), Variant* variant) {
  if (std::strcmp(name, "auto") == 0) {
    *variant = Variant::kAuto;
    return true;
  }
  for (Variant candidate : variants) {
    if (std::strcmp(name, name_of(candidate)) == 0) {
      *variant = candidate;
      return true;
    }
  }
  return false;
}

// Whether the batch p may take warp tiles of 32 x 32 (WarpTiledTiny, and four
// of them in WarpTiledQuad): several problems under 256 on a side (and, with
// an operand off 16 bytes, some larger ones: TakesTinyTilesFrom256).
bool OneWarpTilesMayTake(const Batch& p) {
  return p.count > 1 && p.m < 256 && p.n < 256;
}

// Sets *four to whether the batch p's 64 x 64 tiles, K whole as WarpTiledQuad
// would plan it, come to four on some SMs and no more on any: where its
// four-warp blocks run four to an SM (FillsQuadTiles).
cudaError_t FourTilesOnAnSm(const Batch& p, bool* four) {
  int64_t sms = 0, splits = 1;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  if (cudaError_t error = WarpTiledSplits<WarpTiledQuad>(p, &splits)) {
    return error;
  }
  *four = CeilDiv(Tiles<WarpTiledSmall>(p), sms) ==
              WarpTiledQuadFew::kMinBlocksPerSm &&
          splits == 1;
  return cudaSuccess;
}

// Sets *tiny to whether the batch p, both operands on 16 bytes and problems
// over 64 on a side, takes 32 x 32 tiles of one warp rather than shape S:
// where S's plan keeps K whole, and the 32 x 32 tiles pad C less than three
// quarters as much, except in place of 64 x 64 tiles that come to four blocks
// on an SM (FourTilesOnAnSm); in place of 96 x 96 tiles also where they fit in
// one round, and in place of 64-wide tiles where S's blocks fill less than a
// quarter of a round.
//
// Measured on an H200 against the shapes before (ms, docs/benchmarks.md,
// session 28): against 64 x 64 tiles, where they pad C 0.69 as much, 144^3 x 30
// 0.0121 against 0.0183, 160^3 x 60 0.0222 against 0.0292, x 100 0.0340 against
// 0.0390, x 1000 0.2592 against 0.2877, 136^3 x 200 0.0549 against 0.0619,
// 152^3 x 400 0.1065 against 0.1240, but where those came to four blocks on an
// SM, 132^3 x 52 0.0237 against 0.0206, 144^3 x 50 0.0209 against 0.0194; where
// they pad C 0.83 as much they lost (100x100x136 x 200 0.0397 against 0.0359,
// 176x176x136 x 100 0.0478 against 0.0411), and with as much padding mixed
// (120^3 x 50 0.0110 against 0.0127, 176^3 x 40 0.0246 against 0.0218); against
// 96 x 96 tiles, in one round, 96x200x96 x 85 0.0152 against 0.0234, 88^3 x 80
// 0.0088 against 0.0136, 72^3 x 200 0.0141 against 0.0171, 96^3 x 200 0.0156
// against 0.0204, and past it mostly behind (80^3 x 263 0.0219 against 0.0186,
// 96^3 x 250 0.0226 against 0.0209, 84^3 x 400 0.0324 against 0.0283; but
// 96x200x96 x 300 0.0407 against 0.0519); against 64-wide tiles under a quarter
// of a round, 128^3 x 30 0.0086 against 0.0115, 200^3 x 12 0.0151 against
// 0.0166, 240^3 x 10 0.0173 against 0.0183, and where they pad C 0.73 as much,
// 224x224x160 x 50 0.0305 against 0.0394 (past a quarter of a round with 0.77
// of the padding, gains and losses: 200^3 x 20 0.0173 against 0.0264, 212^3 x
// 30 0.0315 against 0.0278). Where S's plan split K they lost (96x1000x96 x
// 100 0.0601 against 0.0546, 128x1024x128 x 30 0.0375 against 0.0346). On an
// H100 at session 24, where the rule keeps them out: 100^3 x 1000 0.1588
// against 0.1056, 96^3 x 1000 0.0724 against 0.0654, 128^3 x 1000 0.1369
// against 0.1161.
template <typename S>
cudaError_t TakesTinyTilesOn16Bytes(const Batch& p, bool* tiny) {
  *tiny = false;
  int64_t splits = 1;
  if (cudaError_t error = WarpTiledSplits<S>(p, &splits)) return error;
  if (splits > 1) return cudaSuccess;
  const bool pads_less =
      4 * PaddedArea<WarpTiledTiny>(p) < 3 * PaddedArea<S>(p);
  if constexpr (std::is_same_v<S, WarpTiledSmall>) {
    if (!pads_less) return cudaSuccess;
    bool four = false;
    if (cudaError_t error = FourTilesOnAnSm(p, &four)) return error;
    *tiny = !four;
  } else if constexpr (std::is_same_v<S, WarpTiledMid>) {
    int64_t rounds = 0;
    if (cudaError_t error = Rounds<WarpTiledTiny>(p, &rounds)) return error;
    *tiny = pads_less || rounds == 1;
  } else {
    int64_t slots = 0;
    if (cudaError_t error = WarpTiledSlots<S>(&slots)) return error;
    *tiny = pads_less || 4 * Tiles<S>(p) < slots;
  }
  return cudaSuccess;
}

// Sets *less to whether the batch p's 32 x 32 tiles of one warp
// (WarpTiledTiny) cost less than two-warp 64 x 64 ones (WarpTiledSmall) over
// rounds of blocks: where those fill their rounds under kMinSmallFill (their
// last round part empty, or its problems split in K), or where the 32 x 32
// tiles' padded area, counted kTinyCost + k * kTinyCostPerK times, is the
// smaller (a lane's 8 x 4 outputs load more a multiply-add than 8 x 8 ones
// do, and the longer K, the less the tiles' fixed costs hide that). Fitted on
// an H200 to batches of 280 x K x 280 (0.81 of the 64 x 64 tiles' area) and
// 390 x K x 390 and 401 x K x 401 (0.86), K 151 to 701, 12 to 60 problems
// (docs/benchmarks.md, session 50): where the 64 x 64 tiles fill their rounds,
// the 32 x 32 ones took 1.07-1.15, 1.20-1.25 and 1.30-1.34 times as long a
// padded element at K 151, 401 and 701. Measured against the 32 x 32 tiles
// where this takes the others (ms): 401^3 x 25 (0.77 full) 0.1152 against
// 0.1298, x 60 0.2647 against 0.2849, x 28 0.1368 against 0.1462, x 15 (one
// round) 0.0724 against 0.0870, 401x331x401 x 30 0.1148 against 0.1301,
// 390x701x390 x 60 0.4239 against 0.4733, 400x401x400 x 64 0.2494 against
// 0.2722, 280x701x280 x 30 0.1066 against 0.1131, 270x500x270 x 30 0.0787
// against 0.0882, 390x251x390 x 30 even, but 280x501x280 x 50 (0.79 full)
// 0.1318 against 0.1292 and 270x701x130 x 300 0.6406 against 0.6295; where it
// keeps them, under kMinSmallFill, 401^3 x 20 (0.62) 0.1031 against 0.1105, x
// 24 (0.74) 0.1166 against 0.1216, 401x331x401 x 20 0.0862 against 0.0947,
// 390x391x390 x 20 0.0971 against 0.1028, 280x501x280 x 45 (0.71) 0.1138
// against 0.1268, x 35 (0.55) 0.0983 against 0.1203; by their area,
// 280x151x280 x 60 0.0552 against 0.0591, 401x151x401 x 60 0.1144 against
// 0.1220, 270x401x130 x 300 (0.75 of the area) 0.3620 against 0.3914, but
// 280x401x280 x 30 0.0695 against 0.0673.
cudaError_t TinyTilesCostLess(const Batch& p, bool* less) {
  constexpr double kMinSmallFill = 0.75;
  constexpr double kTinyCost = 1.06, kTinyCostPerK = 1.0 / 2500;
  int64_t slots = 0;
  if (cudaError_t error = WarpTiledSlots<WarpTiledSmall>(&slots)) return error;
  *less = RoundsFill(Tiles<WarpTiledSmall>(p), slots) < kMinSmallFill ||
          PaddedArea<WarpTiledTiny>(p) * (kTinyCost + p.k * kTinyCostPerK) <
              PaddedArea<WarpTiledSmall>(p);
  return cudaSuccess;
}

// Sets *quad to whether the batch p takes four-warp 64 x 64 tiles with K whole
// in place of the tiles of the 64-wide shape S (defined below, among the
// rules for four-warp tiles).
template <typename S>
cudaError_t TakesQuadTilesWhole(const Batch& p, bool* quad);

// Sets *tiny to whether the batch p keeps its one round of 32 x 32 tiles of
// one warp (WarpTiledTiny) where the tiles it would take otherwise are the
// four-warp 64 x 64 ones that TakesQuadTilesWhole<S> gives in place of the
// 64-wide shape S: where the one-warp blocks put fewer warps on an SM's
// busiest scheduler than the four-warp blocks do. Each of an SM's
// kSchedulersPerSm schedulers issues for its own warps; a four-warp block
// gives each one warp, but a one-warp block gives one scheduler all of its
// work, so 13 of them on an SM put 4 warps on one scheduler and take as long
// as 16 (401^3 x 9, x 10, x 11 and x 12 in 32 x 32 tiles, 11.5 to 15.4 blocks
// an SM: 0.0487, 0.0593, 0.0598 and 0.0612 ms). Measured on an H200 against
// the 32 x 32 tiles (ms, docs/benchmarks.md, session 51): as many warps on a
// scheduler, 401^3 x 10 0.0512 against 0.0593, x 8 0.0400 against 0.0465,
// 390x391x390 x 10 0.0487 against 0.0559, 401x601x401 x 10 0.0714 against
// 0.0854, 401x251x401 x 8 0.0294 against 0.0312, 401x401x270 x 15 0.0509
// against 0.0589, 270x501x270 x 20 0.0601 against 0.0682, 270x801x270 x 20
// 0.0911 against 0.1092, 260x601x260 x 20 0.0677 against 0.0777, at short K
// 390x130x390 x 10 0.0204 against 0.0233, 401x100x401 x 10 0.0172 against
// 0.0195, 270x64x270 x 20 0.0120 against 0.0130, from 512 514x301x386 x 4
// 0.0209 against 0.0280, 650x250x258 x 4 0.0183 against 0.0201 (but
// 401x131x401 x 8 0.0196 against 0.0191; 401x51x401 x 10 even); fewer, kept:
// 401^3 x 9 0.0487 against 0.0512, x 6 0.0389 against 0.0420, 401x601x401 x 6
// 0.0538 against 0.0551, 270x501x270 x 16 0.0523 against 0.0602, x 12 0.0412
// against 0.0466, 270x271x270 x 16 0.0310 against 0.0341. Where S is not a
// 64-wide shape (the batch's other tiles would be two-warp 64 x 64 ones), the
// 32 x 32 tiles stay.
template <typename S>
cudaError_t TinyTilesFewerWarpsPerScheduler(const Batch& p, bool* tiny) {
  constexpr int64_t kSchedulersPerSm = 4;
  *tiny = true;
  if constexpr (std::is_same_v<S, WarpTiledWide> ||
                std::is_same_v<S, WarpTiledTall>) {
    bool quad = false;
    if (cudaError_t error = TakesQuadTilesWhole<S>(p, &quad)) return error;
    if (!quad) return cudaSuccess;
    int64_t sms = 0;
    if (cudaError_t error = MultiprocessorCount(&sms)) return error;
    const int64_t tiny_warps =
        CeilDiv(CeilDiv(Tiles<WarpTiledTiny>(p), sms), kSchedulersPerSm);
    *tiny = tiny_warps < CeilDiv(Tiles<WarpTiledQuadFew>(p), sms);
  }
  return cudaSuccess;
}

// Sets *tiny to whether the batch p, with an operand off 16 bytes and
// problems from 256 on a side (one side or both) and under 1024, takes 32 x 32
// tiles of one warp (WarpTiledTiny) rather than shape S: where they pad C under
// 0.8 as much as the 64-wide tiles would, and take one round of blocks (where
// four-warp 64 x 64 tiles would take the batch in place of S's, with fewer
// warps on an SM's busiest scheduler: TinyTilesFewerWarpsPerScheduler) or,
// under 512 on a side, cost less than two-warp 64 x 64 tiles
// (TinyTilesCostLess). Measured on an H100 against the tiles the rules took
// before (ms, docs/benchmarks.md, session 29): padding under 0.7 as much,
// 270x131x130 x 30 0.0219 against 0.0299, x 300 0.1398 against 0.1687,
// 400x101x130 x 50 0.0330 against 0.0462, 290x101x150 x 20 0.0117 against
// 0.0200, 280x150x280 x 40 0.0390 against 0.0542, 261x100x259 x 5 0.0080
// against 0.0118 (26 of 31 batches 5-41% ahead; 266x300x266 x 30 0.0635 against
// 0.0549, 137x500x266 x 100 0.1719 against 0.1594, three within 1.5%); from 0.7
// to 0.8, 330x131x130 x 30 0.0237 against 0.0303, 281x51x290 x 100 0.0512
// against 0.0602, 390x130x390 x 10 0.0237 against 0.0279 (all 10 ahead, by
// 0.8-22%). From 0.8, 3 of 6 lost up to 17% (480x481x479 x 3 0.0372 against
// 0.0317, 330x97x330 x 20 0.0281 against 0.0248, 300x301x301 x 100 0.2094
// against 0.1921). On 16 bytes, under 0.8, 8 of 11 batches lost 6-17%
// (272x132x132 x 30 0.0239 against 0.0206, 450x100x140 x 30 0.0303 against
// 0.0274), so those keep their tiles. From 512 on a side (session 34, the
// landed rule against e3171d6, ms): in one round, 514x250x258 x 3 0.0140
// against 0.0203, x 6 0.0216 against 0.0318, x 12 0.0378 against 0.0471,
// 513x250x257 x 3 0.0148 against 0.0214, 530x251x260 x 3 0.0140 against 0.0215,
// x 10 0.0336 against 0.0415, 900x141x140 x 6 0.0132 against 0.0224,
// 530x131x130 x 20 0.0234 against 0.0310, 800x161x160 x 8 0.0152 against
// 0.0241, 514x301x386 x 4 0.0285 against 0.0358, 650x250x258 x 4 0.0205 against
// 0.0207; in three rounds (a scratch build that forced them), 514x250x258 x 40
// 0.1122 against 0.1043.
template <typename S>
cudaError_t TakesTinyTilesFrom256(const Batch& p, bool* tiny) {
  *tiny = p.count > 1 && !p.VectorOperands() && p.m < 1024 && p.n < 1024 &&
          10 * PaddedArea<WarpTiledTiny>(p) < 8 * WidePaddedArea(p);
  if (!*tiny) return cudaSuccess;
  int64_t rounds = 0;
  if (cudaError_t error = Rounds<WarpTiledTiny>(p, &rounds)) return error;
  if (rounds == 1) return TinyTilesFewerWarpsPerScheduler<S>(p, tiny);
  *tiny = p.m < 512 && p.n < 512;
  return *tiny ? TinyTilesCostLess(p, tiny) : cudaSuccess;
}

// Sets *tiny to whether the batch p takes 32 x 32 tiles of one warp
// (WarpTiledTiny) rather than shape S, where it has problems under 256 on a
// side (with both operands on 16 bytes, as TakesTinyTilesOn16Bytes says; from
// 256, as TakesTinyTilesFrom256 says). With an operand off 16 bytes:
// problems of one 64 x 64 tile where the persistent blocks that would take
// them hold the batch in half a round; others in place of 64 x 64 tiles where
// the 32 x 32 ones pad C less; in place
// of other shapes, where they pad C less than three quarters as much, or S's
// blocks fill less than a round (96 x 96 tiles) or a quarter of one (64-wide
// tiles). Measured on an H100 against the shapes before (ms,
// docs/benchmarks.md, session 24): one tile, 50^3 x 100 0.0063 against
// 0.0114, 33x35x33 x 100 0.0055 against 0.0083, 50x52x50 x 100 0.0061 against
// 0.0110, 60x61x60 x 200 0.0086 against 0.0116 (but 40x41x40 x 528 0.0121
// against 0.0108, 60x61x60 x 1000 0.0318 against 0.0284); against 64 x 64
// tiles, 150x151x150 x 250 0.0782 against 0.1027, 40x90x90 x 1000 0.0549
// against 0.0634, 160x100x170 x 100 0.0349 against 0.0429 (with as much
// padding, 97^3 x 1000 0.1351 against 0.1443, but 100x100x101 x 300, one
// operand on 16 bytes, 0.0501 against 0.0480: TakesQuadTiles takes such
// batches under 128); against 96 x 96 tiles under a round, 70^3 x 100 0.0095
// against 0.0140, 77^3 x 300 0.0281 against 0.0316 (but 70^3 x 528 0.0388
// against 0.0305, 70^3 x 2048 0.1208 against 0.1115); against 64-wide tiles,
// 150x151x150 x 100 0.0400 against 0.0574, 200x131x130 x 40 0.0231 against
// 0.0283, 250x251x250 x 5 (a tenth of a round) 0.0147 against 0.0203 (but
// 230x231x229 x 30, 0.6 of a round, 0.0381 against 0.0366, and 190x191x190 x
// 30, three quarters the padding, 0.0298 against 0.0277).
template <typename S>
cudaError_t TakesTinyTiles(const Batch& p, bool* tiny) {
  *tiny = false;
  if (!OneWarpTilesMayTake(p)) return TakesTinyTilesFrom256<S>(p, tiny);
  if (p.VectorOperands()) {
    if (p.m <= 64 && p.n <= 64) return cudaSuccess;
    return TakesTinyTilesOn16Bytes<S>(p, tiny);
  }
  if (p.m <= 64 && p.n <= 64) {
    int64_t slots = 0;
    if (cudaError_t error = WarpTiledSlots<WarpTiledOneTile>(&slots)) {
      return error;
    }
    *tiny = 2 * p.count <= slots;
    return cudaSuccess;
  }
  const int64_t tiny_area = PaddedArea<WarpTiledTiny>(p);
  if constexpr (std::is_same_v<S, WarpTiledSmall>) {
    *tiny = tiny_area < PaddedArea<S>(p);
    return cudaSuccess;
  }
  int64_t slots = 0;
  if (cudaError_t error = WarpTiledSlots<S>(&slots)) return error;
  constexpr int64_t kRoundParts = std::is_same_v<S, WarpTiledMid> ? 1 : 4;
  *tiny =
      4 * tiny_area < 3 * PaddedArea<S>(p) || Tiles<S>(p) * kRoundParts < slots;
  return cudaSuccess;
}

// Whether the batch p, with an operand off 16 bytes, takes 64 x 64
// tiles of four one-warp 32 x 32 warp tiles (WarpTiledQuad): where its
// problems are over one tile and under 128 on a side (in place of 64 x 64
// tiles of two warps, WarpTiledSmall), or under 256 where those tiles pad C
// less than the 64-wide ones would (in place of those). TakesTinyTiles, asked
// first, may still take it. Measured on an H100 (ms, docs/benchmarks.md,
// session 24) against the 64 x 64 tiles of two warps, or the 32 x 32 tiles
// where they took the batch: 97^3 x 1000 0.1118 against 0.1352, 99x101x99 x
// 300 0.0408 against 0.0538, 100x100x101 x 300 0.0391 against 0.0474,
// 111x113x111 x 500 0.0705 against 0.0824, 120x121x120 x 300 0.0438 against
// 0.0559, 125^3 x 1000 0.1397 against 0.1706, 113x127x109 x 200 0.0402 against
// 0.0407, 97^3 x 100 0.0207 against 0.0208, 120x121x120 x 50 0.0129 against
// 0.0126. At 96 and under they lost (70^3 x 100 0.0154 against 0.0094 on 32 x
// 32 tiles, 65x67x65 x 1000 0.0804 against 0.0579 on 96 x 96 ones). From 128,
// against the 64-wide tiles (session 25): 170x171x170 x 40 0.0274 against
// 0.0298, x 200 0.0805 against 0.1030, x 1000 0.3763 against 0.3927,
// 180x180x181 x 100 0.0510 against 0.0664, 180x172x170 x 100 0.0478 against
// 0.0617, 190x191x190 x 30 0.0235 against 0.0281 (128 x 128 tiles, one an
// SM), x 300 0.1313 against 0.1533, 175x176x177 x 60 0.0323 against 0.0360;
// under 128 on one side, 60x500x170 x 100 0.0495 against 0.0607 (two-warp
// 64 x 64 tiles).
bool TakesQuadTiles(const Batch& p) {
  if (!OneWarpTilesMayTake(p) || p.VectorOperands() ||
      (p.m <= 64 && p.n <= 64)) {
    return false;
  }
  return (p.m < 128 && p.n < 128) ||
         PaddedArea<WarpTiledQuad>(p) < WidePaddedArea(p);
}

// Sets *quad to whether the batch p, in 64 x 64 tiles with both operands on 16
// bytes, takes them as four one-warp warp tiles (WarpTiledQuad) rather than two
// (WarpTiledSmall): where its problems are over one tile, the two-warp blocks
// fill more than one round and at most kMostRounds, and the four-warp ones no
// more rounds than they do. Measured on an H100 against the two-warp tiles
// (ms, docs/benchmarks.md, session 25): 180^3 x 100 0.0502 against 0.0626,
// 160^3 x 130 0.0470 against 0.0556, 120^3 x 300 0.0417 against 0.0484,
// 104^3 x 320 0.0368 against 0.0415, 152^3 x 200 0.0678 against 0.0754,
// 184^3 x 140 0.0593 against 0.0638, 124^3 x 400 0.0597 against 0.0616, and
// 2-15% ahead at 200 problems for eleven sides from 132 to 192. Under a
// round they lost 14-18% (the same sides at 40 problems), with more rounds
// than the two-warp blocks 6-9% (136^3 x 1000 0.2744 against 0.2510,
// 152^3 x 250 0.0845 against 0.0795), and at four rounds they gained little
// or lost (108^3 x 600 0.0716 against 0.0723, 176^3 x 280 0.1057 against
// 0.1013).
//
// In one round too, where the blocks come to four on some SMs and no more on
// any, and K stays whole: then they run four to an SM (WarpTiledQuadFew,
// through SgemmQuadTiles). The two-warp blocks' time steps up by about a
// quarter from three on an SM to four; the four-warp ones' stays flat. Measured
// on an H200 against the two-warp tiles (ms, docs/benchmarks.md, session 28):
// 160^3 x 48 0.0212 against 0.0267, x 58 0.0214 against 0.0272, 192^3 x 48
// 0.0241 against 0.0292, 144^3 x 50 0.0198 against 0.0238, 136^3 x 50 0.0198
// against 0.0235, 176^3 x 58 0.0228 against 0.0277, 100^3 x 100 0.0174
// against 0.0192, x 132 0.0185 against 0.0219, 120^3 x 110 0.0189 against
// 0.0212. At three an SM or fewer they ranged from -5% to +2% (100^3 x 80
// 0.0169 against 0.0160, 160^3 x 36 0.0200 against 0.0204), at five on an SM
// (in WarpTiledQuad's blocks, five to an SM) even, and with K split they lost
// 2-12% (192x256x192 x 20 0.0184 against 0.0161, 160x512x160 x 20 0.0309
// against 0.0274).
cudaError_t FillsQuadTiles(const Batch& p, bool* quad) {
  constexpr int64_t kMostRounds = 3;
  *quad = false;
  if (p.count == 1 || !p.VectorOperands() || (p.m <= 64 && p.n <= 64)) {
    return cudaSuccess;
  }
  int64_t rounds = 0, quad_rounds = 0;
  if (cudaError_t error = Rounds<WarpTiledSmall>(p, &rounds)) return error;
  if (cudaError_t error = Rounds<WarpTiledQuad>(p, &quad_rounds)) return error;
  if (rounds > 1) {
    *quad = rounds <= kMostRounds && quad_rounds <= rounds;
    return cudaSuccess;
  }
  return FourTilesOnAnSm(p, quad);
}

// Runs the batch p in four-warp 64 x 64 tiles, K split as WarpTiledQuad's
// rounds of five blocks per SM say (PlanSplits): in WarpTiledQuadFew's blocks,
// four per SM, where those take no more rounds than WarpTiledQuad's and at
// most kMostRounds, else in WarpTiledQuad's.
cudaError_t SgemmQuadTiles(const Batch& p, cudaStream_t stream) {
  constexpr int64_t kMostRounds = 3;
  int64_t unsplit = 0, splits = 1, slots = 0, few_slots = 0;
  if (cudaError_t error = PlanSplits<WarpTiledQuad>(p, &unsplit, &splits)) {
    return error;
  }
  if (cudaError_t error = WarpTiledSlots<WarpTiledQuad>(&slots)) return error;
  if (cudaError_t error = WarpTiledSlots<WarpTiledQuadFew>(&few_slots)) {
    return error;
  }
  const int64_t tiles = Tiles<WarpTiledQuad>(p) / p.count;
  const int64_t blocks = tiles * (unsplit + (p.count - unsplit) * splits);
  const int64_t few_rounds = CeilDiv(blocks, few_slots);
  return few_rounds <= std::min(CeilDiv(blocks, slots), kMostRounds)
             ? SgemmWarpTiledPlanned<WarpTiledQuadFew>(p, unsplit, splits,
                                                       stream)
             : SgemmWarpTiledPlanned<WarpTiledQuad>(p, unsplit, splits, stream);
}

// Sets *quad to whether the batch p, its C's rows off 16 bytes, takes 64 x 64
// tiles of four one-warp warp tiles, four blocks per SM, with K whole
// (WarpTiledQuadFew) in place of the tiles WithWarpTiledShape gives it (from
// the 64-wide shape S): where they fill from three blocks to every two SMs up
// to one round, and in place of 128 x 128 tiles only where A's rows go element
// by element (as the four-warp tiles copy them; the 128 x 128 ones copy pairs),
// and those tiles run two to an SM, or one (their copies interleaved) where the
// four-warp blocks come to at most three on an SM and K is at most
// kMaxQuadOverBigK. Where C's rows lie on 16 bytes, only with A's element by
// element: in place of 64-wide tiles where the four-warp blocks come to four on
// some SM, and of 128 x 128 tiles one to an SM as above.
// The 64-wide tiles, about half as many, would fill under two thirds of a round
// with K whole, or split it and add into C in padded rows or four atomics a
// run. cuBLAS's strided batch takes 64 x 64 tiles of four warps for 450x451x450
// x 5 and 511^3 x 6. Measured on an H100 against the tiles before (ms,
// docs/benchmarks.md, session 34, the landed rule against e3171d6): in place
// of 64-wide ones, 450x451x450 x 5 0.0454 against 0.0545, x 4 0.0338 against
// 0.0360, the whole 64s of x 10 0.0678 against 0.0823, 318^3 x 16 0.0394
// against 0.0426, x 8 0.0244 against 0.0298, 800x801x802 x 3 0.0924 against
// 0.1209, 302x303x302 x 16 0.0378 against 0.0446, 500x501x502 x 4 0.0366
// against 0.0393, 350x351x350 x 10 0.0387 against 0.0411, 700x301x350 x 3 (198
// blocks) 0.0234 against 0.0255, 511^3 x 6 0.0513 against 0.0531; behind at
// 701^3 x 3 (0.0674 against 0.0664), 600x601x602 x 3 (0.0569 against 0.0562)
// and x 5 (0.0710 against 0.0692) and 703^3 x 2 (0.0517 against 0.0493; 0.0515
// against 0.0505 in a second call). In place of 128 x 128 tiles one to an SM, A
// element by element, before those interleaved their copies: 1001^3 x 2 0.1138
// against 0.1178, the whole 64s of 450x451x450 x 7 0.0550 against 0.0673,
// 330x331x330 x 12 0.0410 against 0.0417. Scratch builds that forced the
// choice (same session) measured where the rule keeps them out: A in pairs in
// place of 128 x 128 tiles, 1002^3 x 2 0.1111 against 0.1063 (but 550x250x550
// x 4 0.0299 against 0.0316); fewer blocks, 450x451x450 x 3 (192) 0.0336
// against 0.0305; past the round, 511^3 x 12 (768) 0.0930 against 0.0835,
// 511^3 x 30 0.2313 against 0.2080, 1001^3 x 4 0.2208 against 0.2061; with C
// on 16 bytes, from 34% slower to 27% faster (400x401x400 x 6 0.0427 against
// 0.0319, 300x301x300 x 20 0.0377 against 0.0519) over 21 batches, no rule
// found then (session 38's is below kMaxQuadOverBigK).
//
// Where K passes kMaxQuadWholeK they are not taken: there the tiles the other
// rules give (K split, or 128 x 128 ones) led. Measured on an H100 against the
// four-warp tiles (ms, docs/benchmarks.md, session 37): 700x3001x350 x 3 0.1106
// against 0.1911, 450x3001x450 x 5 0.1945 against 0.2462, 600x2500x601 x 4
// 0.2240 against 0.2662, 330x2001x330 x 12 0.1812 against 0.2141, 513x2100x517
// x 5 0.1985 against 0.2293, 318x2001x318 x 16 0.1937 against 0.2150,
// 511x2047x511 x 6 0.1592 against 0.1771, 1001x4001x1001 x 2 0.4140 against
// 0.4244; even at 800x3001x802 x 3 and 900x3700x901 x 2. With shorter K they
// led or measured even: 300x1000x301 x 12 0.0890 against 0.0996, 300x1300x301 x
// 12 0.1126 against 0.1197, 513x1100x517 x 5 0.1215 against 0.1257; even from
// 1400 to 1800 (1001x1800x1001 x 2, 900x1700x901 x 2, 400x1700x401 x 8); behind
// only at 450x1501x450 x 5 (0.1278 against 0.1140) and 600x1300x601 x 4 (0.1423
// against 0.1322), though 300x1300x301 x 12 led with them at that K.
constexpr int64_t kMaxQuadWholeK = 2000;

// With their copies interleaved (session 38), the 128 x 128 tiles one to an SM
// led where the four-warp blocks come to four on an SM, or K passes 512, and
// trailed where those come to at most three and K is short. Measured on an H200
// against the four-warp tiles (ms, docs/benchmarks.md, session 38): four on an
// SM, 1001^3 x 2 0.1064 against 0.1134, 901^3 x 2 0.0974 against 0.1034,
// 600x601x602 x 4 0.0645 against 0.0701, 330x331x330 x 12 0.0397 against
// 0.0408, 1001x501x1001 x 2 0.0595 against 0.0614 (but 200x201x202 x 30 0.0276
// against 0.0272); three with K past 512, the whole 512s of 513x515x517 x 5
// 0.0612 against 0.0624; three with K at most 512, the whole 448s of
// 450x451x450 x 7 0.0624 against 0.0543, 420x421x422 x 8 0.0497 against
// 0.0420-0.0456 (400x401x402 x 8 and 390x391x392 x 8 even).
constexpr int64_t kMaxQuadOverBigK = 512;

// With C's rows on 16 bytes and A's element by element, measured on an H200
// against the tiles before (ms, docs/benchmarks.md, session 38): in place of
// 64-wide tiles, four on an SM, 300x301x300 x 20 0.0374 against 0.0513, x 16
// 0.0371 against 0.0406-0.0446, 300x601x300 x 20 0.0697 against 0.0925,
// 300x1001x300 x 20 0.1098 against 0.1458; at most three, behind at 300x301x300
// x 12 (0.0336 against 0.0310), 320x321x320 x 12, 512x511x512 x 6, 520x521x520
// x 4, 600x601x600 x 3, 640x641x640 x 3 and 700x701x700 x 2 (by 7-22%), even at
// 500x501x500 x 5. In place of 128 x 128 tiles one to an SM, three on an SM
// with K short, 200x201x200 x 20 0.0249 against 0.0262, 440x441x440 x 8 0.0426
// against 0.0488; four, behind at 1000x1001x1000 x 2 (0.1095 against 0.0992),
// 240x241x240 x 30, 256x257x256 x 30, 360x361x360 x 12 and 768x767x768 x 3 (by
// 5-12%).

template <typename S>
cudaError_t TakesQuadTilesWhole(const Batch& p, bool* quad) {
  *quad = false;
  if (p.count == 1 || p.k > kMaxQuadWholeK ||
      (p.VectorC() && p.WidthA() != 1)) {
    return cudaSuccess;
  }
  int64_t sms = 0, slots = 0;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  if (cudaError_t error = WarpTiledSlots<WarpTiledQuadFew>(&slots)) {
    return error;
  }
  const int64_t tiles = Tiles<WarpTiledQuadFew>(p);
  if (2 * tiles < 3 * sms || tiles > slots) return cudaSuccess;
  BigTiles big = BigTiles::kNone;
  if (cudaError_t error = TakesBigTiles<S>(p, &big)) return error;
  const bool four_on_an_sm =
      CeilDiv(tiles, sms) == WarpTiledQuadFew::kMinBlocksPerSm;
  const bool few_and_short = !four_on_an_sm && p.k <= kMaxQuadOverBigK;
  if (p.VectorC()) {
    *quad = big == BigTiles::kNone
                ? four_on_an_sm
                : big == BigTiles::kOnePerSm && few_and_short;
  } else {
    *quad = big == BigTiles::kNone ||
            (p.WidthA() == 1 && (big == BigTiles::kTwoPerSm || few_and_short));
  }
  return cudaSuccess;
}

// Sets *small to whether a batch with an operand element by element, whose
// 64 x 64 tiles take as many rounds as the 64-wide shape S's (TakesSmallTiles),
// takes them anyway: where S's tiles pad C at least kMinPadding times as much,
// take more than one round, and would run every problem with K whole
// (WholeProblems), not in 128 x 128 tiles (TakesBigTiles). Over rounds, the
// last one part full weighs less than the padding. Measured on an H200 against
// S's tiles (ms, docs/benchmarks.md, session 49): 577^3 x 50 (the whole 576s;
// 64 x 128 tiles in K steps of 32) 0.5333 against 0.5562, 577^3 x 15 0.1758
// against 0.1890, 529^3 x 15 0.1458 against 0.1640, 529^3 x 60 0.5242 against
// 0.5526, 529x1500x529 x 25 0.5635 against 0.6370, 561x700x561 x 15 0.1829
// against 0.2079, 577x1000x577 x 40 0.6729 against 0.7107, 321^3 x 50 0.1172
// against 0.1223, 450x450x577 x 20 0.1439 against 0.1531; behind only at
// 449^3 x 50 (0.2932 against 0.2847), even at 577^3 x 40, 401^3 x 25 and
// 300x577x577 x 25. In one round they lost (577^3 x 8 0.1011 against 0.0982,
// 449^3 x 12 0.0826 against 0.0799, 321^3 x 25 0.0678 against 0.0658), and so
// they did where S's tiles pad C less than kMinPadding times as much (801^3 x
// 8, 896 against 832 wide, 0.2483 against 0.2395; 705^3 x 12, 768 against
// 704, 0.2441 against 0.2306) or split the last problems (449^3 x 20 0.1374
// against 0.1329; 577^3 x 30 0.3460 against 0.3442, though 577^3 x 20 0.2417
// against 0.2529).
template <typename S>
cudaError_t OutpadsSmallTiles(const Batch& p, bool* small) {
  constexpr double kMinPadding = 1.1;
  *small = false;
  if (p.count == 1 || p.Vectorized() ||
      PaddedArea<S>(p) < kMinPadding * PaddedArea<WarpTiledSmall>(p)) {
    return cudaSuccess;
  }
  int64_t slots = 0, min_split_k = 0;
  if (cudaError_t error = WarpTiledSlots<S>(&slots)) return error;
  const int64_t tiles = Tiles<S>(p);
  if (tiles <= slots ||
      WholeProblems(p, tiles / p.count, slots, &min_split_k) < p.count) {
    return cudaSuccess;
  }
  BigTiles big = BigTiles::kNone;
  if (cudaError_t error = TakesBigTiles<S>(p, &big)) return error;
  *small = big == BigTiles::kNone;
  return cudaSuccess;
}

// The batch p in the tiles WithWarpTiledShape gives it from the 64-wide shape S
// (SgemmWarpTiled), or in four-warp 64 x 64 ones where TakesQuadTilesWhole<S>
// says so, or in two-warp ones where OutpadsSmallTiles<S> does.
template <typename S>
cudaError_t SgemmWideOrQuadTiles(const Batch& p, cudaStream_t stream) {
  bool quad = false, small = false;
  if (cudaError_t error = TakesQuadTilesWhole<S>(p, &quad)) return error;
  if (quad) {
    return SgemmWarpTiledPlanned<WarpTiledQuadFew>(p, p.count, 1, stream);
  }
  if (cudaError_t error = OutpadsSmallTiles<S>(p, &small)) return error;
  return small ? SgemmWarpTiledSmall(p, stream) : SgemmWarpTiled(p, stream);
}

// Runs p in 32 x 32 tiles of one warp, their steps unrolled
// (WarpTiledTinyUnrolled) where the batch's tiles give each SM at least
// kMinUnrolledBlocksPerSm of their blocks (of the 16 that fit) and K takes at
// least kMinUnrolledSteps steps: with fewer blocks, fewer warps hide the longer
// loop's instruction fetches; with fewer steps, the loop runs too few times to
// pay for its longer way in and out. Measured on an H200 against steps not
// unrolled (ms, two rounds, docs/benchmarks.md, session 52): of 31 batches
// from both, 19 gained 1-7% (160x100x170 x 100 0.0296 against 0.0318,
// 135x136x137 x 200 0.0530 against 0.0565, 77^3 x 300 0.0229 against 0.0240,
// 90x1000x91 x 200 0.1241 against 0.1293, 136^3 x 1000 0.2197 against 0.2263,
// 514x250x258 x 6 0.0198 against 0.0204, 401^3 x 9 0.0477 against 0.0488),
// 11 were within 1%, and 390x130x390 x 10 lost 1% in one run (0.0203 against
// 0.0201) but not in another; under 9 steps, 33x35x33 x 198 lost 3% (0.0062
// against 0.0060), 60x61x60 x 200 and 281x51x290 x 100 1% (70^3 x 100 even);
// under 3.5 blocks an SM, all 6 batches lost 1-13% (33x35x33 x 100 0.0057
// against 0.0050, 50^3 x 100 0.0063 against 0.0059, 250x251x250 x 5 0.0139
// against 0.0135).
cudaError_t SgemmTinyTiles(const Batch& p, cudaStream_t stream) {
  constexpr int64_t kMinUnrolledBlocksPerSm = 6;
  constexpr int64_t kMinUnrolledSteps = 9;
  int64_t sms = 0;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  const bool unrolled =
      Tiles<WarpTiledTiny>(p) >= kMinUnrolledBlocksPerSm * sms &&
      p.k >= kMinUnrolledSteps * WarpTiledTiny::kBlockK;
  return unrolled ? SgemmWarpTiledAs<WarpTiledTinyUnrolled>(p, stream)
                  : SgemmWarpTiledAs<WarpTiledTiny>(p, stream);
}

// Runs p in 32 x 32 tiles where TakesTinyTiles<S> says so, else by `launch`.
template <typename S, typename Launch>
cudaError_t TinyTilesOr(const Batch& p, cudaStream_t stream, Launch launch) {
  bool tiny = false;
  if (cudaError_t error = TakesTinyTiles<S>(p, &tiny)) return error;
  return tiny ? SgemmTinyTiles(p, stream) : launch();
}

// The batch p in the one warp-tiled shape `tiles` names, K split as that shape
// plans.
cudaError_t SgemmBatchTiledAs(const Batch& p, BatchTiles tiles,
                              cudaStream_t stream) {
  switch (tiles) {
    case BatchTiles::kSmall:
      return SgemmWarpTiledAs<WarpTiledSmall>(p, stream);
    case BatchTiles::kQuad:
      return SgemmWarpTiledAs<WarpTiledQuad>(p, stream);
    case BatchTiles::kQuadFew:
      return SgemmWarpTiledAs<WarpTiledQuadFew>(p, stream);
    case BatchTiles::kMid:
      return SgemmWarpTiledAs<WarpTiledMid>(p, stream);
    case BatchTiles::kWide:
      return SgemmWarpTiledAs<WarpTiledWide>(p, stream);
    case BatchTiles::kTall:
      return SgemmWarpTiledAs<WarpTiledTall>(p, stream);
    case BatchTiles::kBig:
      return SgemmWarpTiledAs<WarpTiledBig>(p, stream);
    case BatchTiles::kAuto:
      break;
  }
  return cudaErrorInvalidValue;
}

// The modeled time of `count` m x k x n problems in tiles of shape S on a GPU
// of `sms` SMs, run as PlanSplitsOn plans them, where a block tile's
// multiply-add in that shape costs `cost` and a block's way in and out as much
// as `overhead_k` more of K (a split block's adds into C kSplitAddsK more
// again, as BatchSplitCount counts them): the problems with K whole, then the
// split ones' blocks, each set in rounds. A set's busiest SM takes
// CeilDiv(blocks, sms) of them, in whole rounds of S::kMinBlocksPerSm and a
// last round of r more, which runs at speed[r - 1] of a whole round's pace per
// block (fewer blocks share the SM's issue slots). A plan that splits takes
// the shape's split_factor[0] where whole problems come first, [1] where every
// problem splits.
template <typename S, size_t kLastRounds>
double ModeledTime(int64_t m, int64_t n, int64_t k, int64_t count, int64_t sms,
                   double cost, int64_t overhead_k,
                   const std::array<double, kLastRounds>& speed,
                   const std::array<double, 2>& split_factor) {
  static_assert(kLastRounds == S::kMinBlocksPerSm - 1);
  constexpr int64_t kSplitAddsK = 32;
  auto rounds = [&](int64_t blocks) {
    const int64_t busiest = CeilDiv(blocks, sms);
    const int64_t last = busiest % S::kMinBlocksPerSm;
    return static_cast<double>(busiest / S::kMinBlocksPerSm) +
           (last == 0 ? 0.0
                      : static_cast<double>(last) / S::kMinBlocksPerSm /
                            speed[last - 1]);
  };
  int64_t unsplit = 0, splits = 1;
  PlanSplitsOn<S>(Batch{m, n, k, nullptr, 0, nullptr, 0, nullptr, 0, count},
                  sms * S::kMinBlocksPerSm, &unsplit, &splits);
  const int64_t tiles = Tiles<S>(m, n, 1);
  double depth = rounds(tiles * unsplit) *
                 static_cast<double>(RoundUp(k, S::kBlockK) + overhead_k);
  if (splits > 1) {
    depth +=
        rounds(tiles * (count - unsplit) * splits) *
        static_cast<double>(PartK<S>(k, splits) + overhead_k + kSplitAddsK);
    depth *= split_factor[unsplit > 0 ? 0 : 1];
  }
  return cost * S::kMinBlocksPerSm * S::kBlockM * S::kBlockN * depth;
}

// The batch p in warp-tiled blocks of the shape its sides take: the cost
// model's (ModeledBatchTiles) where p lies in its range, else the rules'.
cudaError_t SgemmBatchTiles(const Batch& p, cudaStream_t stream) {
  auto small = [&]() -> cudaError_t {  // 64 x 64 tiles, of four warps or two
    bool four_warps = TakesQuadTiles(p);
    if (!four_warps) {
      if (cudaError_t error = FillsQuadTiles(p, &four_warps)) return error;
    }
    return four_warps ? SgemmQuadTiles(p, stream)
                      : SgemmWarpTiledSmall(p, stream);
  };
  if (p.m < 128 || p.n < 128) {
    bool mid = false;
    if (cudaError_t error = TakesMidTiles(p, &mid)) return error;
    if (mid) {
      return TinyTilesOr<WarpTiledMid>(
          p, stream, [&] { return SgemmWarpTiledAs<WarpTiledMid>(p, stream); });
    }
    return TinyTilesOr<WarpTiledSmall>(p, stream, small);
  }
  int64_t sms = 0;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  const BatchTiles modeled =
      ModeledBatchTiles(p.m, p.n, p.k, p.count, p.VectorA(), p.VectorB(), sms);
  if (modeled != BatchTiles::kAuto) {
    return SgemmBatchTiledAs(p, modeled, stream);
  }
  if (TakesQuadTiles(p)) return TinyTilesOr<WarpTiledSmall>(p, stream, small);
  bool tall = false, takes_small = false;
  if (cudaError_t error = TakesTallTiles(p, &tall)) return error;
  if (cudaError_t error =
          tall ? TakesSmallTiles<WarpTiledTall>(p, &takes_small)
               : TakesSmallTiles<WarpTiledWide>(p, &takes_small)) {
    return error;
  }
  if (takes_small) return TinyTilesOr<WarpTiledSmall>(p, stream, small);
  if (tall) {
    return TinyTilesOr<WarpTiledTall>(p, stream, [&] {
      return SgemmWideOrQuadTiles<WarpTiledTall>(p, stream);
    });
  }
  return TinyTilesOr<WarpTiledWide>(p, stream, [&] {
    return SgemmWideOrQuadTiles<WarpTiledWide>(p, stream);
  });
}

// Sets *fills to whether the whole 64s of a batch cut at its edges
// (SgemmBatchEdges) fill enough of a round of 128 x 128 tiles one to an SM:
// kMinFillVector of the SMs, counted by their area, where A's and B's rows
// start on 16 bytes, else kMinFill counted in whole tiles. Measured on an H200
// by area against whole tiles (ms, docs/benchmarks.md, session 39): 900^3 x 2
// (98 of 132 SMs either way) 0.0856 against 0.0940, 900x1000x900 x 2 0.0906
// against 0.1027, 708^3 x 3 (90.8 by area, 108 whole: not cut) 0.0741 against
// 0.0773. Off 16 bytes the whole 64s' own plans lost where area let them in,
// 898x900x898 x 2 (B in pairs; 98) 0.1046 against 0.0877, and won where it
// kept them out, 576x577x578 x 4 (A element by element; 81, 100 whole) 0.0548
// against 0.0567: kept to whole tiles. Below the line they lost with K split
// (H200, all of C zeroed first): 513^3 x 6 (96) 0.070 against 0.063, 836^3 x
// 2 (84.5, 98 whole) 0.092 against 0.083.
cudaError_t InnerFills(const Batch& inner, bool* fills) {
  constexpr double kMinFill = 0.75;
  constexpr double kMinFillVector = 0.74;
  constexpr double kTileArea = WarpTiledBig::kBlockM * WarpTiledBig::kBlockN;
  int64_t sms = 0;
  if (cudaError_t error = MultiprocessorCount(&sms)) return error;
  *fills = inner.VectorOperands()
               ? static_cast<double>(inner.m) * inner.n * inner.count >=
                     kMinFillVector * kTileArea * static_cast<double>(sms)
               : static_cast<double>(Tiles<WarpTiledBig>(inner)) >=
                     kMinFill * static_cast<double>(sms);
  return cudaSuccess;
}

// A batch whose M or N lies 1 to kMaxEdge past a multiple of kEdgeTile (or
// N up to kMaxWideEdge, where the whole 64s' 64-wide tiles pad C less)
// computes the whole kEdgeTiles of both as a batch of its own, and the rows
// and columns past them as strips beside it (sgemm_strip.cuh), in place of a
// row or column of tiles that is mostly padding. Measured on an H100 against
// those tiles (ms, docs/benchmarks.md, session 21): 129^3 x 150 0.0476 against
// 0.0601, 129x4096x129 x 100 0.6134 against 0.9809, 257^3 x 44 0.0669 against
// 0.0876, 257^3 x 236 0.2967 against 0.3515, 260^3 x 43 0.0606 against
// 0.0729, 260^3 x 228 0.2726 against 0.2921, 513^3 x 30 0.2543 against
// 0.2880, 1025^3 x 4 0.2423 against 0.2635, 2049^3 x 2 0.8343 against 0.8654.
// Wider strips lost then, their kernels slower than tiles (272^3 x 37, 16 rows
// and columns, 0.0710 against 0.0614; 333^3 x 108, 13, 0.3398 against 0.2614;
// 136^3 x 1000, 8, 0.2604 against 0.2506; 70^3 x 2048, 6, 0.2202 against
// 0.1812). With column strips that sum by a scattering butterfly, 5 to 16
// columns measured on an H200 against the batch uncut (ms, docs/benchmarks.md,
// session 50): 256x256x272 x 200 0.2037 against 0.2132, 258x300x270 x 200
// 0.2899 against 0.3119, 384x384x396 x 71 0.1964 against 0.2243, 512x512x520 x
// 30 0.1909 against 0.2174, 640x640x650 x 15 0.1998 against 0.2244,
// 1024x1024x1030 x 4 0.1894 against 0.1960, 770x770x780 x 9 0.2161 against
// 0.2282, 512x1000x525 x 20 0.2899 against 0.3042, 2048x256x266 x 30 0.2408
// against 0.2549; where the whole 64s' 64-wide tiles pad C as much as the
// batch's, they lost: 320x333x333 x 108 0.2642 against 0.2326, 576x577x590 x
// 50 0.5394 against 0.5023, 448x448x460 x 44 0.2122 against 0.2051 (the
// batches uncut in another run, the same day). The whole 64s are cut off only
// where they fill a round (InnerFills), and are planned as any batch, K split
// where the rules say so (C zeroed problem by problem, ZeroC). Measured on an
// H200 against the plan before, which kept every problem whole because their C
// are not one matrix, and so took 128 x 128 tiles one to an SM where those fit
// (ms, session 39): 900^3 x 5 0.1898 against 0.2196, 769^3 x 3 (four-warp tiles
// for 128 x 128) 0.0930 against 0.1117, 1540^3 x 2 0.3450 against 0.3641, 513^3
// x 30 0.2482 against 0.2512; 130x1000x129 x 100 lost (0.1615 against 0.1490;
// cuBLAS 0.1789), whose strips had run on the 32 SMs that its 100 tiles one to
// an SM left. On an H100 with K whole, from half a round they lost (644^3 x 3,
// 75 tiles, 0.0724 against 0.0569; 772^3 x 2, 72, 0.0840 against 0.0690),
// and 257^3 x 3 (12) 0.0233 against 0.0184. The whole 64s are at least 128
// on a side and K at most INT_MAX / 2, so that they take the warp-tiled
// kernels, which read the pitches (one-tile problems' staged kernel and the
// register-blocked one for longer K do not; 65^3 x 4096 cut measured even).
// With `tiles` other than kAuto, the batch, or its whole 64s where its edges
// are cut, takes that warp-tiled shape (SgemmBatchTiledAs).
cudaError_t SgemmBatchEdges(const Batch& p, BatchTiles tiles,
                            cudaStream_t stream) {
  constexpr int64_t kEdgeTile = 64;
  constexpr int64_t kMaxEdge = 4;
  constexpr int64_t kMaxWideEdge = 16;
  const int64_t rows = p.m % kEdgeTile, cols = p.n % kEdgeTile;
  Batch inner = p;
  inner.m -= rows;
  inner.n -= cols;
  auto tiled = [&](const Batch& batch) {
    return tiles == BatchTiles::kAuto ? SgemmBatchTiles(batch, stream)
                                      : SgemmBatchTiledAs(batch, tiles, stream);
  };
  const bool cut_cols =
      cols <= kMaxEdge ||
      (cols <= kMaxWideEdge && WidePaddedArea(inner) < WidePaddedArea(p));
  if (p.count == 1 || inner.m < 128 || inner.n < 128 || p.k > INT_MAX / 2 ||
      rows > kMaxEdge || !cut_cols || rows + cols == 0) {
    return tiled(p);
  }
  bool fills = false;
  if (cudaError_t error = InnerFills(inner, &fills)) return error;
  if (!fills) return tiled(p);
  if (cudaError_t error = tiled(inner)) return error;
  if (cols > 0) {
    if (cudaError_t error = SgemmStrip(p, static_cast<int>(cols), p.b + inner.n,
                                       p.c + inner.n, stream)) {
      return error;
    }
  }
  if (rows == 0) return cudaSuccess;
  Batch top = p;
  top.n = inner.n;
  return SgemmRowStrip(top, static_cast<int>(rows), p.a + inner.m * p.lda,
                       p.c + inner.m * p.ldc, stream);
}

// A batch whose A and B rows both start off 16 bytes copies both into padded
// rows first, each as one matrix of all its problems, so that every rule
// below takes it as a batch on 16 bytes (bulk copies, and whole 64s apart from
// edges with operands that stay on 16 bytes), where it does at least
// kMinPaddedMacs multiply-adds in all and, as a single product must, 512 per
// element copied. (SgemmWarpTiled pads batches the rules give 64-wide tiles,
// copying only the operand off 16 bytes, where that is one element per 1500
// multiply-adds.) Measured on an H100 against the batch unpadded (ms,
// docs/benchmarks.md, session 36): 2049^3 x 2 0.7713 against 0.8294, 2047^3
// x 2 0.7171 against 0.7837, 2049x1025x2049 x 2 0.4045 against 0.4383, 1537^3
// x 2 0.3891 against 0.3977, 1538^3 x 2 (8-byte pairs) 0.3891 against 0.3970,
// 1025^3 x 4 0.2340 against 0.2420; 1025x1001x1027 x 5 (513) lost 1.4% (0.2879
// against 0.2839). Below 512 per element copied it was mixed: 1001^3 x 8 (500)
// 0.3907 against 0.4009, 1001x4001x1001 x 2 (500) 0.4051 against 0.4256, but
// 963x1001x967 x 5 (482) 0.2995 against 0.2572; with fewer it lost: 901^3 x 5
// (450) 0.2696 against 0.2340, 777^3 x 10 (388) 0.3191 against 0.2998. With
// fewer multiply-adds in all it lost too: 1002^3 x 2 0.1136 against 0.1061,
// 703^3 x 2 0.0856 against 0.0515. Padding A alone lost (1200x1201x1200 x 4,
// 1200 per element copied, 0.3508 against 0.3347). Nor does it pad where the
// batch as it is lies in ModeledBatchTiles' range: the model's pick takes it
// unpadded (or its whole 64s, where its edges are cut). Measured on an H200
// against padding (ms, docs/benchmarks.md, session 63), on 72 random batches
// the rule above padded (M and N 1025 to 1101, both operands off 16
// bytes): 3.8% ahead (geometric mean), 46 over 2% ahead (1089x937x1075 x 4
// 0.2412 against 0.2827, 1097x1055x1085 x 9 0.5634 against 0.6328), 7 over 2%
// behind (1043x1031x1035 x 11 0.6732 against 0.6164, 1067x547x1029 x 11 0.3810
// against 0.3534); at or above cuBLAS's strided batch at 16 against 7. On 24
// fresh batches where those 7 lay (10 to 13 problems, 3 to 4 rounds of 128 x
// 128 tiles two to an SM; session 64): 3.9% ahead, 14 over 2% ahead, 2 over 2%
// behind (1057x985x1033 x 11 0.6124 against 0.5834).
cudaError_t SgemmBatch(const Batch& p, cudaStream_t stream) {
  constexpr double kMinPaddedMacs = 4294967296.0;  // 2^32
  constexpr double kMinMacsPerCopied = 512;
  const double macs = p.MultiplyAdds();
  const double copied = static_cast<double>(p.count) * p.k * (p.m + p.n);
  bool pad = p.count > 1 && !p.VectorA() && !p.VectorB() && p.OneMatrixA() &&
             p.OneMatrixB() && macs >= kMinPaddedMacs &&
             macs >= kMinMacsPerCopied * copied;
  if (pad) {
    int64_t sms = 0;
    if (cudaError_t error = MultiprocessorCount(&sms)) return error;
    pad = ModeledBatchTiles(p.m, p.n, p.k, p.count, false, false, sms) ==
          BatchTiles::kAuto;
  }
  return SgemmPadded(p, pad, pad, false, stream, [&](const Batch& padded) {
    return SgemmBatchEdges(padded, BatchTiles::kAuto, stream);
  });
}

}  // namespace

// A batch with an operand off 16 bytes takes one warp-tiled shape on the
// whole batch (SgemmBatchTiledAs, from SgemmBatchTiles) where it lies in the
// range the model was fitted on (sides kMinModeledSide to kMaxModeledSide, one
// 128 x 128 tile per SM to kMaxModeledRounds rounds of them two to an SM): the
// one of least ModeledTime, with each shape's cost (against 64 x 128 tiles')
// by which operands are off 16 bytes, both, A alone or B alone, its blocks'
// overhead and its speeds in a last round short of a whole one (128 x 64
// tiles, which in that range never cost least, are left out). Else kAuto, and
// the rules choose. All are tools/fit_tile_model.py's fit to every shape
// forced on 764 random batches, measured on an H200 (docs/tile_model/fit;
// docs/benchmarks.md, sessions 62 to 64): tools/random_batches.py's seeds 81,
// 82, 88 and 91, and 86, 87, 89 and 92 with --sides 700:1099 --tiles 100:400,
// each --rows odd, a_odd and b_odd (91 and 92: pairs, a_pairs and b_pairs), and
// the 48 of seeds 6301 and 6404 (M and N 1025-1100) less the 4 whose edges the
// rules cut. Fitted on all of those lists but one and tested on it
// (--crosswise): behind the best forced shape by 0.32% (geometric mean, 717
// batches in range; 0.33% with those 4 fitted whole, session 65), against 0.93%
// for session 63's model, which ran every shape's problems as if none split K:
// 76% of its gap lay in batches whose picked or best shape split K (PlanSplits
// runs a batch's first problems with K whole and splits the rest). Without the
// factors of plans that split, 0.30%, but 0.41% against 0.34% on the fresh
// batches below, and it took four-warp 64 x 64 tiles where two-warp ones ran
// faster (401^3 x 25 0.1277 ms against 0.1144; the factors give four-warp
// split tails 2.5% more, and plans that split every problem 2-8% less). Its
// splits' adds counted as 0 or 64 more of K, 0.42% and 0.38%; fitted by
// shape, 0.36%; the split tails of the shapes that overlap them counted beside
// the whole problems' last round, 0.47%. On 204 fresh batches (seeds 95 and 96
// as 81 and 86, every shape forced in one call, session 65): 0.42% and 0.35%
// behind the best forced shape against 1.21% and 0.66% for session 63's
// model; 57 picks changed, 1.9% ahead (geometric mean), 22 over 2% ahead and
// 10 over 2% behind (at most 7.9%). The sweep (kernels/bench/batched_sweep.txt)
// moved one row over 2%, behind: 449^3 x 12, whose whole 64s (448x449x448 x
// 12, cut by SgemmBatchEdges) take four-warp tiles with K split in the last
// two problems for 64 x 128 ones, a pick session 63's model made by 0.02%,
// 0.0854 against 0.0795. With each operand of the bench's input sets on 256
// bytes (session 66): 0.28%, 0.28% and 0.34% behind the best forced shape on
// seeds 81, 82 and 95 re-measured; on 99 batches whose edges the rules cut
// (seed 97 with --edges cut, the shapes forced on their whole 64s), 0.58%,
// 8 over 2% (449^3 x 12 among them, 6.8%).
BatchTiles ModeledBatchTiles(int64_t m, int64_t n, int64_t k, int64_t count,
                             bool vector_a, bool vector_b, int64_t sms) {
  constexpr int64_t kMinModeledSide = 260;
  constexpr int64_t kMaxModeledSide = 1100;
  constexpr int64_t kMaxModeledRounds = 4;
  const int64_t big_tiles = Tiles<WarpTiledBig>(m, n, count);
  if (count == 1 || (vector_a && vector_b) || big_tiles < sms ||
      big_tiles > kMaxModeledRounds * WarpTiledBig::kMinBlocksPerSm * sms ||
      std::min({m, n, k}) < kMinModeledSide ||
      std::max({m, n, k}) > kMaxModeledSide) {
    return BatchTiles::kAuto;
  }
  const int off = vector_a ? 2 : vector_b ? 1 : 0;
  BatchTiles least = BatchTiles::kAuto;
  double least_time = 0;
  auto consider = [&](auto shape, BatchTiles tiles, std::array<double, 3> cost,
                      int64_t overhead_k, const auto& speed,
                      std::array<double, 2> split_factor) {
    const double time = ModeledTime<decltype(shape)>(
        m, n, k, count, sms, cost[off], overhead_k, speed, split_factor);
    if (least == BatchTiles::kAuto || time < least_time) {
      least = tiles;
      least_time = time;
    }
  };
  consider(WarpTiledSmall(), BatchTiles::kSmall, {0.9867, 0.9759, 0.9518}, 64,
           std::array{0.5417, 1.0, 0.7, 0.9333, 0.8333}, {0.9995, 0.9535});
  consider(WarpTiledQuadFew(), BatchTiles::kQuadFew, {1.0967, 1.0807, 1.0587},
           32, std::array{1.0, 1.0, 0.9875}, {1.0256, 0.9770});
  consider(WarpTiledMid(), BatchTiles::kMid, {1.0749, 1.0518, 1.0707}, 32,
           std::array{0.5, 0.575, 0.775}, {1.0034, 0.9236});
  consider(WarpTiledWide(), BatchTiles::kWide, {1, 1, 1}, 32,
           std::array{0.7, 0.8667}, {0.9865, 0.9364});
  consider(WarpTiledBig(), BatchTiles::kBig, {0.9125, 0.9470, 0.9030}, 32,
           std::array{0.95}, {1, 1});
  return least;
}

bool ParseSgemmVariant(const char* name, SgemmVariant* variant) {
  return ParseVariant(name, kSgemmVariants, SgemmVariantName, variant);
}

bool ParseTransposeVariant(const char* name, TransposeVariant* variant) {
  return ParseVariant(name, kTransposeVariants, TransposeVariantName, variant);
}

bool ParseBatchTiles(const char* name, BatchTiles* tiles) {
  return ParseVariant(name, kBatchTiles, BatchTilesName, tiles);
}

const char* BatchTilesName(BatchTiles tiles) {
  switch (tiles) {
    case BatchTiles::kAuto:
      return "auto";
    case BatchTiles::kSmall:
      return "small";
    case BatchTiles::kQuad:
      return "quad";
    case BatchTiles::kQuadFew:
      return "quad_few";
    case BatchTiles::kMid:
      return "mid";
    case BatchTiles::kWide:
      return "wide";
    case BatchTiles::kTall:
      return "tall";
    case BatchTiles::kBig:
      return "big";
  }
  return "unknown";
}

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
    case SgemmVariant::kWarpTiled:
      return "warp_tiled";
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
    // Measured on an H200 (docs/benchmarks.md): the warp-tiled kernel, with
    // K split to keep the last round of blocks full and large operands
    // padded where their rows don't start on 16 bytes, is ahead of the other
    // rungs at every shape measured.
    case SgemmVariant::kAuto:
    case SgemmVariant::kWarpTiled:
      return SgemmWarpTiled(Single(m, n, k, a, b, c), stream);
    case SgemmVariant::kRegisterBlocked:
      return SgemmRegisterBlocked(Single(m, n, k, a, b, c), stream);
  }
  return cudaErrorInvalidValue;
}

cudaError_t SgemmStridedBatched(int64_t m, int64_t n, int64_t k, const float* a,
                                int64_t stride_a, const float* b,
                                int64_t stride_b, float* c, int64_t stride_c,
                                int64_t batch, cudaStream_t stream,
                                BatchTiles tiles) {
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return cudaErrorInvalidValue;
  const Batch p{m, n, k, a, stride_a, b, stride_b, c, stride_c, batch};
  if (tiles != BatchTiles::kAuto) return SgemmBatchEdges(p, tiles, stream);
  const int64_t side = std::max(m, n);
  if (side <= PerWarp::kTile) return SgemmSmallProblems(p, stream);
  return SgemmBatch(p, stream);
}

// A grouped launch takes 64 x 128 warp tiles where they average at least this
// many multiply-adds a block, else the 64 x 64 small tiles. Measured on an H100
// (ms, docs/benchmarks.md, session 32; sets of random shapes, multiply-adds a
// warp-tiled block, small tiles against warp tiles): 1024 problems up to 64
// on a side (32k) 0.0286 against 0.0395, up to 96 (87k) 0.0567 against
// 0.0598, 256 up to 100 (98k) 0.0229 against 0.0236; 768 up to 112 (127k)
// 0.0580 against 0.0572, 512 up to 128 (176k) 0.0470 against 0.0457, 256 up
// to 256 (579k) 0.1001 against 0.0878, 64 up to 1024 (3.5M) 0.8561 against
// 0.6340.
constexpr double kGroupedWarpTileWork = 112 * 1024;

GroupedPlan PlanSgemmGrouped(const GemmProblem* problems, int64_t count,
                             GroupedGemmEntry* entries) {
  using Warp = WarpTiledWide;
  GroupedPlan plan;
  int64_t small_blocks = 0, warp_blocks = 0;
  double multiply_adds = 0;
  bool k_fits = true;  // the warp-tiled kernel's K positions are ints
  int width = 4;
  for (int64_t i = 0; i < count; ++i) {
    const GemmProblem& p = problems[i];
    if (p.m <= 0 || p.n <= 0 || p.k <= 0) return plan;
    // The grid is checked in small tiles: the warp tiles, larger, are fewer.
    const int64_t small = GridBlocks(CeilDiv(p.m, SmallTile64::kTile),
                                     CeilDiv(p.n, SmallTile64::kTile));
    if (small < 0 || small > INT_MAX - small_blocks) return plan;
    small_blocks += small;
    warp_blocks += CeilDiv(p.m, Warp::kBlockM) * CeilDiv(p.n, Warp::kBlockN);
    multiply_adds += 1.0 * p.m * p.n * p.k;
    k_fits = k_fits && p.k <= INT_MAX / 2;
    width = std::min(
        {width, PieceWidth(p.a, p.k, 0, p.k), PieceWidth(p.b, p.n, 0, p.n)});
  }
  plan.warp_tiled =
      k_fits && multiply_adds >= kGroupedWarpTileWork * warp_blocks;
  plan.width = plan.warp_tiled ? width : 1;
  const int64_t tile_m = plan.warp_tiled ? Warp::kBlockM : SmallTile64::kTile;
  const int64_t tile_n = plan.warp_tiled ? Warp::kBlockN : SmallTile64::kTile;
  plan.blocks = 0;
  for (int64_t i = 0; i < count; ++i) {
    const GemmProblem& p = problems[i];
    const bool vectorized = Vectorizable(p.a, p.k, 0) &&
                            Vectorizable(p.b, p.n, 0) &&
                            Vectorizable(p.c, p.n, 0);
    entries[i] = {p, plan.blocks, vectorized};
    plan.blocks += CeilDiv(p.m, tile_m) * CeilDiv(p.n, tile_n);
  }
  return plan;
}

cudaError_t SgemmGrouped(const GroupedGemmEntry* entries, int64_t count,
                         const GroupedPlan& plan, cudaStream_t stream) {
  if (count <= 0 || plan.blocks <= 0 || plan.blocks > INT_MAX) {
    return cudaErrorInvalidValue;
  }
  if (plan.warp_tiled) {
    return LaunchWarpTiledGrouped<WarpTiledWide>(entries, count, plan.blocks,
                                                 plan.width, stream);
  }
  return LaunchOverlapped(SgemmGroupedKernel<SmallTile64>, plan.blocks,
                          SmallTile64::kThreads, 0, stream, entries, count);
}

const char* TransposeVariantName(TransposeVariant variant) {
  switch (variant) {
    case TransposeVariant::kAuto:
      return "auto";
    case TransposeVariant::kTiled:
      return "tiled";
    case TransposeVariant::kWide:
      return "wide";
    case TransposeVariant::kLargeTile:
      return "large_tile";
    case TransposeVariant::kPacked:
      return "packed";
  }
  return "unknown";
}

cudaError_t Transpose(int64_t rows, int64_t cols, const float* in, float* out,
                      cudaStream_t stream, TransposeVariant variant) {
  return TransposeStridedBatched(rows, cols, in, 0, out, 0, 1, stream, variant);
}

cudaError_t TransposeStridedBatched(int64_t rows, int64_t cols, const float* in,
                                    int64_t in_stride, float* out,
                                    int64_t out_stride, int64_t batch,
                                    cudaStream_t stream,
                                    TransposeVariant variant) {
  if (rows <= 0 || cols <= 0 || batch <= 0) return cudaErrorInvalidValue;
  switch (variant) {
    case TransposeVariant::kAuto:
      if (rows == 1 || cols == 1) {
        return CopyVectors(rows * cols, in, in_stride, out, out_stride, batch,
                           stream);
      }
      // Measured on an H200 (docs/benchmarks.md). Small matrices: the packed
      // kernel (16 x 16 / 65536: 96% of a copy against 49% for the wide
      // kernel; 33 x 17 / 4096: 88% against 44%), except where they are whole
      // 32 x 32 tiles (32 x 32 / 4096: the wide kernel 94%, packed 89%).
      if (rows * cols <= PackedShape::kMaxSize) {
        const bool whole_tiles = rows % 32 == 0 && cols % 32 == 0;
        if (!whole_tiles) {
          return TransposePacked(rows, cols, in, in_stride, out, out_stride,
                                 batch, stream);
        }
        if (Vectorizable(in, cols, in_stride) &&
            Vectorizable(out, rows, out_stride)) {
          return TransposeWide<32, 128, 16>(rows, cols, in, in_stride, out,
                                            out_stride, batch, stream);
        }
      }
      // Larger ones: 64 x 64 tiles (8192 x 8192: 94% of a copy against 88%
      // for the wide kernel; 4093 x 4099: 91% against 67% for the tiled one).
      return TransposeLargeTile(rows, cols, in, in_stride, out, out_stride,
                                batch, stream);
    case TransposeVariant::kPacked:
      if (rows * cols <= PackedShape::kMaxSize) {
        return TransposePacked(rows, cols, in, in_stride, out, out_stride,
                               batch, stream);
      }
      [[fallthrough]];
    case TransposeVariant::kLargeTile:
      return TransposeLargeTile(rows, cols, in, in_stride, out, out_stride,
                                batch, stream);
    case TransposeVariant::kWide:
      return TransposeWide<32, 128, 16>(rows, cols, in, in_stride, out,
                                        out_stride, batch, stream);
    case TransposeVariant::kTiled:
      return TransposeTiled(rows, cols, in, in_stride, out, out_stride, batch,
                            stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace matserve::kernels
