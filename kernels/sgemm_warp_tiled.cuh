// Warp-tiled SGEMM: block tiles of C split into warp tiles, 8 x 4 to 8 x 12 of
// C per thread, operands copied into a ring of shared-memory stages several K
// steps ahead (by cp.async, or by bulk tensor copies), and an optional split of
// K across blocks. It waits for the kernel before it in the stream
// (grid_dependency.cuh) before touching memory.
#ifndef MATSERVE_KERNELS_SGEMM_WARP_TILED_CUH_
#define MATSERVE_KERNELS_SGEMM_WARP_TILED_CUH_

#include <cstdint>
#include <type_traits>

#include "kernels/bulk_copy.cuh"
#include "kernels/copy_async.cuh"
#include "kernels/float_vector.cuh"
#include "kernels/grid_dependency.cuh"
#include "kernels/grouped_table.cuh"
#include "kernels/outer_product.cuh"

namespace matserve::kernels {

// A block computes a kBlockM x kBlockN tile of C in steps of kBlockK along K,
// with kStages steps in shared memory (the next kStages - 1 in flight while
// one is computed). Each warp owns a kWarpM x kWarpN piece of the tile and
// each lane an 8 x (4 * kRunsN) block of that; a lane reads its A fragment
// kFragK columns at a time (one 4-, 8- or 16-byte read per row).
template <int kBlockM_, int kBlockN_, int kBlockK_, int kWarpM_, int kWarpN_,
          int kStages_, int kMinBlocksPerSm_, int kFragK_ = 2, int kRunsN_ = 2>
struct WarpTiledShape {
  static constexpr int kBlockM = kBlockM_;
  static constexpr int kBlockN = kBlockN_;
  static constexpr int kBlockK = kBlockK_;
  static constexpr int kWarpM = kWarpM_;
  static constexpr int kWarpN = kWarpN_;
  static constexpr int kStages = kStages_;
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSm_;
  static constexpr int kFragK = kFragK_;
  static constexpr int kRunsN = kRunsN_;
  // The main loop's steps, unrolled by this many (UnrolledSteps in launch.h).
  static constexpr int kUnrolledSteps = 1;

  // A lane's columns are kRunsN runs of 4, kRunGap apart; its rows are 8,
  // kLanesM apart. So the lanes of a warp read kLanesM consecutive rows of A
  // and kLanesN consecutive runs of B at once.
  static constexpr int kLaneN = 4 * kRunsN;
  static constexpr int kRunGap = kWarpN / kRunsN;
  static constexpr int kLanesN = kWarpN / kLaneN;
  static constexpr int kLanesM = 32 / kLanesN;
  static constexpr int kWarpsM = kBlockM / kWarpM;
  static constexpr int kWarpsN = kBlockN / kWarpN;
  static constexpr int kThreads = 32 * kWarpsM * kWarpsN;

  // A is staged as it lies in memory (row-major, so 16-byte copies work);
  // its rows are padded to an odd number of 16-byte units, which puts the
  // consecutive rows a warp reads in different banks.
  static constexpr int kPitchA = kBlockK + 4;
  static constexpr int kFloatsA = kBlockM * kPitchA;
  static constexpr int kStageFloats = kFloatsA + kBlockK * kBlockN;
  // The stages, or the tile of C that a split K adds through them realigned
  // (rows kBlockN + 1 apart), whichever is larger.
  static constexpr int kRingFloats = kStages * kStageFloats;
  static constexpr int kTileFloatsC = kBlockM * (kBlockN + 1);
  static constexpr int kSharedFloats =
      kRingFloats > kTileFloatsC ? kRingFloats : kTileFloatsC;
  static constexpr int kSharedBytes = kSharedFloats * 4;
  // Bulk copies (kBulk) stage A's step in rows of kBlockK, unpadded, at the
  // stage's start, its 16-byte units swizzled over rows of kBlockK * 4 bytes
  // (64 or 128, a swizzle the copies know); B lies where it does otherwise.
  // After the stages, a barrier per stage.
  static constexpr int kBulkSharedBytes = kSharedBytes + kStages * 8;

  static_assert(kLanesN * kLanesM == 32 && kLanesM * 8 == kWarpM &&
                    kLanesN * kLaneN == kWarpN,
                "32 lanes of 8 x kLaneN cover the warp tile");
  static_assert(kBlockM % kWarpM == 0 && kBlockN % kWarpN == 0,
                "whole warp tiles per block tile");
  static_assert(kPitchA / 4 % 2 == 1, "odd 16-byte units per row of A");
  static_assert(kStages >= 2 && kBlockK % kFragK == 0, "a ring of stages");
  static_assert(kFragK == 1 || kFragK == 2 || kFragK == 4, "a vector read");
  // Bulk copies' boxes: A's, swizzled (rows of 64 or 128 bytes), start on
  // 1024 bytes, B's on 128.
  static constexpr bool kBulkable = (kBlockK == 16 || kBlockK == 32) &&
                                    kStageFloats * 4 % 1024 == 0 &&
                                    kFloatsA * 4 % 128 == 0;
};

// The least gap between rows `pitch` floats long that puts pieces `span`
// floats wide of consecutive rows of the gap in disjoint banks, as many as a
// 128-byte access holds (the gap times the pitch an odd multiple of the span,
// modulo 32 banks), and that a block of `warps` warps, each copy of theirs
// `copies` rows, can take: the warps divide into the gap, or, in a block of
// more than one warp, the gap into them and its multiples of them into the
// copies. 1 where a piece fills the banks or no gap up to 32 will do.
__host__ __device__ constexpr int DisjointRowGap(int pitch, int span, int warps,
                                                 int copies) {
  if (span >= 32) return 1;
  for (int gap = 2; gap <= 32; ++gap) {
    const int shift = gap * pitch % 32;
    const bool disjoint = shift % span == 0 && shift / span % 2 == 1;
    const bool taken = warps % gap == 0 || (warps > 1 && gap % warps == 0 &&
                                            copies % (gap / warps) == 0);
    if (disjoint && taken) return gap;
  }
  return 1;
}

// The tensors of A and B that a kernel with bulk copies reads (kernel
// parameters, each a box of one K step of a block tile), and nothing for the
// others.
template <bool kBulk>
struct BulkMaps {};
template <>
struct BulkMaps<true> {
  CUtensorMap a, b;
};

// The problem table of a grouped launch (PlanSgemmGrouped's entries, on the
// device).
struct GroupedTable {
  const GroupedGemmEntry* entries;
  int64_t count;
};

// What a kernel reads besides its sizes and pointers: the bulk copies'
// tensors (kBulk), the problem table (kGrouped), or nothing.
template <bool kBulk, bool kGrouped>
using KernelTables =
    std::conditional_t<kGrouped, GroupedTable, BulkMaps<kBulk>>;

// Adds `v` to c[0..3] (16-byte aligned), as one vector atomic where the
// architecture has it.
__device__ inline void AtomicAdd4(float* c, float4 v) {
#if __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(c), v);
#else
  atomicAdd(c, v.x), atomicAdd(c + 1, v.y);
  atomicAdd(c + 2, v.z), atomicAdd(c + 3, v.w);
#endif
}

// Adds a run of 4 of a row of C realigned to C's 16-byte runs: v[h, h + 4)
// into out[h, h + 4) as one 16-byte atomic, where h (0 to 3) is the number of
// elements before out's next 16-byte boundary; with `first` (the row's first
// run), v[0, h) one by one too. Only elements below `left` are added, one by
// one where the 16-byte run does not fit below it.
__device__ inline void AddRealignedRun(const float* v, float* out, int left,
                                       bool first) {
  const int h = static_cast<int>(-(reinterpret_cast<uintptr_t>(out) / 4) & 3);
  if (first) {
    for (int j = 0; j < h && j < left; ++j) atomicAdd(out + j, v[j]);
  }
  if (h + 4 <= left) {
    AtomicAdd4(out + h, make_float4(v[h], v[h + 1], v[h + 2], v[h + 3]));
  } else {
    for (int j = h; j < left; ++j) atomicAdd(out + j, v[j]);
  }
}

// Returns `value` through an empty asm statement, after which the compiler
// can no longer tell it is the value it had: what a loop computes from it is
// computed again each time instead of being held in registers across the loop.
__device__ inline int64_t Opaque(int64_t value) {
  asm volatile("" : "+l"(value));
  return value;
}

// Returns `value` times 1 (exact for every float, -0 and NaN included) by a
// multiply the compilers keep. A vector atomic reads four consecutive
// registers; given it the loop's own accumulators, ptxas held them in those
// quads through the main loop, so each accumulator sat in the register bank
// of the B value it is multiplied by (both in quad position j % 4). Given
// copies, it places them freely (sm_90 SASS of the 64 x 128 split-K loop:
// FFMAs with two same-bank register reads 348 -> 289 of 1024). Measured on an
// H100 (ms): 2048^3 0.3828 against 0.3872, 4096^3 2.870 against 2.904, 2000^3
// 0.4052 against 0.4199. For the unsplit store, see kUnpinnedStore.
__device__ inline float Unpinned(float value) {
  asm("mul.rn.f32 %0, %0, 0f3F800000;" : "+f"(value));
  return value;
}

// Where a thread's first copy of each kind lies in AlternateRowCopies' piece,
// kLength wide, that starts at `start`: row r of the piece starts on 8 bytes
// where r % 2 == even.
template <int kLength>
struct AlternateRowPlace {
  __device__ AlternateRowPlace(const float* start, int tid) {
    const int even =
        static_cast<int>(reinterpret_cast<uintptr_t>(start) / 4 % 2);
    pair_row = even + 2 * (tid / (kLength / 2));
    pair_col = tid % (kLength / 2) * 2;
    single_row = 1 - even + 2 * (tid / kLength);
    single_col = tid % kLength;
  }

  int pair_row, pair_col, single_row, single_col;
};

// The copies of a block's kRows x kLength piece of a row-major operand whose
// rows lie an odd number of elements apart, a piece whose every element lies
// inside the matrix: every other row starts on 8 bytes, and those rows go in
// 8-byte pairs, kLength / 2 lanes across each, the others element by element,
// kLength lanes across each; rows kPitch floats apart in shared memory. Every
// warp issues as many copies of each kind, so the instructions that copy
// depend on no warp's rows.
template <int kRows, int kLength, int kPitch, int kThreads>
struct AlternateRowCopies {
  // A thread's copies of each kind, and the rows between them.
  static constexpr int kPairs = kRows * kLength / 4 / kThreads;
  static constexpr int kSingles = kRows * kLength / 2 / kThreads;
  static constexpr int kPairGap = 4 * kThreads / kLength;
  static constexpr int kSingleGap = 2 * kThreads / kLength;
  static_assert(kThreads % kLength == 0 && kRows % kSingleGap == 0 &&
                    kRows % kPairGap == 0 && kPairs > 0,
                "whole rows a copy, as many copies a thread");

  // The piece starts at row `row` and column `col` of `matrix`, whose rows
  // lie `pitch` (odd) elements apart.
  __device__ AlternateRowCopies(const float* matrix, int64_t row, int64_t col,
                                int64_t pitch, int tid) {
    const AlternateRowPlace<kLength> place(matrix + row * pitch + col, tid);
    pair_row = place.pair_row;
    pair_col = place.pair_col;
    single_row = place.single_row;
    single_col = place.single_col;
    pair_src = matrix + (row + pair_row) * pitch + col + pair_col;
    single_src = matrix + (row + single_row) * pitch + col + single_col;
  }

  // Copies part `part` of `parts` of each kind into `stage` by copy(width,
  // dst, src), width an integral_constant of 2 or 1 elements.
  template <typename Copy>
  __device__ void Part(float* stage, int64_t pitch, int part, int parts,
                       Copy copy) const {
    // Part `part` of a kind's `count` copies, `gap` rows apart from row
    // `row`, column `col` of the stage and `from`.
    auto copies = [&](auto width, int count, int gap, int row, int col,
                      const float* from) {
#pragma unroll
      for (int j = part * count / parts; j < (part + 1) * count / parts; ++j) {
        copy(width, &stage[(row + j * gap) * kPitch + col],
             from + j * gap * pitch);
      }
    };
    copies(std::integral_constant<int, 2>(), kPairs, kPairGap, pair_row,
           pair_col, pair_src);
    copies(std::integral_constant<int, 1>(), kSingles, kSingleGap, single_row,
           single_col, single_src);
  }

  // Moves the piece on by `elements`.
  __device__ void Advance(int64_t elements) {
    pair_src += elements;
    single_src += elements;
  }

  const float* pair_src;
  const float* single_src;
  int pair_row, pair_col, single_row, single_col;
};

// The copies of AlternateRowCopies held as one pointer, the piece's start,
// and each kind's offset from it in 32 bits (the launcher takes them only
// where a piece spans under 2^31 elements): for the 128 x 128 tiles two to an
// SM, whose 128 registers two pointers an operand crowd (kAlternatePairs in
// SgemmWarpTiledKernel, where the measurements are).
template <int kRows, int kLength, int kPitch, int kThreads>
struct AlternateRowOffsets {
  using Copies = AlternateRowCopies<kRows, kLength, kPitch, kThreads>;

  __device__ AlternateRowOffsets(const float* matrix, int64_t row, int64_t col,
                                 int64_t pitch, int tid)
      : src(matrix + row * pitch + col) {
    const AlternateRowPlace<kLength> place(src, tid);
    const int rows = static_cast<int>(pitch);
    pair_dst = place.pair_row * kPitch + place.pair_col;
    single_dst = place.single_row * kPitch + place.single_col;
    pair_src = place.pair_row * rows + place.pair_col;
    single_src = place.single_row * rows + place.single_col;
  }

  template <typename Copy>
  __device__ void Part(float* stage, int64_t pitch, int part, int parts,
                       Copy copy) const {
    // Part `part` of a kind's `count` copies, `gap` rows apart from `dst`
    // and `from`.
    auto copies = [&](auto width, int count, int gap, int dst,
                      const float* from) {
#pragma unroll
      for (int j = part * count / parts; j < (part + 1) * count / parts; ++j) {
        copy(width, &stage[dst + j * gap * kPitch], from + j * gap * pitch);
      }
    };
    copies(std::integral_constant<int, 2>(), Copies::kPairs, Copies::kPairGap,
           pair_dst, src + pair_src);
    copies(std::integral_constant<int, 1>(), Copies::kSingles,
           Copies::kSingleGap, single_dst, src + single_src);
  }

  __device__ void Advance(int64_t elements) { src += elements; }

  const float* src;                                // the piece's start
  int pair_dst, single_dst, pair_src, single_src;  // offsets from stage, src
};

// Stands in for AlternateRowCopies in the kernels that do not take them.
struct NoRowCopies {
  __device__ NoRowCopies(const float*, int64_t, int64_t, int64_t, int) {}
};

// The copies of a kRows x kLength piece, rows kPitch floats apart in shared
// memory, where kAlternatePairs takes them: held as offsets (kOffsets) or as
// pointers; else none.
template <bool kAlternate, bool kOffsets, int kRows, int kLength, int kPitch,
          int kThreads>
using AlternateRowsOf = std::conditional_t<
    kAlternate,
    std::conditional_t<kOffsets,
                       AlternateRowOffsets<kRows, kLength, kPitch, kThreads>,
                       AlternateRowCopies<kRows, kLength, kPitch, kThreads>>,
    NoRowCopies>;

// The shapes whose split tails run beside the whole problems' last blocks,
// waiting for them only at their end (SgemmWarpTiledPlanned in kernels.cu,
// where the measurements are): K steps of 16 in four stages. Only their
// split-K kernels read wait_at_end; the others' code stays as it was.
template <typename S>
constexpr bool kOverlappedTail = S::kBlockK == 16 && S::kStages == 4;

// C_i = A_i * B_i for a strided batch (problem i's A at a + i * stride_a, and
// so on; a single product is a batch of one), row-major with rows lda, ldb
// and ldc elements apart, any sizes.
//
// The grid is one-dimensional: problem by problem, split by split, tile by
// tile. With kSplitK, split s covers K steps [s, s + 1) * k_per_split (a
// multiple of kBlockK) and adds its partial tile into C with atomics, so C
// must be zero beforehand; otherwise splits == 1 and C is stored. Tiles are
// visited in groups of kGroup tile rows, column by column inside a group, so
// that the blocks resident at one time share their A rows and B columns in L2.
//
// kPersistent (for a batch of `count` problems of one tile each, K unsplit):
// the grid holds fewer blocks than problems, and block x computes problems x,
// x + gridDim.x, and so on, copying the next problem's first steps while it
// computes the last steps of one and stores its tile, so the ring of stages
// does not drain between problems.
//
// kWidthA 4 (kVectorA): every row of every A starts on 16 bytes, so a run of
// 4 along K is one 16-byte copy of its elements inside the matrix (or the
// split), which zero-fills the rest and reads nothing past them. kWidthB 4
// (kVectorB): the same along N for B. kWidthA 2: the rows start on 8 bytes,
// and a pair is one 8-byte copy likewise. Otherwise (1) each element is
// copied on its own, the lanes of a warp taking consecutive pieces of a row
// (CopyPieceAsync). (Copies through
// registers instead, 16-byte loads realigned by selects and stored after the
// step's multiply-adds, measured slower on an H100: 1001^3 x 2 0.1491 and,
// a unit a lane, 0.2056 ms against 0.1167; and with no loaded register
// reused before the store, so that the loop no longer waited for the loads,
// 0.1255 against 0.1164; docs/benchmarks.md, sessions 22 and 23.)
// A run of 4 of C is stored (or added) as one 16-byte access where it is
// whole and starts on 16 bytes, else element by element. Out-of-range
// elements are staged as zero; A's and B's K-edges coincide, so a padding
// zero only meets another padding zero or an output that is never stored.
//
// kBulk (sm_90 and later; with kVectorA and kVectorB): one thread copies each
// step as two bulk tensor copies from tables.a (K x M x count, innermost
// first) and tables.b (N x K x count), which zero-fill past the matrices'
// edges, and the stage's barrier tells the block when they have landed. The
// copies hold no registers, and read rows whatever lines they start on.
//
// kWholeSteps: every step but one is whole and copied unchecked. The one
// other step, the remainder where the block's part of K is not a whole number
// of steps, goes first, copied with checks. Without the checks the main loop
// issues fewer instructions (H200, 4096^3 unsplit: 89% of cuBLAS against 86%).
// With kVectorA and kVectorB, a run of A past row m copies row m - 1 instead,
// and a run of B past column n the matrix's first columns: their products
// land only in outputs that are never stored. Otherwise (kShiftEdges; the
// launcher sees that m >= kBlockM and n >= kBlockN) the last tile row and
// column move inward to end at the matrix's edges, so every piece lies inside
// it, and store only the outputs that the tiles before them do not. Their
// copies read what zero-filled copies would have skipped, but the main loop
// issues 13% fewer instructions (sm_90 SASS, 64 x 128 tiles: 1173 against
// 1351 a step); measured on an H100 against checked steps (ms,
// docs/benchmarks.md, session 17): 503^3 x 100 0.6355 against 0.6892 (504^3
// x 100 on 16 bytes: 0.6035), 257^3 x 236 0.3559 against 0.3847, 777^3 x 10
// 0.3027 against 0.3332, 1023^3 x 3 0.1533 against 0.1704, 777^3 0.0412
// against 0.0472; where the moved tiles are many and the rounds few, it lost
// (257^3 x 44 0.0878 against 0.0828, 150x151x150 x 100 0.0570 against
// 0.0526).
//
// kGrouped: problems of different shapes, packed (rows k, n and n elements
// apart), from tables.entries, K unsplit; block x computes a tile of the
// problem whose blocks include x, found by binary search. The parameters m to
// k_per_split are unused (each problem's come from its entry); splits and
// count are 1. The launcher takes copies that every problem's rows allow.
//
// kRealignC (kSplitK in unchecked steps, where C's rows don't start on 16
// bytes): every tile adds its block of C realigned to C's rows
// (add_realigned), not only the tiles moved by other than a multiple of 4.
// Instances of their own: realigning in the kernels that also serve C's
// 16-byte rows moved ptxas's register layout of their main loops, and those
// ran 2-6% slower (docs/benchmarks.md, session 33).
//
// kAlternatePairs (the 128 x 128 tiles one to an SM, A element by element, or
// two to an SM, both operands element by element; in unchecked steps): every
// operand that goes element by element lies in rows an odd number of elements
// apart, and its rows that start on 8 bytes go in pairs (AlternateRowCopies,
// AlternateRowOffsets; measured below).
template <typename S, int kWidthA, int kWidthB, bool kSplitK, int kGroup,
          bool kWholeSteps, bool kPersistent, bool kBulk = false,
          bool kGrouped = false, bool kRealignC = false,
          bool kAlternatePairs = false>
__global__ void __launch_bounds__(S::kThreads, S::kMinBlocksPerSm)
    SgemmWarpTiledKernel(
        int64_t m, int64_t n, int64_t k, const float* __restrict__ a,
        int64_t lda, int64_t stride_a, const float* __restrict__ b, int64_t ldb,
        int64_t stride_b, float* __restrict__ c, int64_t ldc, int64_t stride_c,
        int64_t tiles_m, int64_t tiles_n, int64_t splits, int64_t k_per_split,
        int64_t count,
        const __grid_constant__ KernelTables<kBulk, kGrouped> tables,
        bool wait_at_end) {
  static_assert(!(kPersistent && kSplitK), "a persistent block's K is whole");
  static_assert(!kGrouped || !(kSplitK || kPersistent || kBulk),
                "a grouped block takes its tile's whole K alone");
  static_assert(!kRealignC || (kSplitK && kWholeSteps && !kPersistent),
                "realigned adds of split K, in unchecked steps");
  static_assert(
      !kAlternatePairs ||
          (kWidthA == 1 && kWholeSteps && !kSplitK && !kPersistent &&
           S::kBlockM == 128 && S::kBlockN == 128 &&
           (S::kMinBlocksPerSm == 1 ||
            (S::kMinBlocksPerSm == 2 && kWidthB == 1))),
      "alternate rows of A in pairs in the 128 x 128 tiles in unchecked "
      "steps, one to an SM or, B element by element too, two");
  constexpr bool kVectorA = kWidthA == 4;
  constexpr bool kVectorB = kWidthB == 4;
  static_assert(
      !kBulk || (kVectorA && kVectorB && !kWholeSteps && !kPersistent &&
                 S::kFragK == 4 && S::kBulkable),
      "bulk copies read whole 16-byte units of rows that do not move");
  // With wait_at_end (a split tail, SgemmWarpTiledPlanned), the grid before
  // touches nothing this one does: it waits for it only before it ends, and
  // lets the next grid launch only then (grid_dependency.cuh).
  const bool late = kSplitK && kOverlappedTail<S> && wait_at_end;
  if (!late) {
    WaitForPriorGrid();
    AllowDependentLaunch();
  }
  extern __shared__ __align__(1024) float4 shared_words[];
  float* const shared = reinterpret_cast<float*>(shared_words);

  int64_t block = blockIdx.x;  // with kGrouped, among its problem's blocks
  if constexpr (kGrouped) {
    const GroupedGemmEntry& entry =
        GroupedEntryOf(tables.entries, tables.count, block);
    const GemmProblem& p = entry.problem;
    m = p.m, n = p.n, k = p.k;
    a = p.a, b = p.b, c = p.c;
    lda = k, ldb = n, ldc = n;
    tiles_m = (m + S::kBlockM - 1) / S::kBlockM;
    tiles_n = (n + S::kBlockN - 1) / S::kBlockN;
    k_per_split = k;
    block -= entry.first_tile;
  }
  const int64_t tiles = tiles_m * tiles_n;
  const auto problem_of = [tiles, splits](int64_t block) {
    return block / (tiles * splits);
  };
  const int64_t problem = problem_of(block);
  const int64_t split = block / tiles % splits;
  float* const c_first = c;  // the first problem's
  a += problem * stride_a;
  b += problem * stride_b;
  c += problem * stride_c;

  const int64_t tile = block % tiles;
  const int64_t tiles_per_group = int64_t{kGroup} * tiles_n;
  const int64_t first_row = tile / tiles_per_group * kGroup;
  const int64_t rows_in_group =
      tiles_m - first_row < kGroup ? tiles_m - first_row : kGroup;
  const int64_t in_group = tile % tiles_per_group;
  const int64_t tile_row = (first_row + in_group % rows_in_group) * S::kBlockM;
  const int64_t tile_col = in_group / rows_in_group * S::kBlockN;
  constexpr bool kShiftEdges = kWholeSteps && !(kVectorA && kVectorB);
  static_assert(!(kShiftEdges && kPersistent), "a persistent tile stays put");
  const int64_t block_row =
      kShiftEdges && tile_row > m - S::kBlockM ? m - S::kBlockM : tile_row;
  const int64_t block_col =
      kShiftEdges && tile_col > n - S::kBlockN ? n - S::kBlockN : tile_col;
  // The rows and columns the tile moved by, whose outputs the tiles before it
  // store.
  const int shift_rows = static_cast<int>(tile_row - block_row);
  const int shift_cols = static_cast<int>(tile_col - block_col);

  // K positions fit in an int (the launcher checks).
  const int k_begin = static_cast<int>(split * k_per_split);
  const int k_end =
      static_cast<int>(k - k_begin < k_per_split ? k : k_begin + k_per_split);
  const int steps = (k_end - k_begin + S::kBlockK - 1) / S::kBlockK;

  // This thread's copies: pieces of A at rows a_row + a_copy_row(r) (r <
  // kCopiesA) and columns a_col + c * kSpanA (c < kColsA) of the step, each
  // kWidthA elements (a 16-byte run, a pair or one element); B's likewise.
  // Element by element, 32 lanes cross a row of B and 256 / kBlockK a row of
  // A's step, so that a thread holds few row offsets (16 lanes across A's
  // 32-wide steps of 128 x 128 tiles once spilled); in those tiles a warp now
  // crosses each row of A's step (kRowPerWarpA), without spills: a copy reads
  // 128 bytes of one row and writes 32 consecutive floats, with no bank
  // conflicts. Measured on an H200 against 8 lanes a row (ms,
  // docs/benchmarks.md), one to an SM (session 41): 1001^3 x 2 0.1015 against
  // 0.1063, 1001x4001x1001 x 2 0.3635 against 0.3849, 901^3 x 2 0.0928 against
  // 0.0978, 1000x1001x1000 x 2 0.0974 against 0.0990; two to an SM (session
  // 42): 1001^3 x 4 0.1932 against 0.1970, x 8 0.3786 against 0.3853,
  // 1001x1021x1003 x 4 0.1967 against 0.2024. With steps of 8, kBlockK lanes
  // cross A's row, and where the block's warps don't divide the step's rows of
  // B (three warps of 96 x 96 tiles), a row of B takes the whole block.
  // Measured on an H100 against a run of 4 per lane copied element by element,
  // which read each sector four times over and wrote shared memory with bank
  // conflicts (ms, docs/benchmarks.md, session 16): 503^3 x 100 0.6816 against
  // 0.7402 (504^3 x 100, 16-byte: 0.6003), 333^3 x 108 0.2815 against 0.3045,
  // 257^3 x 44 0.0832 against 0.1007, 777^3 x 10 0.3333 against 0.3599, 1023^3
  // 0.0725 against 0.0764. By pairs, as many lanes cross a row of A (or half
  // the step, where that is fewer) and of B (or the whole row) as element by
  // element. Measured on an H100 against 4 lanes across A's row, in two calls
  // (ms, docs/benchmarks.md, session 30): 510^3 x 30 0.2040 against 0.2121,
  // 502^3 x 100 0.6096 against 0.6226, 1002^3 x 2 0.1057 against 0.1079. The
  // sources advance one step at a time.
  const int tid = threadIdx.x;
  constexpr bool kRowPerWarpA = kWidthA == 1 && S::kBlockK == 32 &&
                                S::kBlockM == 128 && S::kBlockN == 128;
  constexpr int kLanesA = kRowPerWarpA      ? 32
                          : S::kBlockK < 16 ? S::kBlockK
                                            : 256 / S::kBlockK;
  constexpr int kSpanA = kVectorA || kWidthA * kLanesA > S::kBlockK
                             ? S::kBlockK
                             : kWidthA * kLanesA;
  constexpr int kSpanB = kVectorB || S::kBlockK % (S::kThreads / 32) != 0 ||
                                 32 * kWidthB > S::kBlockN
                             ? S::kBlockN
                             : 32 * kWidthB;
  constexpr int kRowsA = S::kThreads * kWidthA / kSpanA;
  constexpr int kRowsB = S::kThreads * kWidthB / kSpanB;
  constexpr int kCopiesA = S::kBlockM / kRowsA;
  constexpr int kCopiesB = S::kBlockK / kRowsB;
  constexpr int kColsA = S::kBlockK / kSpanA;
  constexpr int kColsB = S::kBlockN / kSpanB;
  static_assert(S::kThreads % (kSpanA / kWidthA) == 0 &&
                    S::kThreads % (kSpanB / kWidthB) == 0 &&
                    S::kBlockM % kRowsA == 0 && S::kBlockK % kRowsB == 0 &&
                    S::kBlockK % kSpanA == 0 && S::kBlockN % kSpanB == 0,
                "every thread copies whole columns of pieces");
  // Element by element, the rows of A that one warp's copy writes lie
  // kRowGapA apart, in disjoint banks (else next to each other, where rows
  // kPitchA floats apart overlap some banks: two writes a bank). Measured on
  // an H200 against rows next to each other (ms, docs/benchmarks.md): the
  // block's warps dividing into the gap (session 42), 511^3 x 6 0.0497 against
  // 0.0503, 700x701x702 x 3 0.0630 against 0.0640, SGEMM 1001^3 0.0614 against
  // 0.0624; the gap over several copies (session 43: 64 x 64 tiles of two
  // warps, gap 4, and 96 x 96 tiles of three, gap 6), 300x301x301 x 30 0.0622
  // against 0.0645, elsewhere within 1% (89x1x67 x 600, one step of K, 0.0198
  // against 0.0196). One warp's 32 x 32 tiles (gap 2) measured mixed, so they
  // keep rows next to each other: 280x281x280 x 40 0.0678 against 0.0691,
  // 150x151x150 x 250 0.0720 against 0.0708. Pairs too in the 128 x 128 tiles
  // two to an SM (gap 4, session 43): 1002^3 x 4 0.1849 against 0.1876, x 8
  // 0.3642 against 0.3686, 998^3 x 4 0.1843 against 0.1869; pairs and 16-byte
  // runs in all tiles measured mixed (session 42): 1002^3 x 2 0.1007 against
  // 0.1000. At a gap of 1, a_row is written tid / kLanesRowA, as before: with
  // the general form (the same rows) the SASS of 223 other kernels moved, and
  // 1002^3 x 2 with it to 0.1011.
  constexpr int kLanesRowA = kSpanA / kWidthA;
  constexpr int kWarpRowsA = 32 / kLanesRowA;
  constexpr int kWarps = S::kThreads / 32;
  constexpr bool kGapPairsA = kWidthA == 2 && S::kBlockM == 128 &&
                              S::kBlockN == 128 && S::kMinBlocksPerSm == 2;
  constexpr int kRowGapA =
      kWidthA == 1 || kGapPairsA
          ? DisjointRowGap(S::kPitchA, kSpanA, kWarps, kCopiesA)
          : 1;
  // Warp w's copy r (the block's copy r * kWarps + w in turn) writes rows
  // kRowGapA apart from a_row + a_copy_row(r).
  const int a_row = kRowGapA == 1
                        ? tid / kLanesRowA
                        : tid / 32 / kRowGapA * kWarpRowsA * kRowGapA +
                              tid / 32 % kRowGapA +
                              tid % 32 / kLanesRowA * kRowGapA;
  auto a_copy_row = [](int r) {
    return r * kWarps / kRowGapA * kWarpRowsA * kRowGapA +
           r * kWarps % kRowGapA;
  };
  const int a_col = tid % kLanesRowA * kWidthA;
  const int b_row = tid / (kSpanB / kWidthB);
  const int b_col = tid % (kSpanB / kWidthB) * kWidthB;
  const float* a_src = a + (block_row + a_row) * lda + k_begin + a_col;
  const float* b_src = b + (k_begin + b_row) * ldb + block_col + b_col;
  int k_step = k_begin;  // the first K index of the next step copied
  // The length of a piece kWidth wide with `left` elements ahead.
  auto piece_length = [](auto left, int width) {
    return left < 0 ? 0 : left > width ? width : static_cast<int>(left);
  };
  int b_length[kColsB];
#pragma unroll
  for (int c = 0; c < kColsB; ++c) {
    b_length[c] = piece_length(n - block_col - b_col - c * kSpanB, kWidthB);
  }

  // kReadAhead: each K index's fragments are read into a second set of
  // registers before the FMAs of the index before it, so that those FMAs do
  // not wait for the reads; in the 128 x 128 tiles one block to an SM, whose
  // lanes have registers to spare (up to 255), and in the bulk-copy kernel of
  // those two to an SM (128 registers), which holds no copy addresses.
  // Measured on an H100 against reading them just before (ms,
  // docs/benchmarks.md, session 35): one to an SM, 1024^3 x 2 0.0963 against
  // 0.0976, 1000^3 x 2 0.0986 against 0.0995, 2048x1024x1024 0.0964 against
  // 0.0974, 512^3 x 8 0.0528 against 0.0535; two, 2048^3 0.3402 against
  // 0.3503, 4096x1024x4096 0.6727 against 0.6952, 512^3 x 64 0.3446 against
  // 0.3560, 1024^3 x 4 0.1744 against 0.1796. Two to an SM with cp.async
  // copies, a second set spilled 12-76 bytes in two to six of their 17
  // kernels (two for B's alone); in every shape, the 64-wide tiles lost
  // (4096^3 2.750 against 2.662, 8192^3 21.27 against 20.56).
  constexpr bool kReadAhead = S::kBlockM == 128 && S::kBlockN == 128 &&
                              (S::kMinBlocksPerSm == 1 || kBulk);
  // Two 256-thread blocks per SM (or more threads): 128 registers a thread.
  constexpr bool k128Registers = S::kThreads * S::kMinBlocksPerSm >= 512;
  // Where a lane's accumulators leave few registers (8 x 12 of them at 168,
  // or 8 x 8 at 128 with A in pairs), the copies work out which rows of A
  // they read at each step, from an Opaque count of the rows left, rather
  // than hold them across the loop (held, they spilled up to 120 bytes, and
  // 52 in the 128 x 128 tiles' checked steps).
  constexpr bool kFewRegisters =
      S::kLaneN > 8 || (kWidthA == 2 && k128Registers);
  auto rows_left = [&] { return Opaque(m - block_row); };

  // kWholeSteps: the pieces of A's copy row r read from a_whole(r) (with
  // 16-byte copies of both, the row clamped), and B's from b_whole (the column
  // clamped likewise).
  int64_t a_offset[kCopiesA];
#pragma unroll
  for (int r = 0; r < kCopiesA; ++r) {
    const int64_t row = block_row + a_row + a_copy_row(r);
    a_offset[r] = ((row < m ? row : m - 1) - block_row - a_row) * lda;
  }
  auto a_whole = [&](int r) {
    if (kFewRegisters && !kShiftEdges) {
      const int64_t last = rows_left() - 1 - a_row;
      return a_src + (a_copy_row(r) < last ? a_copy_row(r) : last) * lda;
    }
    return a_src + (kShiftEdges ? a_copy_row(r) * lda : a_offset[r]);
  };
  const float* b_whole =
      b_src - (block_col + b_col < n || kShiftEdges ? 0 : block_col + b_col);

  // kInterleaved (the 128 x 128 tiles one to an SM, or two with A not element
  // by element or every other row in pairs (kBigPairs), the four-warp 64 x 64
  // tiles with K steps of 16, and the two-warp ones on 16 bytes, copied by
  // cp.async in unchecked steps): a step's copies go out in kCopyParts parts,
  // one every kPartGap K indices of the step computed meanwhile from K index
  // kFirstPart, rather than all before it; where `live` is false (the ring's
  // last steps) they copy nothing. All at once, they filled the copy queue of
  // the SM's eight warps: Nsight Compute on an H200 at 1001^3 x 2
  // (docs/benchmarks.md, session 38), stalls per issued instruction on long
  // scoreboard (address registers rewritten while a queued copy had yet to
  // read them) 0.25 against 0.04 for the bulk copies at 1000^3 x 2, on LG
  // throttle 0.11 against 0, on MIO throttle 0.09 against 0.02.
  // Measured on an H200 against all at once (ms): 1002^3 x 2 0.0996 against
  // 0.1054, 1001^3 x 2 0.1063 against 0.1149, 1001x4001x1001 x 2 0.3847
  // against 0.4186, 900x3700x901 x 2 0.3298 against 0.3543, 380x300x250 x 20
  // 0.0354 against 0.0379; parts 2 K indices apart gained less (0.0994,
  // 0.1084, 0.3942, 0.3344, 0.0358), 8 apart about as much but at 900x3700x901
  // x 2 (0.3381). In the 128 x 128 tiles two to an SM, from K index 0, they
  // lost 0.5% (1001^3 x 4 0.2065 against 0.2054).
  // The four-warp tiles (four blocks to an SM) copied all at once too: Nsight
  // Compute's samples at 511^3 x 6 (session 46) put 4.4% of their warps'
  // stalls on long scoreboard, against cuBLAS's 0.7%, on the shared-memory
  // reads and adds that reuse the copies' address registers. Their parts go
  // out at K indices 3, 7, 11 and 15, away from the reads of A's fragments
  // (at 0, 4, 8 and 12).
  // Measured on an H200 against all at once (ms, docs/benchmarks.md, session
  // 46): 511^3 x 6 0.0476 against 0.0496, 511x512x511 x 6 0.0470 against
  // 0.0501, 450x451x450 x 4 0.0295 against 0.0330, x 5 0.0431 against 0.0439,
  // 318^3 x 8 0.0217 against 0.0239, 192^3 x 100 0.0396 against 0.0424
  // (318^3 x 16 0.0393 against 0.0391). From K index 0 they lost (511^3 x 6
  // 0.0513), from 2 or 1 gained less (0.0478, 0.0483; 318^3 x 16 0.0396,
  // 0.0400), and so did two parts at 2 and 10 (0.0488), eight parts from 1
  // lost (0.0500). In the 128 x 128 tiles one to an SM, parts from K index 1
  // or 2 measured mixed (1001^3 x 2 0.1011 and 0.1054 against 0.1014, 1000 x
  // 1002 x 1000 x 2 0.0955 and 0.0964 against 0.0946).
  // The 128 x 128 tiles two to an SM (K steps of 32 in two stages) take parts
  // from K index 3 too where A does not go element by element. Measured on an
  // H200 against all at once (ms, session 46): 1002^3 x 4 0.1791 against
  // 0.1850, x 8 0.3507 against 0.3647, 998^3 x 4 0.1785 against 0.1844,
  // 1002x2002x1002 x 4 0.3463 against 0.3579, 510^3 x 30 0.1872 against
  // 0.1949, 510x512x510 x 30 0.1831 against 0.1944 (on 16 bytes, 512^3 x 64
  // 0.3439 against 0.3439); with B element by element (session 47),
  // 1001x1024x1001 x 4 0.1826 against 0.1927, 999x1000x999 x 4 0.1791
  // against 0.1889, 511x512x511 x 30 0.1940 against 0.2022, 1002x1002x1001
  // x 4 0.1848 against 0.1898. With A element by element their loops spilled
  // 20-252 bytes (128 registers) and lost: 511^3 x 30 0.2082 against 0.2039,
  // 1001^3 x 4 0.1987 against 0.1930, 1001x1021x1003 x 4 0.2024 against
  // 0.1958; parts from K index 2, 8 apart, lost more. A in two parts and B
  // in two or four spilled nothing but lost too (511^3 x 30 0.2083 and 0.2065
  // against 0.2037, 1002x1001x1002 x 4 0.1919 and 0.1908 against 0.1809).
  // Held as one pointer and 32-bit offsets (AlternateRowOffsets, with both
  // operands element by element in rows an odd number apart), the copies
  // take those parts without spills (128 registers; 14.1% of the FFMAs on
  // two same-bank registers against 9.8%) and gain (session 55, three
  // rounds): 511^3 x 30 0.1957 against 0.1996, 513^3 x 30 0.2154 against
  // 0.2204, 255x257x253 x 121 0.1084 against 0.1140, 1001^3 x 8 0.3605
  // against 0.3659, x 4 0.1850 against 0.1865, 999^3 x 4 0.1841 against
  // 0.1858, 1023^3 x 4 0.1882 against 0.1894, 1001x2001x1001 x 4 0.3546
  // against 0.3559; 511^3 x 60 even (0.3812).
  // The two-warp 64 x 64 tiles (six blocks to an SM, K steps of 16 in four
  // stages) take them from K index 3 too. Measured on an H200 against all at
  // once (ms, sessions 46 and 47): 320^3 x 122 0.1794 against 0.1874, 448^3
  // x 44 0.1832 against 0.1913, 576^3 x 50 0.4080 against 0.4283, 800^3 x 8
  // 0.2135 against 0.2245, 1088^3 x 8 0.4247 against 0.4477, 192^3 x 500
  // 0.1698 against 0.1742; element by element, 321^3 x 122 0.3079 against
  // 0.3186, 449^3 x 44 0.2803 against 0.2902, 320x321x320 x 122 0.2070
  // against 0.2124, 321x320x321 x 122 0.2788 against 0.2821. The 64-wide tiles
  // (three blocks to an SM) interleaved so lost: 768^3 x 9 0.2140 against
  // 0.1818, 640^3 x 15 0.1807 against 0.1749, 256^3 x 238 0.1897 against
  // 0.1851; with an operand element by element they measured mixed (session
  // 47: 801^3 x 8 0.2446 against 0.2393, 641^3 x 15 0.2279 against 0.2222,
  // 801x800x801 x 8 0.2285 against 0.2320). In their K steps of 32 (two
  // stages, LongSteps) they gain there: 577^3 x 50 0.5796 against 0.6117,
  // 576x577x576 x 50 0.4939 against 0.5160, 577x576x577 x 50 0.5468 against
  // 0.5534, 578x577x578 x 50 0.5666 against 0.5964, 577x578x577 x 50 0.5763
  // against 0.5981.
  constexpr bool kBig = S::kBlockM == 128 && S::kBlockN == 128;
  constexpr bool k64Steps16 =
      S::kBlockM == 64 && S::kBlockN == 64 && S::kBlockK == 16;
  constexpr bool kBigAlone = kBig && S::kMinBlocksPerSm == 1;
  // Two to an SM, A not element by element, or every other row in pairs.
  constexpr bool kBigPairs =
      kBig && S::kMinBlocksPerSm == 2 && (kWidthA != 1 || kAlternatePairs);
  constexpr bool kQuadSteps16 = k64Steps16 && S::kThreads == 128;
  constexpr bool kTwoWarpSteps16 =
      k64Steps16 && S::kThreads == 64 && S::kStages == 4;
  constexpr bool kWideSteps32 = S::kBlockM * S::kBlockN == 64 * 128 &&
                                S::kBlockK == 32 &&
                                (kWidthA == 1 || kWidthB == 1);
  constexpr bool kInterleaved = !kBulk && !kPersistent && kWholeSteps &&
                                (kBigAlone || kBigPairs || kQuadSteps16 ||
                                 kTwoWarpSteps16 || kWideSteps32);
  constexpr int kCopyParts = 4;
  constexpr int kPartGap = 4;
  constexpr int kFirstPart = kBigAlone ? 0 : 3;
  static_assert(
      !kInterleaved || kFirstPart + (kCopyParts - 1) * kPartGap < S::kBlockK,
      "every part of a step's copies goes out within the step");
  // kAlignedPairs (the 128 x 128 tiles two to an SM, both operands element by
  // element, in unchecked steps): with an odd pitch, every other row starts on
  // 8 bytes, and a warp's rows of A (a_copy_row(r) apart, multiples of 8) all
  // start as its first does, and so do its rows of B. A warp whose rows do
  // copies them in 8-byte pairs: of A, two rows a copy, 16 lanes across each;
  // of B, half a row a copy. A quarter fewer copies in all, as many a
  // multiply-add as cuBLAS's kernel issues there (Nsight Compute on an H200 at
  // 511^3 x 30: with element copies the loop two to an SM issues on 77.7% of
  // cycles, with bulk copies at 512^3 x 30 on 85.7%, cuBLAS's on 86.9%).
  // Measured on an H200 against element by element (ms, docs/benchmarks.md,
  // session 53), two to an SM: 1001^3 x 4 0.1884 against 0.1928, x 8 0.3698
  // against 0.3777, 1023^3 x 4 0.1914 against 0.1954, 1001x2001x1001 x 4 0.3593
  // against 0.3695, 999^3 x 4 0.1878 against 0.1922, 511^3 x 30 0.2014 against
  // 0.2036, 513^3 x 30 0.2220 against 0.2241; 511^3 x 60 even (0.3811 against
  // 0.3813). One to an SM, copying in four parts a step (kInterleaved), they
  // lost 20-28%: 1001^3 x 2 0.1238 against 0.1012, 901^3 x 2 0.1130 against
  // 0.0927, 1001x4001x1001 x 2 0.4624 against 0.3638. Where both pitches
  // are odd, kAlternatePairs takes these tiles instead (below).
  constexpr bool kAlignedPairs = kRowPerWarpA && kWidthB == 1 && kShiftEdges &&
                                 S::kMinBlocksPerSm == 2 && !kAlternatePairs;
  const bool a_pairs =
      kAlignedPairs && reinterpret_cast<uintptr_t>(a_src - a_col) % 8 == 0;
  const bool b_pairs =
      kAlignedPairs && reinterpret_cast<uintptr_t>(b_whole - b_col) % 8 == 0;
  // kAlternatePairs (the 128 x 128 tiles in unchecked steps, one to an SM with
  // A element by element or two to an SM with both so; the launcher sees that
  // each operand that goes element by element lies in rows an odd number of
  // elements apart): those operands copy their rows that start on 8 bytes in
  // pairs, the others element by element (AlternateRowCopies), with no branch
  // in the loop: a quarter fewer copies of A, and of B where it goes element by
  // element. Measured on an H200 against element by element (ms,
  // docs/benchmarks.md, session 54): both element by element, 1001^3 x 2 0.1001
  // against 0.1014, 901^3 x 2 0.0915 against 0.0929, 1001x4001x1001 x 2 0.3596
  // against 0.3635, 1023^3 x 2 0.1001 against 0.1015, 999^3 x 2 0.1001 against
  // 0.1016, 1001x1021x1003 x 2 0.1002 against 0.1016; B in pairs,
  // 1001x1001x1002 x 2 0.0985 against 0.0991; B on 16 bytes, 1001x1001x1000 x 2
  // 0.1011 against 0.1024. Written otherwise (the copies' shared addresses a
  // pointer plus an offset rather than an index), ptxas laid out the loop with
  // loads read sooner (at least 13 instructions on, 71 at the median, against
  // 15 and 79: tools/sass_loop.py --reads), and both element by element lost
  // 2.5% (1001^3 x 2 0.1040). B's alone (A in pairs) lost: 1002x1002x1001 x 2
  // 0.1047 against 0.1017. So did the other kernels that interleave their
  // copies, or gained under 1%: 450x451x450 x 5 0.0433 against 0.0428,
  // 511x512x511 x 6 0.0462 against 0.0457, 529^3 x 40 0.3626 against 0.3637.
  // Two to an SM (128 registers), the copies held as two pointers an operand
  // ran 7% behind kAlignedPairs, ptxas laying out the loop with 48% of its
  // FFMAs reading two registers of one bank against 11% (1001^3 x 4 0.2024
  // against 0.1885); held as one pointer and two 32-bit offsets
  // (AlternateRowOffsets), 9.8% (the loop's loads read at least 9 instructions
  // on, 36 at the median), and both element by element gained 0.4-1.0% over
  // kAlignedPairs, copying all at once (session 55, three rounds; in four parts
  // they gained more, at kInterleaved): 511^3 x 30 0.1994 against 0.2013,
  // 1001^3 x 4 0.1866 against 0.1885, x 8 0.3665 against 0.3701, 1023^3 x 4
  // 0.1897 against 0.1915, 1001x2001x1001 x 4 0.3564 against 0.3596, 999^3 x 4
  // 0.1862 against 0.1879, 513^3 x 30 0.2207 against 0.2223, 255x257x253 x 121
  // 0.1143 against 0.1151; 511^3 x 60 even (0.3815 against 0.3814). With A's
  // alone so, B in pairs or on 16 bytes, they lost (session 54: 1001x1001x1002
  // x 4 0.1837 against 0.1808, 1001x1001x1000 x 4 0.1834 against 0.1821), and
  // one to an SM so lost 2.8% (1001^3 x 2 0.1032 against 0.1003).
  constexpr bool kAlternateB = kAlternatePairs && kWidthB == 1;
  constexpr bool kAlternateOffsets = S::kMinBlocksPerSm == 2;
  AlternateRowsOf<kAlternatePairs, kAlternateOffsets, S::kBlockM, S::kBlockK,
                  S::kPitchA, S::kThreads>
      alternate_a(a, block_row, k_begin, lda, tid);
  AlternateRowsOf<kAlternateB, kAlternateOffsets, S::kBlockK, S::kBlockN,
                  S::kBlockN, S::kThreads>
      alternate_b(b, k_begin, block_col, ldb, tid);
  // Copies part `part` of `parts` of the step (its copy rows of A and B in
  // that share) into `stage`, where `live`; the last part moves on a step.
  auto copy_whole_part = [&](int stage, int part, int parts, bool live) {
    float* a_stage = shared + stage * S::kStageFloats;
    float* b_stage = a_stage + S::kFloatsA;
    auto copy_piece = [&](auto width, float* dst, const float* matrix,
                          const float* src) {
      constexpr int kWidth = decltype(width)::value;
      if constexpr (kInterleaved) {
        CopyPieceAsyncIf<kWidth>(dst, src, live);
      } else {
        CopyPieceAsync<kWidth>(dst, matrix, src, kWidth);
      }
    };
    using WidthA = std::integral_constant<int, kWidthA>;
    using WidthB = std::integral_constant<int, kWidthB>;
    using Pair = std::integral_constant<int, 2>;
    static_assert(
        !kAlignedPairs || (kSpanA == 32 && kSpanB == 32 && kRowGapA == 1 &&
                           kWarps % 2 == 0 && kCopiesA % (2 * kCopyParts) == 0),
        "a warp's lanes cross whole rows, an even count of rows "
        "apart, and a part takes pairs of rows of A");
    if constexpr (kAlternatePairs) {
      alternate_a.Part(a_stage, lda, part, parts,
                       [&](auto width, float* dst, const float* src) {
                         copy_piece(width, dst, a, src);
                       });
    } else if (a_pairs) {
      const int half = tid % 32 / 16, k = tid % 16 * 2;
      const float* src = a_src - a_col + k;  // the warp's first row, at k
#pragma unroll
      for (int r = part * kCopiesA / parts; r < (part + 1) * kCopiesA / parts;
           r += 2) {
        const int row = a_copy_row(r + half);
        copy_piece(Pair(), &a_stage[(a_row + row) * S::kPitchA + k], a,
                   src + row * lda);
      }
    } else {
#pragma unroll
      for (int r = part * kCopiesA / parts; r < (part + 1) * kCopiesA / parts;
           ++r) {
#pragma unroll
        for (int c = 0; c < kColsA; ++c) {
          copy_piece(WidthA(),
                     &a_stage[(a_row + a_copy_row(r)) * S::kPitchA + a_col +
                              c * kSpanA],
                     a, a_whole(r) + c * kSpanA);
        }
      }
    }
    if constexpr (kAlternateB) {
      alternate_b.Part(b_stage, ldb, part, parts,
                       [&](auto width, float* dst, const float* src) {
                         copy_piece(width, dst, b, src);
                       });
    } else if (b_pairs) {
      const float* src = b_whole + b_col;  // the row's start, plus 2 * b_col
#pragma unroll
      for (int r = part * kCopiesB / parts; r < (part + 1) * kCopiesB / parts;
           ++r) {
#pragma unroll
        for (int c = 0; c < S::kBlockN; c += 64) {
          copy_piece(
              Pair(),
              &b_stage[(b_row + r * kRowsB) * S::kBlockN + 2 * b_col + c], b,
              src + r * kRowsB * ldb + c);
        }
      }
    } else {
#pragma unroll
      for (int r = part * kCopiesB / parts; r < (part + 1) * kCopiesB / parts;
           ++r) {
#pragma unroll
        for (int c = 0; c < kColsB; ++c) {
          copy_piece(
              WidthB(),
              &b_stage[(b_row + r * kRowsB) * S::kBlockN + b_col + c * kSpanB],
              b, b_whole + r * kRowsB * ldb + c * kSpanB);
        }
      }
    }
    if (part + 1 == parts) {
      a_src += S::kBlockK;
      b_whole += S::kBlockK * ldb;
      if constexpr (kAlternatePairs) alternate_a.Advance(S::kBlockK);
      if constexpr (kAlternateB) alternate_b.Advance(S::kBlockK * ldb);
    }
  };
  auto copy_whole = [&](int stage) { copy_whole_part(stage, 0, 1, true); };
  auto copy_checked = [&](int stage) {
    float* a_stage = shared + stage * S::kStageFloats;
    float* b_stage = a_stage + S::kFloatsA;
    int a_length[kColsA];
#pragma unroll
    for (int c = 0; c < kColsA; ++c) {
      a_length[c] = piece_length(k_end - k_step - a_col - c * kSpanA, kWidthA);
    }
#pragma unroll
    for (int r = 0; r < kCopiesA; ++r) {
      const int row = a_row + a_copy_row(r);
#pragma unroll
      for (int c = 0; c < kColsA; ++c) {
        CopyPieceAsync<kWidthA>(
            &a_stage[row * S::kPitchA + a_col + c * kSpanA], a,
            a_src + a_copy_row(r) * lda + c * kSpanA,
            (kFewRegisters ? row < rows_left() : block_row + row < m)
                ? a_length[c]
                : 0);
      }
    }
#pragma unroll
    for (int r = 0; r < kCopiesB; ++r) {
      const int row = b_row + r * kRowsB;
#pragma unroll
      for (int c = 0; c < kColsB; ++c) {
        CopyPieceAsync<kWidthB>(&b_stage[row * S::kBlockN + b_col + c * kSpanB],
                                b, b_src + r * kRowsB * ldb + c * kSpanB,
                                k_step + row < k_end ? b_length[c] : 0);
      }
    }
    a_src += S::kBlockK;
    b_src += S::kBlockK * ldb;
    k_step += S::kBlockK;
  };
  auto copy_step = [&](int stage) {
    if constexpr (kWholeSteps) {
      copy_whole(stage);
    } else {
      copy_checked(stage);
    }
  };
  // The K positions past the block's whole steps (kWholeSteps: copied with
  // checks).
  const int remainder = (k_end - k_begin) % S::kBlockK;
  const bool has_remainder = remainder != 0;
  auto copy_remainder = [&](int stage) {
    const int skip = (steps - 1) * S::kBlockK;
    const float* const whole_a = a_src;
    a_src += skip;
    b_src += skip * ldb;
    k_step += skip;
    copy_checked(stage);
    a_src = whole_a;
  };

  const int warp = tid / 32;
  const int lane = tid % 32;
  const int lane_m = lane / S::kLanesN;
  const int lane_n = lane % S::kLanesN;
  const int warp_row = warp / S::kWarpsN * S::kWarpM + lane_m;
  const int warp_col = warp % S::kWarpsN * S::kWarpN + lane_n * 4;
  // Row i < 8 of the lane's block of C, inside the block tile.
  auto lane_row = [&](int i) { return warp_row + i * S::kLanesM; };

  // kBulk: unit u of A's row r sits at u ^ Swizzle(r). A lane's rows are
  // lane_m + i * kLanesM past a multiple of the swizzle's period, the two
  // parts in different bits, so Swizzle(lane_m) ^ Swizzle(i * kLanesM) gives
  // it: the lane holds the offsets of the units its own bits can change
  // (a_unit), and the rest are constants.
  constexpr int kUnits = S::kBlockK / 4;
  constexpr int kRowsPerLine = 32 / S::kBlockK;
  auto swizzle = [](int row) { return row / kRowsPerLine % kUnits; };
  constexpr int kLaneUnits = (S::kLanesM - 1) / kRowsPerLine % kUnits;
  int a_unit[kLaneUnits + 1];
#pragma unroll
  for (int u = 0; u <= kLaneUnits; ++u) a_unit[u] = (u ^ swizzle(lane_m)) * 4;
  auto a_fragment = [&](const float* a_stage, int i, int kk) {
    if constexpr (kBulk) {
      const int unit = kk / 4 ^ swizzle(i * S::kLanesM);
      return &a_stage[lane_row(i) * S::kBlockK + (unit & ~kLaneUnits) * 4 +
                      a_unit[unit & kLaneUnits]];
    } else {
      return &a_stage[lane_row(i) * S::kPitchA + kk];
    }
  };

  float acc[8][S::kLaneN] = {};
  // Computes K indices [kk, kk + kFragK) of the step in a_stage and b_stage,
  // calling between(kq) before K index kq.
  auto compute_fragment = [&](const float* a_stage, const float* b_stage,
                              int kk, auto between) {
    using FragK = typename FloatVector<S::kFragK>::Type;
    float a_frag[8][S::kFragK];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      *reinterpret_cast<FragK*>(a_frag[i]) =
          *reinterpret_cast<const FragK*>(a_fragment(a_stage, i, kk));
    }
#pragma unroll
    for (int q = 0; q < S::kFragK; ++q) {
      between(kk + q);
      float b_frag[S::kLaneN];
#pragma unroll
      for (int h = 0; h < S::kRunsN; ++h) {
        *reinterpret_cast<float4*>(&b_frag[h * 4]) =
            *reinterpret_cast<const float4*>(
                &b_stage[(kk + q) * S::kBlockN + warp_col + h * S::kRunGap]);
      }
      OuterProduct(acc, a_frag, q, b_frag);
    }
  };
  // kReadAhead: A's fragment at K indices [kq, kq + kFragK) read into frag,
  // and B's at K index kq.
  auto read_a = [&](float(&frag)[8][S::kFragK], const float* a_stage, int kq) {
    using FragK = typename FloatVector<S::kFragK>::Type;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      *reinterpret_cast<FragK*>(frag[i]) =
          *reinterpret_cast<const FragK*>(a_fragment(a_stage, i, kq));
    }
  };
  auto read_b = [&](float(&frag)[S::kLaneN], const float* b_stage, int kq) {
#pragma unroll
    for (int h = 0; h < S::kRunsN; ++h) {
      *reinterpret_cast<float4*>(&frag[h * 4]) =
          *reinterpret_cast<const float4*>(
              &b_stage[kq * S::kBlockN + warp_col + h * S::kRunGap]);
    }
  };
  // Computes the step in a_stage and b_stage from fragments read one K index
  // ahead into two register sets (a_frag, b_frag), the first already in set
  // 0, calling between(kq) before K index kq and last() before the FMAs of
  // the last.
  auto compute_ahead = [&](float(&a_frag)[2][8][S::kFragK],
                           float(&b_frag)[2][S::kLaneN], const float* a_stage,
                           const float* b_stage, auto between, auto last) {
    static_assert(S::kBlockK % 2 == 0 && S::kBlockK / S::kFragK % 2 == 0,
                  "a step's last K index reads set 1");
#pragma unroll
    for (int kq = 0; kq < S::kBlockK; ++kq) {
      between(kq);
      const int group = kq / S::kFragK;
      if (kq + 1 < S::kBlockK) {
        if ((kq + 1) % S::kFragK == 0) {
          read_a(a_frag[(group + 1) % 2], a_stage, kq + 1);
        }
        read_b(b_frag[(kq + 1) % 2], b_stage, kq + 1);
      } else {
        last();
      }
      OuterProduct(acc, a_frag[group % 2], kq % S::kFragK, b_frag[kq % 2]);
    }
  };
  // kReadAcross (one block to an SM, an operand copied in pairs, neither
  // element by element): the fragments' registers last across steps, and a
  // step's first fragments are read before the FMAs of the last K index of the
  // step before, once the barrier has let the step in, so that those FMAs
  // hide the barrier and the reads. Measured on an H200 against reading them
  // after the barrier (ms, docs/benchmarks.md, session 45): both in pairs,
  // 1002^3 x 2 0.0961 against 0.0999, 902^3 x 2 0.0877 against 0.0915,
  // 1002x2002x1002 x 2 0.1797 against 0.1872; A alone, 1000x1002x1000 x 2
  // 0.0947 against 0.0978; B alone, 1002x100x1002 x 2 0.0185 against 0.0188.
  // Where the other operand went element by element it lost or tied
  // (1001x1001x1002 x 2 0.0996 against 0.0991), and so it did in the other
  // kernels one to an SM (1001^3 x 2 0.1055 against 0.1014, bulk copies 1000^3
  // x 2 0.0974 against 0.0964): Nsight Compute at 1000^3 x 2 put short
  // scoreboard stalls at 10.3% of the warps' cycles against 15.7%, but
  // dispatch stalls at 8.0% against 5.0%, with 321 of the loop's 2048 FFMAs
  // reading two registers of one bank against 202 (tools/sass_loop.py).
  constexpr bool kReadAcross = kReadAhead && S::kMinBlocksPerSm == 1 &&
                               (kWidthA == 2 || kWidthB == 2) && kWidthA != 1 &&
                               kWidthB != 1;
  static_assert(!(kReadAcross && (kPersistent || kBulk)),
                "the cp.async ring of one problem lets the next step in");
  float a_across[2][8][S::kFragK];
  float b_across[2][S::kLaneN];
  auto read_first = [&](int stage) {
    const float* a_stage = shared + stage * S::kStageFloats;
    read_a(a_across[0], a_stage, 0);
    read_b(b_across[0], a_stage + S::kFloatsA, 0);
  };
  // Computes the step in `stage`, calling between(kq) before K index kq.
  // With kReadAcross, its first fragments are read already, and enter_next()
  // is called after its last reads, before the FMAs of its last K index: it
  // lets the next step in, if any, whose first fragments are then read from
  // the next stage of the ring. (After the last step, that stage holds a step
  // computed before, which nothing overwrites; read conditionally, ptxas read
  // B's first fragment again at the loop's top.)
  auto compute_step = [&](int stage, auto between, auto enter_next) {
    const float* a_stage = shared + stage * S::kStageFloats;
    const float* b_stage = a_stage + S::kFloatsA;
    if constexpr (kReadAcross) {
      compute_ahead(a_across, b_across, a_stage, b_stage, between, [&] {
        enter_next();
        read_first(stage + 1 == S::kStages ? 0 : stage + 1);
      });
    } else if constexpr (kReadAhead) {
      float a_frag[2][8][S::kFragK];
      float b_frag[2][S::kLaneN];
      read_a(a_frag[0], a_stage, 0);
      read_b(b_frag[0], b_stage, 0);
      compute_ahead(a_frag, b_frag, a_stage, b_stage, between, [] {});
    } else {
#pragma unroll
      for (int kk = 0; kk < S::kBlockK; kk += S::kFragK) {
        compute_fragment(a_stage, b_stage, kk, between);
      }
    }
  };

  // Computes the step in `stage` only up to the kFragK run that holds its K
  // index length - 1 (past them A and B hold zeros).
  auto compute_short = [&](int stage, int length) {
    const float* a_stage = shared + stage * S::kStageFloats;
#pragma unroll
    for (int kk = 0; kk < S::kBlockK; kk += S::kFragK) {
      if (kk >= length) break;
      compute_fragment(a_stage, a_stage + S::kFloatsA, kk, [](int) {});
    }
  };

  // The unsplit 16-byte store takes copies too (Unpinned) where the shape
  // leaves 128 registers a thread (two 256-thread blocks per SM): given the
  // accumulators themselves, ptxas -O1 spilled 44 bytes there and laid out
  // the loop with 59% of its FFMAs reading two registers of one bank, against
  // no spill and 15% with copies. With 168 registers, copies measured mixed.
  constexpr bool kUnpinnedStore = k128Registers;

  // The problem's C, for the store below. With 16-byte runs of both operands
  // where a lane's accumulators leave few registers (8 x 12 of them at 168),
  // it is found again from an Opaque block index: held across the loop, the
  // problem's index spilled 8 bytes. Measured on an H100 against holding it
  // (ms, docs/benchmarks.md, session 31): 72^3 x 2048 0.0834 against 0.0865,
  // 96^3 x 1000 0.0556 against 0.0580, 96x1000x96 x 300 0.1531 against
  // 0.1655. Found again elsewhere, it spilled 8 bytes in checked steps with A
  // in pairs or 16-byte runs, cost 96x97x96 x 600 10% (element by element),
  // and gained nothing in the 64-wide tiles (777^3 lost 5%).
  auto problem_c = [&] {
    if constexpr (S::kLaneN > 8 && kVectorA && kVectorB && !kGrouped) {
      return c_first + problem_of(Opaque(blockIdx.x)) * stride_c;
    } else {
      return c;
    }
  };

  // Stores (or with kSplitK adds) the lane's block of C into the tile at
  // block_row, block_col of a `rows` x `cols` C at out_c, rows `pitch` apart,
  // but for its first shift_rows rows and shift_cols columns.
  auto store_tile = [&](float* out_c, int64_t rows, int64_t cols,
                        int64_t pitch) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int64_t row = block_row + lane_row(i);
      if (row >= rows || (kShiftEdges && lane_row(i) < shift_rows)) continue;
#pragma unroll
      for (int h = 0; h < S::kRunsN; ++h) {
        const int64_t col = block_col + warp_col + h * S::kRunGap;
        const float* v = &acc[i][h * 4];
        float* out = &out_c[row * pitch + col];
        auto stored_before = [&](int j) {
          return kShiftEdges && warp_col + h * S::kRunGap + j < shift_cols;
        };
        if (col + 4 <= cols && !stored_before(0) &&
            reinterpret_cast<uintptr_t>(out) % 16 == 0) {
          if constexpr (kSplitK) {
            AtomicAdd4(out, make_float4(Unpinned(v[0]), Unpinned(v[1]),
                                        Unpinned(v[2]), Unpinned(v[3])));
          } else {
            *reinterpret_cast<float4*>(out) =
                kUnpinnedStore ? make_float4(Unpinned(v[0]), Unpinned(v[1]),
                                             Unpinned(v[2]), Unpinned(v[3]))
                               : make_float4(v[0], v[1], v[2], v[3]);
          }
          continue;
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (col + j >= cols || stored_before(j)) continue;
          if constexpr (kSplitK) {
            atomicAdd(out + j, v[j]);
          } else {
            out[j] = v[j];
          }
        }
      }
    }
  };

  // kSplitK, in a tile column moved by other than a multiple of 4 (its
  // stored columns start on 16 bytes, but its lanes' runs of 4 don't): adds
  // the tile's block of C through shared memory, realigned, so that whole runs
  // of 4 add as one 16-byte atomic rather than four. The caller checks that
  // C's rows start on 16 bytes, or with kRealignC each row is realigned on
  // its own (AddRealignedRun). With rows kPitchC (1 mod 32) apart, a warp
  // reads 4 rows x 8 runs at once from 32 different banks, and writes its
  // lanes' elements j (64-wide warp tiles: 4 rows x 8 lanes) likewise. This
  // lets split K on C's 16-byte rows (C padded alone) move its tiles too.
  // Measured on an H100 against checked steps there (ms, docs/benchmarks.md,
  // session 18): 1023^3 0.0631 against 0.0685, 701^3 0.0298 against 0.0328,
  // 1001^3 x 2 0.1152 against 0.1265, 511^3 x 6 0.0545 against 0.0575; it
  // lost where K's parts are 5 steps and the tile adds 127 columns so (511^3
  // 0.0188 against 0.0171, 767^3 0.0391 against 0.0380). Against four
  // atomics a run where the tile adds 9 columns, even (777^3, Nsight Compute:
  // 45.7 against 45.8 us).
  auto add_realigned = [&] {
    constexpr int kPitchC = S::kBlockN + 1;
    constexpr int kRuns = S::kBlockN / 4;  // in a row of the tile
    static_assert(
        kPitchC * S::kBlockM <= S::kSharedFloats && kRuns % 8 == 0,
        "shared memory holds a tile of C, read 4 rows x 8 runs a warp");
    __syncthreads();  // every warp has computed its last step
#pragma unroll
    for (int i = 0; i < 8; ++i) {
#pragma unroll
      for (int j = 0; j < S::kLaneN; ++j) {
        shared[lane_row(i) * kPitchC + warp_col + j % 4 + j / 4 * S::kRunGap] =
            acc[i][j];
      }
    }
    __syncthreads();
    const int width = S::kBlockN - shift_cols;
    for (int e = tid; e < S::kBlockM * kRuns; e += S::kThreads) {
      const int row = e / 32 / (kRuns / 8) * 4 + e % 32 / 8;
      const int col = (e / 32 % (kRuns / 8) * 8 + e % 8) * 4;
      if (row < shift_rows || col >= width) continue;
      const float* v = &shared[row * kPitchC + shift_cols + col];
      float* out = &c[(block_row + row) * ldc + tile_col + col];
      if constexpr (kRealignC) {
        AddRealignedRun(v, out, width - col, col == 0);
        continue;
      }
      if (col + 4 <= width) {
        AtomicAdd4(out, make_float4(v[0], v[1], v[2], v[3]));
      } else {
        for (int j = 0; j < width - col; ++j) atomicAdd(out + j, v[j]);
      }
    }
  };

  if constexpr (kPersistent) {
    // The copies run up to kStages - 1 steps ahead of the computation, into
    // the next problem: problem copy_problem, `copied` of its steps so far.
    int64_t copy_problem = problem;
    int copied = 0;
    auto copy_next = [&](int stage) {
      if (copy_problem >= count) return;
      if (kWholeSteps && copied == 0 && has_remainder) {
        copy_remainder(stage);
      } else {
        copy_step(stage);
      }
      if (++copied < steps) return;
      copied = 0;
      copy_problem += gridDim.x;
      const int64_t ahead = copy_problem - problem;
      a_src = a + ahead * stride_a + a_row * lda + a_col;
      b_src = b + ahead * stride_b + b_row * ldb + b_col;
      b_whole = b_src - (b_col < n ? 0 : b_col);
      k_step = 0;
    };
#pragma unroll
    for (int s = 0; s < S::kStages - 1; ++s) {
      copy_next(s);
      CopyAsyncCommit();
    }
    int stage = 0;  // of the step computed next
    for (int64_t q = problem; q < count; q += gridDim.x) {
      for (int s = 0; s < steps; ++s) {
        CopyAsyncWait<S::kStages - 2>();
        __syncthreads();
        copy_next((stage + S::kStages - 1) % S::kStages);
        CopyAsyncCommit();
        compute_step(
            stage, [](int) {}, [] {});
        stage = stage + 1 == S::kStages ? 0 : stage + 1;
      }
      // Opaque sizes: held across the loop, the tile's output addresses and
      // checks took registers enough to cost blocks per SM (or spill).
      store_tile(c + (q - problem) * stride_c, Opaque(m), Opaque(n),
                 Opaque(ldc));
#pragma unroll
      for (int i = 0; i < 8; ++i) {
#pragma unroll
        for (int j = 0; j < S::kLaneN; ++j) acc[i][j] = 0;
      }
    }
  } else if constexpr (kBulk) {
#if __CUDA_ARCH__ >= 900
    // The ring as below, a barrier per stage: step s lands in stage
    // s % kStages, in phase s / kStages of its barrier.
    uint64_t* const full =
        reinterpret_cast<uint64_t*>(shared + S::kStages * S::kStageFloats);
    auto copy_bulk = [&](int s) {
      const int stage = s % S::kStages;
      float* const a_stage = shared + stage * S::kStageFloats;
      const int first_k = k_begin + s * S::kBlockK;
      BarrierArriveExpecting(&full[stage],
                             4 * S::kBlockK * (S::kBlockM + S::kBlockN));
      BulkTensorCopy(a_stage, tables.a, first_k, static_cast<int>(block_row),
                     static_cast<int>(problem), &full[stage]);
      BulkTensorCopy(a_stage + S::kFloatsA, tables.b,
                     static_cast<int>(block_col), first_k,
                     static_cast<int>(problem), &full[stage]);
    };
    if (tid == 0) {
      PrefetchTensorMap(tables.a);
      PrefetchTensorMap(tables.b);
      for (int s = 0; s < S::kStages; ++s) BarrierInit(&full[s], 1);
      FenceBarrierInit();
    }
    // The barriers are set up. (The first copies issued before this barrier,
    // the loop ran slower: Nsight Compute on an H100, 480^3 x 7 61.2 us against
    // 59.0, 1024^3 x 2 123.2 against 118.1.)
    __syncthreads();
    if (tid == 0) {
      for (int s = 0; s < S::kStages - 1 && s < steps; ++s) copy_bulk(s);
    }
    // kShortStep (the 128 x 128 tiles one to an SM): the block's last step,
    // where its part of K ends short of a whole step, computes only the
    // kFragK runs that hold K (past them A and B hold zeros), apart from the
    // loop (inside it, ptxas laid out one loop body of both); short_k is its
    // K indices, else 0. Measured on an H200 against the whole step (ms,
    // docs/benchmarks.md, session 40): 1000^3 x 2 0.0965 against 0.0980,
    // 1024x1000x1024 x 2 0.0931 against 0.0960, 1000x996x1000 x 2 0.0962
    // against 0.0982. In the other bulk kernels it lost up to 5% (Nsight
    // Compute, 700^3 x 2 in 64 x 64 tiles with K split: 40.8 us against 38.7,
    // with fewer instructions) and gained little; in the cp.async kernels
    // too, where it also cost spills, but for the same tiles two to an SM
    // (kShortFirst below).
    constexpr bool kShortStep = S::kMinBlocksPerSm == 1;
    const int short_k = kShortStep ? remainder : 0;
    // Waits for step s and refills the stage of step s - 1.
    auto next_step = [&](int s) {
      BarrierWait(&full[s % S::kStages], s / S::kStages % 2);
      // Step s - 1's stage, which the copy below refills, has been read by
      // all.
      __syncthreads();
      const int ahead = s + S::kStages - 1;
      if (tid == 0 && ahead < steps) copy_bulk(ahead);
    };
    const int whole_steps = short_k == 0 ? steps : steps - 1;
    for (int s = 0; s < whole_steps; ++s) {
      next_step(s);
      compute_step(
          s % S::kStages, [](int) {}, [] {});
    }
    if (whole_steps < steps) {
      next_step(whole_steps);
      compute_short(whole_steps % S::kStages, short_k);
    }
    store_tile(c, m, n, ldc);
#endif  // __CUDA_ARCH__ >= 900
  } else {
    // The ring: step s lives in stage s % kStages. One commit per step (empty
    // past the last) keeps "at most kStages - 2 pending" meaning "step s has
    // landed".
#pragma unroll
    for (int s = 0; s < S::kStages - 1; ++s) {
      if (kWholeSteps && s == 0 && has_remainder) {
        copy_remainder(s);
      } else if (s < steps) {
        copy_step(s);
      }
      CopyAsyncCommit();
    }
    // kShortFirst (the 128 x 128 tiles two to an SM in unchecked steps, an
    // operand off 16 bytes): the remainder step, which goes first, computes
    // only the kFragK runs that hold K, apart from the loop (as kShortStep
    // above). Measured on an H200 against the whole step (ms,
    // docs/benchmarks.md, session 41): 1001^3 x 4 0.1974 against 0.2055,
    // 1002^3 x 4 0.1878 against 0.1972, 999^3 x 4 0.1964 against 0.2051. One
    // to an SM (copies interleaved) it lost: 1001^3 x 2 0.1088 against
    // 0.1062, 1001x101x1000 x 2 0.0258 against 0.0218. With both operands on
    // 16 bytes (where bulk copies are not built) it spilled 24 bytes. With
    // kInterleaved, the step after it is copied whole before it.
    constexpr bool kShortFirst = kWholeSteps && !(kVectorA && kVectorB) &&
                                 S::kBlockM == 128 && S::kBlockN == 128 &&
                                 S::kMinBlocksPerSm == 2;
    // Step s lives in stage s % kStages. In a ring of three, the remainders
    // (of the step computed and of the one copied, each a multiply by the
    // inverse and IMADs on the FMA pipe) are counted along instead, in
    // `counted`. Measured on an H200 against the remainders (ms,
    // docs/benchmarks.md, session 47): 511x512x511 x 6 0.0456 against 0.0469,
    // 450x451x450 x 5 0.0426 against 0.0431, 318^3 x 16 0.0389 against
    // 0.0394, 90x1000x91 x 300 0.1867 against 0.1893. In rings of two and four
    // they are masks; counted along there, ptxas laid out the 64 x 128 tiles'
    // loop otherwise and 768^3 x 9 lost 13% (0.2059 against 0.1822). The
    // remainders stay written as they were where they don't count: written
    // through a helper, they moved the layout of the 128 x 128 tiles one to
    // an SM, and 1002^3 x 2 lost 2%.
    constexpr bool kCountStages = (S::kStages & (S::kStages - 1)) != 0;
    auto stage_before = [](int stage) {
      return stage == 0 ? S::kStages - 1 : stage - 1;
    };
    // Waits for step s, which is then visible to all, and (but with
    // kInterleaved) copies step s + kStages - 1 into the stage of step s - 1
    // (counted: `behind`), which all have read.
    auto next_step = [&](int s, int behind) {
      CopyAsyncWait<S::kStages - 2>();
      __syncthreads();
      if constexpr (!kInterleaved) {
        const int ahead = s + S::kStages - 1;
        if (ahead < steps)
          copy_step(kCountStages ? behind : ahead % S::kStages);
        CopyAsyncCommit();
      }
    };
    int first = 0;
    if (kShortFirst && has_remainder) {
      next_step(0, S::kStages - 1);
      if constexpr (kInterleaved) {
        copy_whole_part(S::kStages - 1, 0, 1, S::kStages - 1 < steps);
        CopyAsyncCommit();
      }
      compute_short(0, remainder);
      first = 1;
    }
    // With kReadAcross, step s + 1 is let in before the last K index of step
    // s (kInterleaved: once step s's parts are committed); `counted` is step
    // s's stage.
    auto enter_next = [&](int s, int counted) {
      if constexpr (kInterleaved) CopyAsyncCommit();
      if (s + 1 < steps) next_step(s + 1, counted);
    };
    int counted = first;  // step s's stage, with kCountStages
    if (kReadAcross && first < steps) {
      next_step(first, stage_before(first));
      read_first(first % S::kStages);
    }
#pragma unroll(S::kUnrolledSteps)
    for (int s = first; s < steps; ++s) {
      if (!kReadAcross) next_step(s, stage_before(counted));
      if constexpr (kInterleaved) {
        const int ahead = s + S::kStages - 1;
        const bool live = ahead < steps;
        compute_step(
            kCountStages ? counted : s % S::kStages,
            [&](int kq) {
              const int part = (kq - kFirstPart) / kPartGap;
              if (kq >= kFirstPart && (kq - kFirstPart) % kPartGap == 0 &&
                  part < kCopyParts) {
                copy_whole_part(
                    kCountStages ? stage_before(counted) : ahead % S::kStages,
                    part, kCopyParts, live);
              }
            },
            [&] { enter_next(s, counted); });
        if (!kReadAcross) CopyAsyncCommit();
      } else {
        compute_step(
            kCountStages ? counted : s % S::kStages, [](int) {},
            [&] { enter_next(s, counted); });
      }
      if constexpr (kCountStages) {
        counted = counted + 1 == S::kStages ? 0 : counted + 1;
      }
    }
    if (kRealignC ||
        (kSplitK && kShiftEdges && shift_cols % 4 != 0 && ldc % 4 == 0 &&
         reinterpret_cast<uintptr_t>(c + tile_col) % 16 == 0)) {
      add_realigned();
    } else {
      store_tile(problem_c(), m, n, ldc);
    }
  }
  if (late) WaitForPriorGrid();
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_SGEMM_WARP_TILED_CUH_
