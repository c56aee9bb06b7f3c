// matserve's public kernel API: host launchers for the GPU kernels, on device
// pointers and a stream.
#ifndef MATSERVE_KERNELS_KERNELS_H_
#define MATSERVE_KERNELS_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace matserve::kernels {

// The rungs of the SGEMM ladder, slowest first. The simpler ones stay as
// correctness baselines; kAuto picks by shape.
enum class SgemmVariant {
  kAuto,
  kNaive,            // one thread per element of C, straight from memory
  kTiled,            // 32 x 32 shared-memory tiles, one element per thread
  kRegisterBlocked,  // 128 x 128 block tiles, 8 x 8 of C in each thread
  kWarpTiled,        // warp tiles, a ring of cp.async stages, K split where the
                     // tiles are too few to fill the GPU
};
inline constexpr SgemmVariant kSgemmVariants[] = {
    SgemmVariant::kNaive, SgemmVariant::kTiled, SgemmVariant::kRegisterBlocked,
    SgemmVariant::kWarpTiled};

// "naive", "tiled", "register_blocked", "warp_tiled", "auto".
const char* SgemmVariantName(SgemmVariant variant);
// The variant SgemmVariantName calls `name`; false for no such name.
bool ParseSgemmVariant(const char* name, SgemmVariant* variant);

// C = A * B for row-major device matrices: A is m x k, B is k x n, C is m x n.
// Any sizes >= 1, whichever variant; fp32 accumulation. Where kWarpTiled (or
// kAuto) splits K (most products too small to fill the GPU several times,
// and large ones where that keeps the GPU's last round of blocks full), C is
// first zeroed on `stream` and the splits' partial sums are added in
// whatever order they finish: the result is then not bit-identical from run
// to run (within fp32 rounding). A large product whose A or B rows don't
// start on 16 bytes first copies that operand on `stream` into scratch
// memory from a stream-ordered pool of the device's (allocated and freed in
// stream order; up to 256 MiB of it stays reserved between calls); where it
// also splits K and C's rows don't start on 16 bytes, C is computed there
// and copied back. Returns
// cudaErrorInvalidValue for a zero or negative size, else the launch error
// (the kernels themselves run asynchronously on `stream`).
cudaError_t Sgemm(int64_t m, int64_t n, int64_t k, const float* a,
                  const float* b, float* c, cudaStream_t stream,
                  SgemmVariant variant = SgemmVariant::kAuto);

// The warp-tiled shapes a strided batch can take; kAuto lets its sides and
// count choose.
enum class BatchTiles {
  kAuto,
  kSmall,    // 64 x 64 tiles of two 32 x 64 warp tiles (three stages where A's
             // rows start off 16 bytes)
  kQuad,     // 64 x 64 tiles of four 32 x 32 warp tiles, K steps of 8
  kQuadFew,  // the same in K steps of 16
  kMid,      // 96 x 96 tiles of three 32 x 96 warp tiles, K steps of 8
  kWide,     // 64 x 128 tiles of four 32 x 64 warp tiles
  kTall,     // 128 x 64 tiles of four 64 x 32 warp tiles
  kBig,      // 128 x 128 tiles of eight 32 x 64 warp tiles, K steps of 32
};
inline constexpr BatchTiles kBatchTiles[] = {
    BatchTiles::kSmall, BatchTiles::kQuad, BatchTiles::kQuadFew,
    BatchTiles::kMid,   BatchTiles::kWide, BatchTiles::kTall,
    BatchTiles::kBig};

// "auto", "small", "quad", "quad_few", "mid", "wide", "tall", "big".
const char* BatchTilesName(BatchTiles tiles);
// The tiles BatchTilesName calls `name`; false for no such name.
bool ParseBatchTiles(const char* name, BatchTiles* tiles);

// The warp-tiled shape that a strided batch of `count` m x k x n problems
// takes whole on a GPU of `sms` SMs by the cost model fitted to batches with
// an operand off 16 bytes (vector_a, vector_b: whether A's and B's rows all
// start on 16 bytes); kAuto where it lies outside the model's range and
// SgemmStridedBatched's rules choose.
BatchTiles ModeledBatchTiles(int64_t m, int64_t n, int64_t k, int64_t count,
                             bool vector_a, bool vector_b, int64_t sms);

// Many same-shape products in one launch: C_i = A_i * B_i for i < batch,
// where A_i = a + i * stride_a, B_i = b + i * stride_b, C_i = c + i * stride_c
// (strides in elements). Small problems share blocks (up to 16 x 16: four per
// block), up to 32 x 32 each warp takes problem after problem; larger ones
// take warp-tiled blocks (64 x 64 tiles under 128 on a
// side; up to 64 x 64, blocks that each take problem after problem). A batch
// whose blocks would leave the GPU's last round of them mostly empty splits K
// for the problems of that round, as Sgemm does (zeroing their C on `stream`
// first; their results are then not bit-identical from run to run). Any
// sizes >= 1; same error contract as Sgemm.
// With `tiles` other than kAuto, the batch takes that one warp-tiled shape, K
// split as that shape plans alone: the whole batch, or, where the rules cut
// its edges into strips (SgemmBatchEdges in kernels.cu), its whole 64s, the
// strips run as the rules run them. For benchmarks that weigh the rules
// against the shapes they choose among.
cudaError_t SgemmStridedBatched(int64_t m, int64_t n, int64_t k, const float* a,
                                int64_t stride_a, const float* b,
                                int64_t stride_b, float* c, int64_t stride_c,
                                int64_t batch, cudaStream_t stream,
                                BatchTiles tiles = BatchTiles::kAuto);

// One product of a grouped launch: row-major device matrices, A m x k, B k x n,
// C m x n.
struct GemmProblem {
  int64_t m, n, k;
  const float* a;
  const float* b;
  float* c;
};
// A row of the problem table that SgemmGrouped reads from device memory.
struct GroupedGemmEntry {
  GemmProblem problem;
  int64_t first_tile;  // the first block of this problem
  bool vectorized;     // 16-byte accesses are legal for it
};

// How a grouped launch runs, as PlanSgemmGrouped chose by the problems.
struct GroupedPlan {
  int64_t blocks = -1;      // -1: a size < 1, or a grid too large
  bool warp_tiled = false;  // 64 x 128 warp tiles, else 64 x 64 small tiles
  int width = 1;  // elements a warp-tiled copy moves (4, 2 or 1): what the
                  // rows of every problem allow
};

// Fills entries[0, count) (host memory) for `problems` and returns the plan of
// the grouped launch (blocks -1 if a size is < 1 or the grid is too large).
// Copy the entries to the device (with the batch's inputs, say) and pass them
// to SgemmGrouped with the plan.
GroupedPlan PlanSgemmGrouped(const GemmProblem* problems, int64_t count,
                             GroupedGemmEntry* entries);

// Problems of different shapes in one launch: `entries` is a device copy of
// the table PlanSgemmGrouped filled, `plan` what it returned.
cudaError_t SgemmGrouped(const GroupedGemmEntry* entries, int64_t count,
                         const GroupedPlan& plan, cudaStream_t stream);

// The rungs of the transpose ladder; kAuto picks by shape.
enum class TransposeVariant {
  kAuto,       // a copy for a vector (1 x N and N x 1 share their layout),
               // kPacked for batches of small matrices, else kLargeTile
  kTiled,      // a 32 x 32 padded tile, one element at a time
  kWide,       // 32 x 32 padded tiles, 4-element runs, 16-byte where aligned
  kLargeTile,  // 64 x 64 padded tiles (128 x 32 element-wise), 8-16
               // elements per thread, 16-byte where aligned
  kPacked,     // several whole small matrices per block (larger ones: as
               // kLargeTile)
};
inline constexpr TransposeVariant kTransposeVariants[] = {
    TransposeVariant::kTiled, TransposeVariant::kWide,
    TransposeVariant::kLargeTile, TransposeVariant::kPacked};

// "auto", "tiled", "wide", "large_tile", "packed".
const char* TransposeVariantName(TransposeVariant variant);
// The variant TransposeVariantName calls `name`; false for no such name.
bool ParseTransposeVariant(const char* name, TransposeVariant* variant);

// out = in^T for a row-major rows x cols device matrix; out is cols x rows.
// Bit-exact. Same error contract as Sgemm.
cudaError_t Transpose(int64_t rows, int64_t cols, const float* in, float* out,
                      cudaStream_t stream,
                      TransposeVariant variant = TransposeVariant::kAuto);

// out_i = in_i^T for i < batch, in_i = in + i * in_stride, out_i = out + i *
// out_stride (in elements), in one launch.
cudaError_t TransposeStridedBatched(
    int64_t rows, int64_t cols, const float* in, int64_t in_stride, float* out,
    int64_t out_stride, int64_t batch, cudaStream_t stream,
    TransposeVariant variant = TransposeVariant::kAuto);

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_KERNELS_H_
