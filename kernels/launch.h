// Host-side pieces shared by the launchers of kernels.cu and
// launch_warp_tiled.cuh: sizes, the Batch of operands, per-device facts, the
// overlapped launch, and the warp-tiled shapes with their launcher. Internal to
// kernels/ (kernels.h is the public API).
#ifndef MATSERVE_KERNELS_LAUNCH_H_
#define MATSERVE_KERNELS_LAUNCH_H_

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "kernels/sgemm_warp_tiled.cuh"

namespace matserve::kernels {

inline int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }

// The grids here are one-dimensional; gridDim.x stops at 2^31 - 1 blocks.
// Returns the block count of `per_item` blocks for each of `items`, or -1
// where that does not fit.
inline int64_t GridBlocks(int64_t per_item, int64_t items) {
  return per_item > INT_MAX / items ? -1 : per_item * items;
}

inline bool Aligned16(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Every row of every matrix of a strided batch starts on 16 bytes: rows
// `pitch` elements apart, matrices `stride` apart, from `base`. (With pitch
// the row length, 16-byte accesses along the rows are then legal.)
inline bool Vectorizable(const void* base, int64_t pitch, int64_t stride) {
  return pitch % 4 == 0 && stride % 4 == 0 && Aligned16(base);
}

// The widest piece (4, 2 or 1 elements) whose copies every row of a strided
// batch allows: 16-byte ones where Vectorizable, 8-byte ones where the rows
// start on 8 bytes and hold whole pairs (`length` elements, even).
inline int PieceWidth(const void* base, int64_t pitch, int64_t stride,
                      int64_t length) {
  if (Vectorizable(base, pitch, stride)) return 4;
  const bool pairs = pitch % 2 == 0 && stride % 2 == 0 && length % 2 == 0 &&
                     reinterpret_cast<uintptr_t>(base) % 8 == 0;
  return pairs ? 2 : 1;
}

// The operands of a strided batch; a single product is a batch of one.
// Rows lie lda, ldb and ldc elements apart: packed, except where the
// warp-tiled launcher has copied A or B into padded rows, or runs a batch's
// whole 64s apart from its edges (only the warp-tiled and strip kernels read
// the pitches). c_zeroed: C holds zeros already (a padded C, zeroed by an
// operand's pad), so a split K need not zero it. wait_at_end: the grid before
// in the stream touches nothing of this batch, and every grid before that one
// has finished when it launches, so the warp-tiled kernel may run beside it
// and wait for it at its end (a split tail, SgemmWarpTiledPlanned).
struct Batch {
  int64_t m, n, k;
  const float* a;
  int64_t stride_a;
  const float* b;
  int64_t stride_b;
  float* c;
  int64_t stride_c;
  int64_t count;
  int64_t lda = k, ldb = n, ldc = n;
  bool c_zeroed = false;
  bool wait_at_end = false;

  // Every row of A (of B, of C; of A and B; of all three) starts on 16 bytes.
  bool VectorA() const { return Vectorizable(a, lda, stride_a); }
  bool VectorB() const { return Vectorizable(b, ldb, stride_b); }
  bool VectorC() const { return Vectorizable(c, ldc, stride_c); }
  bool VectorOperands() const { return VectorA() && VectorB(); }
  // The pieces the warp-tiled kernel copies A and B in (PieceWidth).
  int WidthA() const { return PieceWidth(a, lda, stride_a, k); }
  int WidthB() const { return PieceWidth(b, ldb, stride_b, n); }
  bool Vectorized() const { return VectorOperands() && VectorC(); }
  // A's (B's, C's) problems lie one after another: one matrix of count * m
  // (count * k, count * m) rows, which pads or zeros in one pass.
  bool OneMatrixA() const { return count == 1 || stride_a == m * lda; }
  bool OneMatrixB() const { return count == 1 || stride_b == k * ldb; }
  bool OneMatrixC() const { return count == 1 || stride_c == m * ldc; }
  double MultiplyAdds() const { return static_cast<double>(m) * n * k * count; }
  // Every row of A and of B starts on a 128-byte line.
  bool OperandsOnLines() const {
    auto on_lines = [&](const float* base, int64_t pitch, int64_t stride) {
      return reinterpret_cast<uintptr_t>(base) % 128 == 0 && pitch % 32 == 0 &&
             (count == 1 || stride % 32 == 0);
    };
    return on_lines(a, lda, stride_a) && on_lines(b, ldb, stride_b);
  }
};

// Sets *value to what compute(device, value) sets it to for the current
// device, computing it once per device (a value must be > 0). Each caller's
// lambda is a type of its own, and so has a cache of its own.
template <typename Compute>
cudaError_t OncePerDevice(Compute compute, int64_t* value) {
  constexpr int kMaxDevices = 64;
  static std::atomic<int64_t> known[kMaxDevices];  // 0: not yet
  int device = 0;
  if (cudaError_t error = cudaGetDevice(&device)) return error;
  if (device < kMaxDevices && (*value = known[device].load()) > 0) {
    return cudaSuccess;
  }
  if (cudaError_t error = compute(device, value)) return error;
  if (device < kMaxDevices) known[device].store(*value);
  return cudaSuccess;
}

// The current device's SM count.
inline cudaError_t MultiprocessorCount(int64_t* sms) {
  return OncePerDevice(
      [](int device, int64_t* value) {
        int count = 0;
        const cudaError_t error = cudaDeviceGetAttribute(
            &count, cudaDevAttrMultiProcessorCount, device);
        *value = std::max(1, count);
        return error;
      },
      sms);
}

// Lets kKernel have `bytes` of dynamic shared memory on the current device
// (beyond the default 48 KiB).
template <auto kKernel>
cudaError_t AllowSharedMemory(int bytes) {
  int64_t done = 0;
  return OncePerDevice(
      [bytes](int, int64_t* value) {
        *value = 1;
        return cudaFuncSetAttribute(
            kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
      },
      &done);
}

// Sets *bytes to the least dynamic shared memory, from `least` up, at which
// at most `per_sm` blocks of kKernel (`threads` threads each) fit on an SM of
// the current device, and lets kKernel have it. Where no amount does, `least`.
template <auto kKernel>
cudaError_t HoldBlocksPerSm(int threads, int least, int per_sm,
                            int64_t* bytes) {
  return OncePerDevice(
      [threads, least, per_sm](int device, int64_t* value) {
        int most = 0;
        if (cudaError_t error = cudaDeviceGetAttribute(
                &most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device)) {
          return error;
        }
        if (cudaError_t error = cudaFuncSetAttribute(
                kKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most)) {
          return error;
        }
        constexpr int kGranule = 128;
        for (int held = least; held <= most; held += kGranule) {
          int fit = 0;
          if (cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                  &fit, kKernel, threads, held)) {
            return error;
          }
          if (fit <= per_sm) {
            *value = held;
            return cudaSuccess;
          }
        }
        *value = least;
        return cudaSuccess;
      },
      bytes);
}

// Sets *built to whether kKernel was built for the current device as sm_90 or
// later, which bulk copies need (built for less, such a kernel does nothing).
template <auto kKernel>
cudaError_t BuiltForBulkCopies(bool* built) {
  int64_t version = 0;
  const cudaError_t error = OncePerDevice(
      [](int, int64_t* value) {
        cudaFuncAttributes attributes = {};
        const cudaError_t error = cudaFuncGetAttributes(&attributes, kKernel);
        *value = std::max(1, attributes.binaryVersion);
        return error;
      },
      &version);
  *built = version >= 90;
  return error;
}

// The driver's cuTensorMapEncodeTiled, or null where it has none.
inline PFN_cuTensorMapEncodeTiled_v12000 TensorMapEncoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function,
                                         12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      return PFN_cuTensorMapEncodeTiled_v12000{nullptr};
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  return encode;
}

// Sets *map to the tensor of a strided batch of `count` rows x cols matrices,
// rows `pitch` elements apart and matrices `stride` apart from `base`, in
// boxes of box_rows x box_cols of one matrix, zeros past its edges. No L2
// promotion: against 256-byte promotion on an H200 (ms, three rounds),
// 64x200x64 x 2048 0.0888 against 0.0910, 64^3 x 4096 0.0635 against 0.0642,
// the other staged batches measured even (and so did the warp-tiled kernel's
// bulk copies, H100). False where the driver cannot describe the batch so
// (matrices that overlap, say).
inline bool BatchTensorMap(const float* base, int64_t rows, int64_t cols,
                           int64_t pitch, int64_t stride, int64_t count,
                           uint32_t box_rows, uint32_t box_cols,
                           CUtensorMapSwizzle swizzle, CUtensorMap* map) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = TensorMapEncoder();
  if (count == 1) stride = rows * pitch;
  if (encode == nullptr || stride < rows * pitch) return false;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols),
                              static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(count)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(pitch) * 4,
                                 static_cast<cuuint64_t>(stride) * 4};
  const cuuint32_t box[3] = {box_cols, box_rows, 1};
  const cuuint32_t steps[3] = {1, 1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3,
                const_cast<float*>(base), dims, strides, box, steps,
                CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// How many blocks of kKernel (`threads` threads, `shared_bytes` of dynamic
// shared memory each) fit on the current device at once. It sets a grid's
// size only, never what a kernel computes.
template <auto kKernel>
cudaError_t ResidentBlocks(int threads, int shared_bytes, int64_t* blocks) {
  return OncePerDevice(
      [threads, shared_bytes](int, int64_t* value) {
        int64_t sms = 0;
        if (cudaError_t error = MultiprocessorCount(&sms)) return error;
        int per_sm = 0;
        const cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, kKernel, threads, shared_bytes);
        *value = std::max<int64_t>(1, sms * per_sm);
        return error;
      },
      blocks);
}

// Launches kernel<<<blocks, threads, shared_bytes, stream>>>(args...), and
// where `overlapped`, as a programmatic dependent launch: it may be scheduled
// while the kernel before it in the stream finishes, and waits for it
// (grid_dependency.cuh) before touching memory. Every kernel of the automatic
// choice launches this way (LaunchOverlapped), but the one-warp 32 x 32 tiles
// where their grid would stack unevenly behind the one before
// (OverlapsPriorGrid in launch_warp_tiled.cuh); the naive, tiled and
// register-blocked rungs launch plain. Measured on an H200
// against plain launches and C zeroed by cudaMemset2DAsync, which cannot
// overlap (ms, docs/benchmarks.md): 256^3 0.0082 against 0.0107, 512^3 0.0124
// against 0.0150, 1024^3 0.0558 against 0.0574, 1000x3000x777 0.1464 against
// 0.1510, 512x300x200 x 5 0.0197 against 0.0225; 4096^3 and 8192^3 0.1%
// behind (the zeroing kernel). Batches of small products and transposes,
// against plain launches: 8^3 x 4096 0.0054 against 0.0066, 16^3 x 4096
// 0.0061 against 0.0072, 32^3 x 4096 0.0180 against 0.0189, 17x31x29 x 4096
// 0.0175 against 0.0187, 1024 grouped up to 64 0.0286 against 0.0294;
// transposes 16x16 x 4096 0.0054 against 0.0063, 33x17 x 4096 0.0073 against
// 0.0086, 4096^2 0.0360 against 0.0366; nothing behind. Back to back (H100,
// session 31), four runs of one batch: 1-19% ahead but for 318^3 x 16 (0.0479
// against 0.0405) and 270x131x130 x 30 (0.0214 against 0.0189).
template <typename... Params, typename... Args>
cudaError_t Launch(bool overlapped, void (*kernel)(Params...), int64_t blocks,
                   int threads, int shared_bytes, cudaStream_t stream,
                   Args... args) {
  cudaLaunchAttribute overlap = {};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = overlapped;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(blocks));
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, kernel, static_cast<Params>(args)...);
}
// Launch(true, ...).
template <typename... Params, typename... Args>
cudaError_t LaunchOverlapped(void (*kernel)(Params...), int64_t blocks,
                             int threads, int shared_bytes, cudaStream_t stream,
                             Args... args) {
  return Launch(true, kernel, blocks, threads, shared_bytes, stream, args...);
}

// Warp-tiled shapes, from sweeps on an H200 (docs/benchmarks.md): 64 x 128
// block tiles of four 32 x 64 warp tiles, K steps of 16, four stages, three
// blocks per SM (asking for three in the launch bounds gave the same 168
// registers but a faster schedule than asking for two: 89% of cuBLAS at
// 4096^3 against 88%), A fragments read four K indices at a time (with the
// unchecked copies, 0.5-1.2 points ahead of two at 1024^3-8192^3: 4096^3
// split 3 92.1% against 91.1%); 128 x 64 where those pad C less. (128 x 128
// tiles of eight warps, at two to four stages, lost 5-11 points at 1024^3 to
// 4096^3 and 7-26 on batches as ptxas -O3 built them; at -O1 they lead where
// they fill the GPU's rounds of blocks better: WarpTiledBig below.)
// Batches of problems under 128 on a side (and larger ones whose C they pad
// less, TakesSmallTiles in kernels.cu) take 64 x 64 tiles of two warps, six
// blocks per SM, as many as their 168 registers allow (the launch bounds say
// so because the split rules count a GPU's slots from them; 64^3: 112% of
// cuBLAS's strided batch against 98% for the small-tile kernel); persistent
// blocks over one-tile problems, four per SM, need only two stages, since their
// copies run on into the next problem (2-4% ahead of four stages at 64^3, 48^3
// and 64x200x64).
using WarpTiledWide = WarpTiledShape<64, 128, 16, 32, 64, 4, 3, 4>;
using WarpTiledTall = WarpTiledShape<128, 64, 16, 64, 32, 4, 3, 4>;
using WarpTiledSmall = WarpTiledShape<64, 64, 16, 32, 64, 4, 6, 4>;
// The two-warp 64 x 64 tiles of a batch whose A is off 16 bytes, in three
// stages, copies all at once, rows on 8 bytes in pairs (kPairsOfA, kPairsOfB;
// SgemmWarpTiledAs in kernels.cu). Measured on an H200 against four stages in
// the same runs (ms, docs/benchmarks.md, session 61): 321^3 x 122 0.2532
// against 0.2721, 449^3 x 44 0.2401 against 0.2567, 577^3 x 50 0.5120 against
// 0.5324, 577x577x576 x 40 0.3724 against 0.3891, 321x321x320 x 122 0.2321
// against 0.2456, 577x301x576 x 40 0.2069 against 0.2174. With A on 16 bytes
// four stages kept their lead, though sass_loop.py's bank model favours three
// there too: 529x1500x529 x 25 0.5652 against 0.5952, 577x1000x577 x 40 0.6538
// against 0.6726, 576^3 x 50 0.4095 against 0.4237 (session 60).
using WarpTiledSmallOffLines = WarpTiledShape<64, 64, 16, 32, 64, 3, 6, 4>;
using WarpTiledOneTile = WarpTiledShape<64, 64, 16, 32, 64, 2, 4, 4>;
// Batches of problems 65 to 96 on a side take 96 x 96 tiles, one a problem
// (TakesMidTiles in kernels.cu): three 32 x 96 warp tiles, 8 x 12 of C
// a lane, K steps of 8 in three stages, four blocks per SM (164-168 registers,
// no spills in the loop: the copies work out their rows of A at each step,
// kFewRegisters in sgemm_warp_tiled.cuh; the 16-byte kernel of whole steps
// keeps the problem's index on an 8-byte stack, stored before the loop and
// loaded after it). Measured on an H100 (ms, docs/benchmarks.md,
// sessions 23 to 25): against two blocks per SM (195-226 registers), 70^3 x
// 2048 0.1121 against 0.1381, 96^3 x 1000 0.0656 against 0.0756, 72^3 x 2048
// 0.0961 against 0.1186; four with the rows held across the loop spilled up
// to 120 bytes and gained less (session 23: 0.1240 against 0.1379 and 0.0704
// against 0.0757); K steps of 16 in four stages, four per SM, spilled up to
// 232 and ran slower (0.1448). Three stages against six (session 25): 65^3 x
// 4096 0.1983 against 0.2102, 72^3 x 2048 0.0867 against 0.0954, 80^3 x 1000
// 0.0495 against 0.0554, 96^3 x 1000 0.0576 against 0.0652, 68^3 x 264 0.0175
// against 0.0193; with long K or near a round, within 1% (80x2000x80 x 120
// 0.1269 against 0.1257, 88x700x88 x 400 0.1634 against 0.1622); four stages
// in between (0.2010, 0.0901, 0.0514, 0.0595).
using WarpTiledMid = WarpTiledShape<96, 96, 8, 32, 96, 3, 4, 4, 3>;
// Batches of problems under 256 on a side take 32 x 32 tiles of one warp where
// those pad C less or spread wider (TakesTinyTiles in kernels.cu, which holds
// them to fewer batches where both operands lie on 16 bytes; cuBLAS's strided
// batch takes 32 x 32 tiles for 70^3 x 100 and 77^3 x 300): 8 x 4 of C a lane,
// K steps of 8 in three stages, sixteen blocks per SM (108-128 registers).
// Measured on an H100 against four stages (ms, docs/benchmarks.md, session 25,
// two calls): 150x151x150 x 250 0.0740 against 0.0783, 135x136x137 x 200 0.0580
// against 0.0600, 77^3 x 300 0.0270 against 0.0280, 70^3 x 100 0.0091 against
// 0.0094, 200x131x130 x 40 0.0229 against 0.0235; but one-tile problems,
// already 1.4-2.5 times as fast as cuBLAS's strided batch, lost 1-3% (50^3 x
// 100 0.0064 against 0.0062, 33x35x33 x 100 0.0056 against 0.0054), and so did
// 250x251x250 x 5 (0.0148 against 0.0146) and 90x1000x91 x 200 (0.1257 against
// 0.1245). Built at ptxas -O3 (sgemm_warp_tiled_o3.cu).
using WarpTiledTiny = WarpTiledShape<32, 32, 8, 32, 32, 3, 16, 4, 1>;
// Shape S with its main loop's steps unrolled by the ring's stages, a loop
// three times as long whose copies and stage offsets take fewer instructions
// a step (the one-warp 32 x 32 tiles' loop: 475 a step against 501, for 256
// FFMAs). For batches that give each SM blocks enough to hide the longer
// loop's instruction fetches (SgemmTinyTiles in kernels.cu). Unrolled in every
// warp-tiled shape, the others lost up to 43% (ms, docs/benchmarks.md,
// session 52: 256x1024x256 x 200 0.8107 against 0.5679, 401^3 x 10 0.0540
// against 0.0512).
template <typename S>
struct UnrolledSteps : S {
  static constexpr int kUnrolledSteps = S::kStages;
};
using WarpTiledTinyUnrolled = UnrolledSteps<WarpTiledTiny>;
// Batches with an operand element by element whose problems 64 x 64 tiles pad
// less than 32 x 32 ones (up to 127 on a side) or than 64-wide ones (up to
// 255), and batches on 16 bytes whose two-warp 64 x 64 blocks would fill two or
// three rounds, or come to four on an SM in one, take 64 x 64 tiles of four of
// those warps (TakesQuadTiles and FillsQuadTiles in kernels.cu; cuBLAS's
// strided batch takes 64 x 64 tiles of four warps for 97^3 x 1000, 113x127x109
// x 200 and 170x171x170 x 40): K steps of 8 in three stages, five blocks per SM
// (94-96 registers). Measured on an H100 (ms, docs/benchmarks.md, sessions 24
// and 25) against four stages, 113x127x109 x 200 0.0361 against 0.0405, 97^3 x
// 1000 0.1092 against 0.1122, 127^3 x 100 0.0244 against 0.0256, 101x1000x103 x
// 100 0.1034 against 0.1027; against four blocks per SM, 97^3 x 1000 0.1118
// against 0.1171, 120x121x120 x 300 0.0438 against 0.0479 (but 97^3 x 100
// 0.0207 against 0.0177); against K steps of 16 in four stages, 97^3 x 1000
// 0.1118 against 0.1170, and in three stages, four blocks per SM, mixed
// (session 25: 170x171x170 x 40 0.0237 against 0.0274, 97^3 x 1000 0.1149
// against 0.1092).
using WarpTiledQuad = WarpTiledShape<64, 64, 8, 32, 32, 3, 5, 4, 1>;
// The four-warp 64 x 64 tiles where the blocks that WarpTiledQuad plans
// (its splits of K included) take no more rounds at four per SM than at five,
// and at most three (SgemmQuadTiles in kernels.cu): K steps of 16 in three
// stages, four blocks per SM, so up to 128 registers a lane, built at ptxas
// -O3 (sgemm_warp_tiled_o3.cu). Measured on an H200 against WarpTiledQuad (ms,
// docs/benchmarks.md, session 27): in one round, 97^3 x 100 0.0173 against
// 0.0199, 127^3 x 100 0.0198 against 0.0241, 170x171x170 x 40 0.0231 against
// 0.0272, 180x180x181 x 50 0.0255 against 0.0298 (but 190x191x190 x 30 0.0244
// against 0.0234); in two, 113x127x109 x 200 0.0327 against 0.0355, 190x191x190
// x 100 0.0453 against 0.0505, on 16 bytes 192^3 x 100 0.0426 against 0.0486;
// in three, 170x171x170 x 150 0.0632 against 0.0657. Where they took more
// rounds they lost: 97^3 x 150 0.0246 against 0.0217 (two against one),
// 120x121x120 x 300 0.0461 against 0.0433 (three against two). K steps of 8
// gained less in one round (0.0174, 0.0213, 0.0246, 0.0274), and so did both
// at -O1.
using WarpTiledQuadFew = WarpTiledShape<64, 64, 16, 32, 32, 3, 4, 4, 1>;
// Shape S with K steps of 32 in a ring of two stages: half the barriers per
// multiply-add, for blocks whose part of K is long (kLongStepsK in kernels.cu)
// and for one-tile problems whose K pads no further to them than to steps of
// 16 (SgemmWarpTiledSmall). The same tiles and blocks per SM, so the same
// rounds and splits.
template <typename S>
using LongSteps =
    WarpTiledShape<S::kBlockM, S::kBlockN, 32, S::kWarpM, S::kWarpN, 2,
                   S::kMinBlocksPerSm, S::kFragK, S::kRunsN>;
// Products whose 64-wide tiles would fill the GPU's rounds of blocks badly
// take 128 x 128 tiles of eight 32 x 64 warp tiles where those fill them
// (TakesBigTiles in kernels.cu): two blocks per SM, 128 registers, K steps of
// 32 in two stages. Measured on an H200 against
// steps of 16 in four stages (ms): 2048^3 0.3596 against 0.3654,
// 4096x1024x4096 0.7123 against 0.7263, 4096x64x4096 0.0615 against 0.0626,
// batches 512^3 x 64 0.3670 against 0.3730, 256^3 x 256 0.1959 against
// 0.1984; 2000^3 0.3660 against 0.3648. Three stages, or A fragments two K
// indices wide, measured within 0.4%.
using WarpTiledBig = LongSteps<WarpTiledShape<128, 128, 16, 32, 64, 4, 2, 4>>;
// The same tiles one block to an SM, for products whose 128 x 128 tiles number
// at most one per SM (TakesBigTiles). Held to two blocks per SM,
// the 128 x 128 kernel gets 128 registers, and ptxas lays out its loop with
// 31% of the FFMAs reading two registers of one bank (sm_90 SASS,
// tools/sass_loop.py); with one block it takes 158 and 9%. Nsight Compute on
// an H100 at 512^3 x 64: dispatch stalls 0.38 per issued instruction against
// 0.14 for the 64 x 128 kernel at 4096^3, issue slots 82% busy against 88%.
// Where they number at most one per SM, one block gained 4-6% (ms, H100,
// docs/benchmarks.md, session 19: 480^3 x 7 0.0510 against 0.0537). Where the
// tiles fill two blocks per SM, one block lost: 512^3 x 64 0.3902 against
// 0.3657, 2048^3 0.3718 against 0.3581, 256^3 x 256 0.2131 against 0.1964.
// Its lanes' registers to spare hold fragments read ahead (kReadAhead in
// sgemm_warp_tiled.cuh), and so do WarpTiledBig's where it copies in bulk.
using WarpTiledBigAlone =
    LongSteps<WarpTiledShape<128, 128, 16, 32, 64, 4, 1, 4>>;
// The shapes whose warp-tiled kernels copy B's rows that start on 8 bytes (but
// not 16) in 8-byte pairs rather than element by element, and the shapes that
// copy A's so: all but the two-warp 64 x 64 tiles, and for A also not the
// 32 x 32 warp tiles but in the four-warp 64 x 64 tiles' K steps of 16.
// Measured on an H100 against element by element (ms, docs/benchmarks.md,
// session 30), two-warp 64 x 64 tiles: 302^3 x 28 0.0634 against 0.0616 (B
// alone in pairs 0.0629), 300 x 302 x 302 x 30 0.0645 against 0.0622, 298^3 x
// 30 0.0644 against 0.0620; one-warp 32 x 32 warp tiles both in pairs against B
// alone: 120 x 122 x 118 x 200 0.0361 against 0.0318, 150^3 x 100 0.0386
// against 0.0360, 98^3 x 150 0.0215 against 0.0208, but 130 x 530 x 138 x 600
// 0.5131 against 0.5227. The four-warp 64 x 64 tiles in K steps of 16
// (WarpTiledQuadFew), A in pairs against element by element, measured on an
// H200 (ms, docs/benchmarks.md, session 54): 318^3 x 16 0.0379 against 0.0389,
// 318 x 318 x 319 x 16 0.0388 against 0.0396, 170^3 x 40 0.0217 against 0.0221,
// x 150 0.0603 against 0.0612, 450^3 x 5 0.0421 against 0.0428, 450 x 450 x 451
// x 5 0.0428 against 0.0436, 401 x 450 x 401 x 10 0.0550 against 0.0561. In K
// steps of 8 (WarpTiledQuad), where ptxas laid out the unchecked loops with
// 59% of their FFMAs reading two registers of one bank against 14%
// (tools/sass_loop.py), they lost: 98^3 x 1000 0.1139 against 0.1070, 122^3
// x 300 0.0476 against 0.0452.
template <typename S>
constexpr bool kPairsOfB = !std::is_same_v<S, WarpTiledSmall>;
template <typename S>
constexpr bool kPairsOfA = (kPairsOfB<S> &&
                            !(S::kWarpM == 32 && S::kWarpN == 32)) ||
                           std::is_same_v<S, WarpTiledQuadFew>;
// The shapes whose warp-tiled kernels, with A element by element in rows an
// odd number of elements apart, copy every other row in pairs
// (kAlternatePairs in sgemm_warp_tiled.cuh, where the measurements are); two
// to an SM, only with B element by element too.
template <typename S>
constexpr bool kAlternatePairsOf =
    std::is_same_v<S, WarpTiledBigAlone> || std::is_same_v<S, WarpTiledBig>;
// The shapes that always run with K whole, whose split-K kernels are not
// built.
template <typename S>
constexpr bool kWholeK =
    std::is_same_v<S, WarpTiledBig> || std::is_same_v<S, WarpTiledBigAlone>;

// The shortest part of K (elements) whose split blocks add into rows of C
// that don't start on 16 bytes realigned (kRealignC in sgemm_warp_tiled.cuh)
// rather than computing C in padded rows to copy back, or adding four atomics
// to a run (SgemmWarpTiled in kernels.cu). Realigning costs each block a
// barrier, its tile staged through shared memory and the row's ends added one
// by one; padding, a pass over C. Measured on an H100 (ms,
// docs/benchmarks.md, session 33), realigned in kernels shared with C's
// 16-byte rows against padded C: from parts of 256, 1001^3 0.0614 against
// 0.0633, 511^3 x 6 0.0507 against 0.0544, 511^3 x 30 (the last 6 split)
// 0.2056 against 0.2137, 701^3 x 3 0.0639 against 0.0661; in shorter parts it
// lost up to 9% (767^3, parts of 96: 0.0425 against 0.0391; 1151^3, 192:
// 0.0984 against 0.0909). In kernels of their own, from parts of 256:
// 510x511x510 x 6 0.0469 against 0.0533, 511^3 x 6 0.0521 against 0.0545,
// 511^3 x 30 0.2067 against 0.2134, 1001^3 0.0624 against 0.0630.
inline constexpr int64_t kMinRealignedK = 256;

// Whether blocks of shape S can run p's K steps unchecked where A's or B's
// rows are off 16 bytes: the last tile row and column move inward to end at
// the matrix's edges (kShiftEdges in sgemm_warp_tiled.cuh), so a tile must
// fit inside it.
template <typename S>
bool UncheckedSteps(const Batch& p) {
  return p.m >= S::kBlockM && p.n >= S::kBlockN;
}

// Whether blocks of shape S two to an SM copy every other row of both A and B
// in pairs over p (kAlternatePairs in sgemm_warp_tiled.cuh, as offsets:
// AlternateRowOffsets): in unchecked steps, both operands element by element
// in rows an odd number of elements apart, and a block's piece of each
// spanning under 2^31 elements.
template <typename S>
bool AlternatesBothOperands(const Batch& p) {
  return UncheckedSteps<S>(p) && p.WidthA() == 1 && p.WidthB() == 1 &&
         p.lda % 2 != 0 && p.ldb % 2 != 0 && p.lda <= INT_MAX / S::kBlockM &&
         p.ldb <= INT_MAX / S::kBlockK;
}

// Whether the split blocks of shape S, in parts of k_per_split of K, add into
// C's rows off 16 bytes realigned (LaunchWarpTiled): in unchecked steps, from
// kMinRealignedK.
template <typename S>
bool AddsRealigned(const Batch& p, int64_t k_per_split) {
  return UncheckedSteps<S>(p) && k_per_split >= kMinRealignedK;
}

// Launches the warp-tiled kernel of shape S over the batch p: tiles_m x
// tiles_n tiles of each problem, K in `splits` parts of k_per_split (a
// multiple of S::kBlockK; with kSplitK, C holds zeros or partial sums), 16-byte
// copies wherever p's rows allow them (bulk tensor copies where they start on
// 16 bytes but not all on 128-byte lines, and for the 128 x 128 tiles).
// kPersistent: no more blocks than the GPU holds at once, each taking problem
// after problem (one tile each, K unsplit). Defined in launch_warp_tiled.cuh,
// instantiated for the shapes above in sgemm_warp_tiled.cu,
// sgemm_warp_tiled_wide.cu and sgemm_warp_tiled_o3.cu.
template <typename S, bool kSplitK, bool kPersistent = false>
cudaError_t LaunchWarpTiled(const Batch& p, int64_t tiles_m, int64_t tiles_n,
                            int64_t splits, int64_t k_per_split,
                            cudaStream_t stream);

// Launches the grouped warp-tiled kernel of shape S (kGrouped in
// sgemm_warp_tiled.cuh) over the device table `entries` of `count` problems in
// `blocks` blocks, copying pieces of `width` elements (4, 2 or 1; every
// problem's rows must allow them; 16-byte pieces in unchecked steps).
// Defined in launch_warp_tiled.cuh, instantiated in sgemm_warp_tiled_wide.cu.
template <typename S>
cudaError_t LaunchWarpTiledGrouped(const GroupedGemmEntry* entries,
                                   int64_t count, int64_t blocks, int width,
                                   cudaStream_t stream);

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_LAUNCH_H_
