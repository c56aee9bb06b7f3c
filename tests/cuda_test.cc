// GPU tests (label gpu): the kernels and the CUDA executors against the float64
// reference on odd shapes. Skipped, with a message, where no CUDA device is
// visible.
#include <cuda_runtime.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "client/reference.h"
#include "kernels/bench/random_side.h"
#include "kernels/kernels.h"
#include "server/engine/cuda_executor.h"
#include "tests/executor_util.h"
#include "tests/test_util.h"

namespace matserve {
namespace {

using matserve::testing::RunOne;
using matserve::testing::Shape;

#define ASSERT_CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

// Every GPU test derives from this: SetUp skips it, with a message, where no
// device is visible.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      GTEST_SKIP() << "no CUDA device visible: GPU test not run";
    }
  }
};

// A device copy of a host vector; poisoned with NaN (all bits set) when made
// from a size.
class DeviceVector {
 public:
  explicit DeviceVector(const std::vector<float>& host) : size_(host.size()) {
    EXPECT_EQ(cudaMalloc(&data_, bytes()), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  explicit DeviceVector(size_t size) : size_(size) {
    EXPECT_EQ(cudaMalloc(&data_, bytes()), cudaSuccess);
    EXPECT_EQ(cudaMemset(data_, 0xff, bytes()), cudaSuccess);
  }
  ~DeviceVector() { cudaFree(data_); }
  float* get() const { return data_; }
  std::vector<float> ToHost() const {
    std::vector<float> host(size_);
    EXPECT_EQ(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return host;
  }

 private:
  size_t bytes() const { return size_ * sizeof(float); }
  float* data_ = nullptr;
  size_t size_;
};

class GpuSgemm : public GpuTest,
                 public ::testing::WithParamInterface<
                     std::tuple<kernels::SgemmVariant, Shape>> {};

TEST_P(GpuSgemm, MatchesFloat64Reference) {
  const auto [variant, s] = GetParam();
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix a = RandomMatrix(s.m, s.k, rng);
  const Matrix b = RandomMatrix(s.k, s.n, rng);
  DeviceVector da(a.values), db(b.values), dc(uint64_t{s.m} * s.n);
  ASSERT_CUDA_OK(kernels::Sgemm(s.m, s.n, s.k, da.get(), db.get(), dc.get(),
                                nullptr, variant));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  matserve::testing::ExpectMatchesReference(dc.ToHost(),
                                            ReferenceMultiply(a, b));
}

// Every variant and the automatic choice, on the odd shapes and on shapes that
// take the 16-byte paths (K and N multiples of 4) with ragged edges. In the
// warp-tiled kernel these split K across blocks: 129x132x260 and 64x2052x68
// (16-byte copies of A and B), 96x131x132 (of B only), 513x1025x257 and
// 70x1027x33 (neither); 2049x3x2051 takes element-wise copies unsplit. From
// 2^31 multiply-adds it copies an operand whose rows don't start on 16 bytes
// into padded rows first, and C too where K is split and C's rows don't
// start on 16 bytes: A for 512x8195x520, B and C for 1000x3000x777 and
// 1100x4000x527, all three for 1539x1537x1541 (all three split K; 513
// multiply-adds per element copied, just over the rule's 512). Where K
// splits, the 9, 15 and 5 columns past their last whole 64 run as a strip, and
// so do, unpadded, the 4 of 1001x1000x772 (M not a multiple of the strip's 16
// rows), the 9 of 1000x1000x777 (B's rows not on 16 bytes: 4-byte copies) and
// the 4 of 1000x999x772 (A's rows not on 16 bytes). 2048x40x2048 takes 128 x
// 128 tiles (one round of them on a GPU of 132 SMs), and 1000x300x2000 takes
// them one block to an SM (128 tiles, a K remainder, edges both ways). Rows of
// C that start on 16 bytes and rows that don't, and so both kinds of access to
// C, come with 513x1025x257 (split, unpadded: atomics) and 2049x3x2051
// (stores).
INSTANTIATE_TEST_SUITE_P(
    Variants, GpuSgemm,
    ::testing::Combine(
        ::testing::Values(kernels::SgemmVariant::kAuto,
                          kernels::SgemmVariant::kNaive,
                          kernels::SgemmVariant::kTiled,
                          kernels::SgemmVariant::kRegisterBlocked,
                          kernels::SgemmVariant::kWarpTiled),
        ::testing::ValuesIn([] {
          std::vector<Shape> shapes = matserve::testing::OddShapes();
          shapes.insert(shapes.end(), {{129, 132, 260},
                                       {300, 8, 4},
                                       {1, 4, 4},
                                       {64, 2052, 68},
                                       {70, 1027, 33},
                                       {96, 131, 132},
                                       {2049, 3, 2051},
                                       {512, 8195, 520},
                                       {1539, 1537, 1541},
                                       {1100, 4000, 527},
                                       {1001, 1000, 772},
                                       {1000, 1000, 777},
                                       {1000, 999, 772},
                                       {2048, 40, 2048},
                                       {1000, 300, 2000}});
          return shapes;
        }())),
    [](const auto& info) {
      return std::string(kernels::SgemmVariantName(std::get<0>(info.param))) +
             "_" + ShapeName(std::get<1>(info.param));
    });

constexpr kernels::TransposeVariant kTransposeVariantsAndAuto[] = {
    kernels::TransposeVariant::kAuto, kernels::TransposeVariant::kTiled,
    kernels::TransposeVariant::kWide, kernels::TransposeVariant::kLargeTile,
    kernels::TransposeVariant::kPacked};

class GpuTranspose : public GpuTest,
                     public ::testing::WithParamInterface<
                         std::tuple<kernels::TransposeVariant, Shape>> {};

TEST_P(GpuTranspose, IsBitExact) {
  const auto [variant, s] = GetParam();  // transposes an m x n input
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix input =
      matserve::testing::MatrixWithSpecialValues(s.m, s.n, rng);
  DeviceVector din(input.values), dout(input.values.size());
  ASSERT_CUDA_OK(
      kernels::Transpose(s.m, s.n, din.get(), dout.get(), nullptr, variant));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  matserve::testing::ExpectExactTranspose(input, dout.ToHost());
}

// Vectors both ways (a copy under kAuto), shapes whose sizes are multiples of
// 4 (the 16-byte paths) with ragged 32- and 64-tiles, sides one short of and
// one past a tile, primes, one matrix small enough for the packed kernel, and
// the odd shapes' m x n, each once.
std::vector<Shape> TransposeShapes() {
  std::vector<Shape> shapes = {{1, 0, 4097}, {4097, 0, 1},  {68, 0, 132},
                               {4, 0, 260},  {260, 0, 4},   {63, 0, 65},
                               {65, 0, 63},  {128, 0, 192}, {2, 0, 3},
                               {61, 0, 59},  {1021, 0, 67}, {67, 0, 1021},
                               {16, 0, 16},  {1000, 0, 3},  {4093, 0, 4099}};
  for (const Shape& s : matserve::testing::OddShapes()) {
    if (std::none_of(shapes.begin(), shapes.end(), [&](const Shape& t) {
          return t.m == s.m && t.n == s.n;
        })) {
      shapes.push_back(s);
    }
  }
  return shapes;
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GpuTranspose,
    ::testing::Combine(::testing::ValuesIn(kTransposeVariantsAndAuto),
                       ::testing::ValuesIn(TransposeShapes())),
    [](const auto& info) {
      const Shape& s = std::get<1>(info.param);
      return std::string(
                 kernels::TransposeVariantName(std::get<0>(info.param))) +
             "_" + std::to_string(s.m) + "x" + std::to_string(s.n);
    });

// A strided batch: `count` problems `gap` elements apart beyond their size (a
// gap of 1 makes 16-byte accesses illegal and must not be written).
struct BatchCase {
  Shape shape;
  uint32_t count;
  uint32_t gap;
};
std::ostream& operator<<(std::ostream& os, const BatchCase& c) {
  return os << ShapeName(c.shape) << "/" << c.count << "+" << c.gap;
}
std::string BatchCaseName(const BatchCase& c) {
  return ShapeName(c.shape) + "_x" + std::to_string(c.count) + "_gap" +
         std::to_string(c.gap);
}
// The name of a GpuBatchedSgemm instance: its batch case.
std::string BatchTestName(const ::testing::TestParamInfo<BatchCase>& info) {
  return BatchCaseName(info.param);
}

// The matrices of a strided batch in one host vector, `stride` elements
// apart; the gaps hold NaN.
std::vector<float> Pack(const std::vector<Matrix>& matrices, uint64_t stride) {
  std::vector<float> packed(matrices.size() * stride, NAN);
  for (size_t i = 0; i < matrices.size(); ++i) {
    std::copy(matrices[i].values.begin(), matrices[i].values.end(),
              packed.begin() + i * stride);
  }
  return packed;
}

// Fails unless every element of `packed` past the first `size` of each
// `stride` still has the poison's bits (all ones).
void ExpectGapsUnwritten(const std::vector<float>& packed, uint64_t size,
                         uint64_t stride) {
  for (uint64_t i = 0; i < packed.size(); ++i) {
    if (i % stride < size) continue;
    uint32_t bits;
    std::memcpy(&bits, &packed[i], 4);
    ASSERT_EQ(bits, 0xFFFFFFFFu) << "element " << i << " of a gap was written";
  }
}

// Fails unless `packed` holds the transpose of inputs[i] at i * stride (each
// `size` elements) and nothing was written between them.
void ExpectTransposesPacked(const std::vector<Matrix>& inputs,
                            const std::vector<float>& packed, uint64_t size,
                            uint64_t stride) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE("matrix " + std::to_string(i));
    matserve::testing::ExpectExactTranspose(
        inputs[i],
        {packed.begin() + i * stride, packed.begin() + i * stride + size});
  }
  ExpectGapsUnwritten(packed, size, stride);
}

// Fails unless `c` holds as[i] * bs[i] (size_c elements) at i * stride_c for
// every i.
void ExpectProductsMatch(const std::vector<float>& c,
                         const std::vector<Matrix>& as,
                         const std::vector<Matrix>& bs, uint64_t size_c,
                         uint64_t stride_c) {
  for (size_t i = 0; i < as.size(); ++i) {
    SCOPED_TRACE("product " + std::to_string(i));
    matserve::testing::ExpectMatchesReference(
        {c.begin() + i * stride_c, c.begin() + i * stride_c + size_c},
        ReferenceMultiply(as[i], bs[i]));
  }
}

class GpuBatchedSgemm : public GpuTest,
                        public ::testing::WithParamInterface<BatchCase> {};

// `packed` with `offset` NaNs before it: matrices that many elements past the
// start of their allocation.
std::vector<float> Shifted(uint64_t offset, std::vector<float> packed) {
  packed.insert(packed.begin(), offset, NAN);
  return packed;
}

// Fails unless SgemmStridedBatched on `count` random problems of shape s,
// `gap` elements apart, with A, B and C off_a, off_b and off_c elements past
// the start of their allocations, matches the float64 reference in every
// product and writes nothing outside C.
void ExpectBatchMatches(
    const Shape& s, uint32_t count, uint32_t gap, uint64_t off_a,
    uint64_t off_b, uint64_t off_c, std::mt19937_64& rng,
    kernels::BatchTiles tiles = kernels::BatchTiles::kAuto) {
  std::vector<Matrix> as, bs;
  for (uint32_t i = 0; i < count; ++i) {
    as.push_back(RandomMatrix(s.m, s.k, rng));
    bs.push_back(RandomMatrix(s.k, s.n, rng));
  }
  const uint64_t size_c = uint64_t{s.m} * s.n;
  const uint64_t stride_a = uint64_t{s.m} * s.k + gap;
  const uint64_t stride_b = uint64_t{s.k} * s.n + gap;
  const uint64_t stride_c = size_c + gap;
  DeviceVector da(Shifted(off_a, Pack(as, stride_a))),
      db(Shifted(off_b, Pack(bs, stride_b))), dc(off_c + count * stride_c);
  ASSERT_CUDA_OK(kernels::SgemmStridedBatched(
      s.m, s.n, s.k, da.get() + off_a, stride_a, db.get() + off_b, stride_b,
      dc.get() + off_c, stride_c, count, nullptr, tiles));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> c = dc.ToHost();
  ExpectGapsUnwritten({c.begin(), c.begin() + off_c}, 0, 1);
  c.erase(c.begin(), c.begin() + off_c);
  ExpectProductsMatch(c, as, bs, size_c, stride_c);
  ExpectGapsUnwritten(c, size_c, stride_c);
}

TEST_P(GpuBatchedSgemm, EveryProductMatchesTheReference) {
  const auto [s, count, gap] = GetParam();
  std::mt19937_64 rng = matserve::testing::FreshRng();
  ExpectBatchMatches(s, count, gap, 0, 0, 0, rng);
}

// Each size class of the launcher (four problems per block up to 16, a warp
// per problem up to 32, 64 x 64 tiles below 128, larger warp tiles from there
// unless 64 x 64 ones pad C less, 32 x 32 tiles for few problems element by
// element), with batches that leave a block part empty, on both the 16-byte
// and the element-wise paths.
INSTANTIATE_TEST_SUITE_P(SizeClasses, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{1, 1, 1}, 5, 0},
                                           BatchCase{{16, 16, 16}, 9, 0},
                                           BatchCase{{17, 31, 29}, 7, 1},
                                           BatchCase{{32, 32, 32}, 5, 0},
                                           BatchCase{{3, 1000, 5}, 6, 1},
                                           BatchCase{{33, 1, 65}, 3, 0},
                                           BatchCase{{64, 64, 64}, 6, 0},
                                           BatchCase{{100, 37, 129}, 3, 1},
                                           BatchCase{{128, 128, 128}, 2, 0},
                                           BatchCase{{130, 7, 500}, 2, 1},
                                           BatchCase{{256, 260, 132}, 3, 0}),
                         BatchTestName);

// Batches whose last round of blocks is mostly empty split K: on an H200, all
// of 5 problems of 512 x 300 x 200 (K split in 4, the last split a
// remainder), and the last 3 of 52 problems of 256^3 after 49 unsplit. So do
// all problems of a batch that fills its one round under three quarters, in
// parts of at least 256 of K: 13 of 500 x 772 x 252 (K split in 3, the last
// part shorter). Where C's rows are off 16 bytes, the split adds into C
// realigned through shared memory, row by row, in parts of K from 256: all of
// 3 problems of 511 x 1023 x 511 (rows 3 mod 4 elements long; the tiles also
// move by a row and a column; K in 4 parts, the last one shorter) and of 510 x
// 1023 x 510 (2 mod 4, B in pairs), and the last 6 of 30 problems of 511^3
// after 24 unsplit (before ModeledBatchTiles, which now gives them 128 x 128
// tiles); in shorter parts, into C in padded rows, copied back: 3 of
// 450 x 451 x 450 (K in 4 parts of 128). (With more problems such batches
// take four-warp 64 x 64 tiles and K whole: QuadTilesWholeK.) Where a
// split batch's last 5 to 16 columns lie past a multiple of 64, they run as a
// strip beside the rest: 2 of 1024 x 1024 x 1032 (whose 1024s then take 128 x
// 128 tiles, K whole), and 2 of 836^3 (beside 128 x 64 tiles, K split in 2,
// where a split count that fills the rounds took 11). In K steps of 16, a
// split tail runs beside the whole problems' last blocks, waiting for them at
// its end (kOverlappedTail), as the plan on an H200 goes: the last of 860 x
// 264 x 756 x 5 (64 x 128 tiles, K in 4; also run with a gap between the
// problems, which ModeledBatchTiles now gives 128 x 128 tiles) and of 330 x 356
// x 512 x 17 (K in 5), and the last 2 of 325 x 684 x 552 x 16 (128 x 64 tiles,
// K in 7). The last 2 of 450^3 x 66's whole 448s (two-warp 64 x 64 tiles, K in
// 6) split after the whole problems (A's rows lie off 16 bytes, and those
// tiles run in three stages), then its strips.
INSTANTIATE_TEST_SUITE_P(
    SplitTails, GpuBatchedSgemm,
    ::testing::Values(
        BatchCase{{512, 300, 200}, 5, 0}, BatchCase{{256, 256, 256}, 52, 0},
        BatchCase{{500, 772, 252}, 13, 0}, BatchCase{{511, 1023, 511}, 3, 0},
        BatchCase{{510, 1023, 510}, 3, 0}, BatchCase{{450, 451, 450}, 3, 0},
        BatchCase{{511, 511, 511}, 30, 0}, BatchCase{{1024, 1024, 1032}, 2, 0},
        BatchCase{{836, 836, 836}, 2, 0}, BatchCase{{860, 264, 756}, 5, 0},
        BatchCase{{860, 264, 756}, 5, 1}, BatchCase{{330, 356, 512}, 17, 0},
        BatchCase{{325, 684, 552}, 16, 0}, BatchCase{{450, 450, 450}, 66, 0}),
    BatchTestName);

// Off 16 bytes, K steps run unchecked where a problem is at least a block tile
// on each side: the last tile row and column move inward to end at the
// matrix's edges and store only what the tiles before them do not. Moved by
// 127 rows and 63 columns (1153 x 250 x 257 x 2, A in 8-byte pairs) and by
// 54 rows and 2 columns (330 x 131 x 190, B in pairs), the other operand
// element by element, in 128 x 64 tiles; only A element by element (in 128 x
// 128 tiles one to an SM, the last tile column moved by 124, a multiple of 4,
// so C's 16-byte runs stay whole) or only B, in pairs (in those tiles too);
// and problems exactly a tile high (64 x 64 tiles), both element by element.
// One side is at least 256, and 32 x 32 tiles would pad C at least 0.83 as
// much as the 64-wide ones (or the problems are 1153 high), so that they
// don't take them. (The kernels as Nsight Compute listed them on an H100,
// session 30, with 513 x 250 x 257 x 3 in place of 1153 x 250 x 257 x 2,
// which 32 x 32 tiles now take. Moved tiles that split K and add into C
// element by element: 257^3 x 3 in TinyTiles.)
INSTANTIATE_TEST_SUITE_P(MovedEdges, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{1153, 250, 257}, 2, 0},
                                           BatchCase{{330, 131, 190}, 30, 0},
                                           BatchCase{{250, 129, 260}, 20, 0},
                                           BatchCase{{260, 132, 250}, 20, 0},
                                           BatchCase{{64, 129, 256}, 50, 1}),
                         BatchTestName);

// Large batches whose rows are off 16 bytes copy them into padded rows first,
// as one matrix of all the problems: in 64-wide tiles, where that is at most
// one element copied per 1500 multiply-adds (A, K 1023, of 8 problems with N
// 2048); and before any rule picks tiles, where both A and B are off 16
// bytes, from 2^32 multiply-adds and 512 per element copied, where the
// batch as it is lies outside ModeledBatchTiles' range (4 of 1153 x 1001 x
// 1155: 5.33e9 and 577; the whole 64s then apart from their edges). In 2
// of 1537^3 the whole 64s (1536 x 1536) split K and compute C in padded rows,
// copied back to problems 1537 rows apart, not the 1536 they hold (until
// session 58 every problem after the first came back a row off); with a gap
// between the problems nothing pads, and the whole 64s split K into C element
// by element (Nsight Compute's kernel lists on an H200, session 58).
INSTANTIATE_TEST_SUITE_P(PaddedRows, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{136, 1023, 2048}, 8, 0},
                                           BatchCase{{1153, 1001, 1155}, 4, 0},
                                           BatchCase{{1537, 1537, 1537}, 2, 0},
                                           BatchCase{{1537, 1537, 1537}, 2, 1}),
                         BatchTestName);

// Fails unless a random batch matches the reference in `tiles`: sides of
// every kind RandomSide draws up to 64 * max_tiles + 16, a count that keeps
// its multiply-adds near max_macs, problems a random gap apart and operands a
// random offset past the start of their allocations.
void ExpectRandomBatchMatches(std::mt19937_64& rng, int64_t max_tiles,
                              double max_macs, kernels::BatchTiles tiles) {
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  auto side = [&rng, max_tiles] {
    return static_cast<uint32_t>(
        matserve::kernels::bench::RandomSide(rng, max_tiles));
  };
  const Shape s{side(), side(), side()};
  const double macs = static_cast<double>(s.m) * s.k * s.n;
  const uint32_t count = static_cast<uint32_t>(std::clamp<double>(
      std::floor(max_macs / macs), 1, static_cast<double>(uniform(1, 8))));
  const uint32_t gap = uniform(0, 1) == 0 ? 0 : uniform(1, 5);
  const uint64_t off_a = uniform(0, 3), off_b = uniform(0, 3),
                 off_c = uniform(0, 3);
  SCOPED_TRACE(ShapeName(s) + " x " + std::to_string(count) + ", gap " +
               std::to_string(gap) + ", offsets " + std::to_string(off_a) +
               " " + std::to_string(off_b) + " " + std::to_string(off_c));
  ExpectBatchMatches(s, count, gap, off_a, off_b, off_c, rng, tiles);
}

// Random strided batches, fresh each run (the seed is printed): sides as the
// fuzzer draws them (RandomSide), up to 1616; 1 to 8 problems, up to 5e9
// multiply-adds (so that some pad both operands at the top); with or without
// gaps between the problems; A, B and C 0 to 3 elements past their allocations,
// so rows start on 16, 8 or 4 bytes. Every product against the float64
// reference, nothing written outside C. (In session 58 the bench, not a test,
// showed 1537^3 x 2 a row off in every problem after the first: no test had
// drawn such a batch.)
TEST_F(GpuTest, RandomBatchesMatchTheReference) {
  constexpr int kBatches = 12;
  std::mt19937_64 rng = matserve::testing::FreshRng();
  for (int t = 0; t < kBatches; ++t) {
    ExpectRandomBatchMatches(rng, 25, 5e9, kernels::BatchTiles::kAuto);
  }
}

// Each warp-tiled shape forced on whole random batches
// (matserve-kernel-bench --batched_tiles), also where the rules would never
// take it: every shape is boundary-safe at any size.
TEST_F(GpuTest, ForcedBatchTilesMatchTheReference) {
  constexpr int kBatchesEach = 2;
  std::mt19937_64 rng = matserve::testing::FreshRng();
  for (kernels::BatchTiles tiles : kernels::kBatchTiles) {
    SCOPED_TRACE(kernels::BatchTilesName(tiles));
    for (int t = 0; t < kBatchesEach; ++t) {
      ExpectRandomBatchMatches(rng, 10, 1e9, tiles);
    }
  }
}

// Each warp-tiled shape forced on batches whose edges the rules cut into
// strips (M 2 past a multiple of 64 and N 1 and 3 past; their whole 64s fill
// a round of 128 x 128 tiles on an H200's 132 SMs): the shape takes the whole
// 64s, the strips the rest of C.
TEST_F(GpuTest, ForcedBatchTilesOnCutEdgesMatchTheReference) {
  std::mt19937_64 rng = matserve::testing::FreshRng();
  for (kernels::BatchTiles tiles : kernels::kBatchTiles) {
    SCOPED_TRACE(kernels::BatchTilesName(tiles));
    ExpectBatchMatches({130, 67, 129}, 100, 0, 0, 0, 0, rng, tiles);
    ExpectBatchMatches({258, 131, 323}, 17, 5, 0, 0, 0, rng, tiles);
  }
}

// One-tile problems (up to 64 x 64) not all on 16 bytes stream through
// persistent blocks: more problems than an H200 holds blocks (528), so blocks
// take several, with 16-byte copies of A only, and element-wise with a
// remainder (K 36 and 200, steps of 16). (Batches on 16 bytes take the staged
// kernel below, and only where it cannot, the unchecked 16-byte path:
// BatchSharingOneAMatchesTheReference.)
INSTANTIATE_TEST_SUITE_P(Persistent, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{40, 36, 50}, 700, 0},
                                           BatchCase{{45, 200, 61}, 1100, 1}),
                         BatchTestName);

// One-tile problems whose rows all start on 16 bytes go to the staged kernel
// (a producer thread's tensor copies, pairs of warps computing): more
// problems than an H200 has SMs, so blocks take several and their pairs
// several each; K of several slabs of 32 with a remainder (200, 100), of
// whole slabs only (128, 64) and of one short slab (4); N of 64 and under
// (zeros past N); M of 8 (a single row per lane); and problems 4 elements
// apart beyond their size.
INSTANTIATE_TEST_SUITE_P(Staged, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{64, 200, 64}, 1000, 0},
                                           BatchCase{{60, 100, 20}, 900, 0},
                                           BatchCase{{8, 4, 64}, 600, 0},
                                           BatchCase{{36, 128, 36}, 800, 4},
                                           BatchCase{{64, 64, 64}, 300, 4}),
                         BatchTestName);

// One A for every problem (stride 0): the driver cannot describe such a batch
// as a tensor, so one-tile problems on 16 bytes take the persistent
// warp-tiled blocks' unchecked 16-byte path instead of the staged kernel.
TEST_F(GpuTest, BatchSharingOneAMatchesTheReference) {
  constexpr uint32_t kCount = 1300;
  const Shape s = {64, 60, 48};
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix a = RandomMatrix(s.m, s.k, rng);
  std::vector<Matrix> bs;
  for (uint32_t i = 0; i < kCount; ++i) {
    bs.push_back(RandomMatrix(s.k, s.n, rng));
  }
  const uint64_t size_b = uint64_t{s.k} * s.n, size_c = uint64_t{s.m} * s.n;
  DeviceVector da(a.values), db(Pack(bs, size_b)), dc(kCount * size_c);
  ASSERT_CUDA_OK(kernels::SgemmStridedBatched(s.m, s.n, s.k, da.get(), 0,
                                              db.get(), size_b, dc.get(),
                                              size_c, kCount, nullptr));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  ExpectProductsMatch(dc.ToHost(), std::vector<Matrix>(kCount, a), bs, size_c,
                      size_c);
}

// Batches whose 64-wide tiles would fill the GPU's rounds of blocks badly take
// 128 x 128 tiles where those fill them (on a GPU of 132 SMs, as the lent H100
// and H200: 260 of its 264 slots): on the unchecked 16-byte path with a K
// remainder, with 16-byte copies of A only (B's rows 250 long), and
// element-wise (gaps put every row off 16 bytes). So do batches whose 128 x
// 128 tiles number at most one per SM while their 64-wide ones number more and
// would run unsplit: 30 of 256^3 on the 16-byte path, and 20 of 380 x 300 x
// 250 with B's rows off 16 bytes, and 2 of 1001 x 101 x 1000 with A's element
// by element (C on 16 bytes: with C off them, and A element by element, such
// batches take four-warp 64 x 64 tiles, QuadTilesWholeK).
// Those run one block to an SM, their steps' copies interleaved with the step
// before (K of 21, the first step's remainder alone, and of 33, a remainder
// and one whole step), and so do batches whose 128 x 128 tiles fill
// one such round while their 64-wide ones would split K: 2 of 1000 x 800 x
// 1000 on the 16-byte path. On 16 bytes, batches whose 128 x 128 tiles pad C
// no more than the 64-wide ones and fill their rounds as well, from 1.75
// rounds, take them two to an SM (bulk copies): 120 of 256 x 64 x 256, and of
// 200 x 36 x 252 (edge tiles, a K remainder). Two to an SM off 16 bytes, in
// unchecked steps, the remainder step, which goes first, computes only the
// runs of 4 that hold K: 29 of 32 at 1001 x 1021 x 1003 x 4 (element by
// element), 26 at 1002 x 1018 x 1002 x 4 (in pairs); both take those tiles
// (Nsight Compute on an H200). Off 16 bytes, so do batches whose 64-wide tiles
// would split K for their last problems: 121 of 255 x 257 x 253, element by
// element. One to an SM with an operand in pairs and none element by element,
// a step's first fragments are read before the last K index of the step
// before: 2 of 1002 x 1010 x 1002 (both in pairs, a K remainder) and of 1000 x
// 1002 x 1000 (A alone).
INSTANTIATE_TEST_SUITE_P(
    BigTiles, GpuBatchedSgemm,
    ::testing::Values(
        BatchCase{{256, 100, 256}, 65, 0}, BatchCase{{256, 64, 256}, 120, 0},
        BatchCase{{200, 36, 252}, 120, 0}, BatchCase{{250, 100, 250}, 65, 0},
        BatchCase{{200, 33, 200}, 65, 1}, BatchCase{{256, 256, 256}, 30, 0},
        BatchCase{{380, 300, 250}, 20, 0}, BatchCase{{1000, 800, 1000}, 2, 0},
        BatchCase{{1001, 101, 1000}, 2, 0}, BatchCase{{1001, 21, 1000}, 2, 0},
        BatchCase{{1001, 33, 1000}, 2, 0}, BatchCase{{1001, 1021, 1003}, 4, 0},
        BatchCase{{1002, 1018, 1002}, 4, 0}, BatchCase{{255, 257, 253}, 121, 0},
        BatchCase{{1002, 1010, 1002}, 2, 0},
        BatchCase{{1000, 1002, 1000}, 2, 0}),
    BatchTestName);

// Batches whose rows start on 16 bytes but not all on 128-byte lines (K or N
// not a multiple of 32, or problems 4 elements apart beyond their size) take
// bulk tensor copies, which zero-fill past the matrices' edges: 64 x 64 tiles
// with a K remainder and edge tiles (K steps of 16 and a 64-byte swizzle,
// lane rows 4 apart), 128 x 64 tiles (lane rows 8 apart), and on a GPU of 132
// SMs, four rounds of blocks with K from 512 take K steps of 32 (a 128-byte
// swizzle) in 64 x 128 tiles (1680 of them) and 128 x 64 ones (1620). A
// block's last step, short of a whole one, computes only the K it holds in
// the 128 x 128 tiles one to an SM: 4 of 32 at 1000 x 996 x 1000, and at 1000 x
// 12 x 1000 that step is the block's only one. (Split K and 128 x 128 tiles on
// bulk copies: SplitTails and BigTiles.)
INSTANTIATE_TEST_SUITE_P(BulkCopies, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{100, 36, 44}, 3, 4},
                                           BatchCase{{256, 100, 192}, 10, 4},
                                           BatchCase{{136, 516, 128}, 560, 0},
                                           BatchCase{{128, 516, 192}, 540, 0},
                                           BatchCase{{1000, 996, 1000}, 2, 0},
                                           BatchCase{{1000, 12, 1000}, 2, 0}),
                         BatchTestName);

// A batch of problems that follow one another, rows off 16 bytes: the rows a
// copy reads past a problem's K are the next problem's, and must not reach its
// products, not even as zero times an infinity (a kernel that stacked the
// problems as one matrix would read them: session 29's bulk copies by phases,
// measured and not kept). Every problem's B holds an infinity and a
// NaN in its first two rows and its A an infinity in its first row; K of 301,
// a prime, leaves a partial last step whatever the tiles, and K and N of 302
// give rows of whole pairs. The batch starts 0 to 3 elements into its
// buffers, so that its rows start at every offset from 16 bytes: copied
// element by element, or in 8-byte pairs where the even sizes start on 8.
TEST_F(GpuTest, StackedProblemsKeepTheirNonFiniteValues) {
  constexpr uint32_t kCount = 5;
  for (const Shape s : {Shape{300, 301, 259}, Shape{300, 302, 302}}) {
    SCOPED_TRACE(ShapeName(s));
    std::mt19937_64 rng = matserve::testing::FreshRng();
    std::uniform_int_distribution<uint32_t> column_k(0, s.k - 1),
        column_n(0, s.n - 1);
    std::vector<Matrix> as, bs;
    for (uint32_t i = 0; i < kCount; ++i) {
      as.push_back(RandomMatrix(s.m, s.k, rng));
      bs.push_back(RandomMatrix(s.k, s.n, rng));
      as.back().values[column_k(rng)] = INFINITY;
      bs.back().values[column_n(rng)] = -INFINITY;
      bs.back().values[s.n + column_n(rng)] = NAN;
    }
    const uint64_t size_a = uint64_t{s.m} * s.k, size_b = uint64_t{s.k} * s.n,
                   size_c = uint64_t{s.m} * s.n;
    for (uint32_t offset = 0; offset < 4; ++offset) {
      SCOPED_TRACE("offset " + std::to_string(offset));
      DeviceVector da(Shifted(offset, Pack(as, size_a))),
          db(Shifted(offset, Pack(bs, size_b))), dc(kCount * size_c);
      ASSERT_CUDA_OK(kernels::SgemmStridedBatched(
          s.m, s.n, s.k, da.get() + offset, size_a, db.get() + offset, size_b,
          dc.get(), size_c, kCount, nullptr));
      ASSERT_CUDA_OK(cudaDeviceSynchronize());
      ExpectProductsMatch(dc.ToHost(), as, bs, size_c, size_c);
    }
  }
}

// Batches of four rounds of 64-wide blocks and more on a GPU of 132 SMs (1600
// and 1800 of them) with K from 512 take K steps of 32: 64 x 128 tiles on the
// 16-byte path (the last 8 of its 800 problems split in K after 792 unsplit),
// 128 x 64 and 64 x 128 tiles element-wise with a remainder step.
INSTANTIATE_TEST_SUITE_P(LongSteps, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{128, 512, 128}, 800, 0},
                                           BatchCase{{128, 530, 136}, 600, 1},
                                           BatchCase{{136, 530, 128}, 600, 1}),
                         BatchTestName);

// Problems from 128 on a side whose C 64 x 64 tiles pad less than 64-wide ones
// take those on the 16-byte path where 32 x 32 ones pad as much: 40 of 176 x
// 176 with K 200 and gaps of 4 elements (360 blocks, three an SM on a GPU of
// 132 SMs), and 300 of 192 x 192 with K 256, the last 36 split in K after 264
// unsplit (four rounds, where the four-warp tiles would take five); in one
// round, 20 of them with K split, and under 128, 133 of 100^3 (532 blocks, five
// on some SMs). Element by element where those tiles take fewer rounds of
// blocks: 30 of 300 x 301 x 301 (1 round against 2); and where the 64-wide
// tiles pad C a tenth more over more than a round, every problem whole: 15 of
// 529^3 with gaps of 1 (1215 blocks against 675), and 15 of 561 x 700 x 561,
// A on 16 bytes and B not; and where 32 x 32 tiles, which pad C less, would
// take more than a round and cost more at their K: 25 of 401^3.
INSTANTIATE_TEST_SUITE_P(SmallTiles, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{176, 200, 176}, 40, 4},
                                           BatchCase{{192, 256, 192}, 300, 0},
                                           BatchCase{{192, 256, 192}, 20, 0},
                                           BatchCase{{100, 100, 100}, 133, 0},
                                           BatchCase{{300, 301, 301}, 30, 1},
                                           BatchCase{{529, 529, 529}, 15, 1},
                                           BatchCase{{561, 700, 561}, 15, 0},
                                           BatchCase{{401, 401, 401}, 25, 0}),
                         BatchTestName);

// Batches of problems up to 96 on a side whose 96 x 96 tiles pad C less than
// 64 x 64 ones take those, one a problem (three warps of 8 x 12 lanes, K steps
// of 8, four blocks per SM), where on 16 bytes 32 x 32 tiles would take more
// than a round (2112 on a GPU of 132 SMs: 88^3 x 235, 2115) and with an operand
// element by element they fill a round (528): element by element (70^3, K of
// one with prime sides, and 560 of 90 x 300 x 91, the last 32 splitting K), on
// 16 bytes (72^3), A on 16 bytes and B not (65 x 300 x 90 with gaps of 4), and
// whole tiles with unchecked steps (96^3 on 16 bytes, 96 x 97 x 96 element-wise
// with gaps of 1); and on 16 bytes where they split K (96 x 1000 x 96 x 100),
// though 32 x 32 tiles would take a round.
INSTANTIATE_TEST_SUITE_P(MidTiles, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{70, 70, 70}, 600, 0},
                                           BatchCase{{89, 1, 67}, 600, 0},
                                           BatchCase{{90, 300, 91}, 560, 0},
                                           BatchCase{{72, 72, 72}, 300, 0},
                                           BatchCase{{65, 300, 90}, 600, 4},
                                           BatchCase{{96, 96, 96}, 300, 0},
                                           BatchCase{{96, 97, 96}, 600, 1},
                                           BatchCase{{88, 88, 88}, 235, 0},
                                           BatchCase{{96, 1000, 96}, 100, 0}),
                         BatchTestName);

// Batches take 32 x 32 tiles of one warp where those pad C less or spread
// wider (on a GPU of 132 SMs). With an operand element by element: one-tile
// problems of a few batches (50^3 x 100, A on 16 bytes 50 x 52 x 50 x 100,
// K of one 41 x 1 x 37 x 30), problems that 64 x 64 tiles would pad more (40 x
// 90 x 90 x 100, primes 67 x 101 x 131 x 40, 65 x 300 x 90 x 50 with A on 16
// bytes and gaps of 4), that 96 x 96 tiles would take under a round (70 x 72
// x 70 x 300), and that 64-wide tiles would pad more (150 x 151 x 150 x 20
// with gaps of 1, 200 x 131 x 130 x 10, 250 x 251 x 250 x 5 under a quarter
// round). On 16 bytes: in place of 64 x 64 tiles (144^3 x 30, 140^3 x 40 with
// a K remainder and gaps of 4, 160^3 x 100 in two rounds, 136 x 200 x 136 x 40
// with gaps of 4), of 96 x 96 tiles where they take one round (88^3 x 80, 96 x
// 200 x 96 x 85, 72^3 x 234 in 2106 warps) and of 64-wide tiles under a
// quarter of a round (128^3 x 30, 200^3 x 12). From 256 on a side, element by
// element, where they pad C under 0.8 as much as the 64-wide tiles: one side
// under 256 (270 x 131 x 130 x 30 at 0.63 of their padding, 330 x 131 x 130 x
// 30 at 0.76, 141 x 301 x 270 x 30 with gaps of 1, only A element-wise in 129 x
// 129 x 260 x 30, only B in 260 x 132 x 131 x 30, long K in 280 x 999 x 141 x
// 10, split in 9), both over (280 x 150 x 280 x 40, only A element-wise, and
// 257^3 x 3, K split in 4, the last tiles moved by 31 rows and columns and
// adding into C element by element; 401 x 251 x 401 x 20 over two rounds,
// where two-warp 64 x 64 tiles would fill theirs under three quarters; 401 x
// 251 x 401 x 9 in one round, 12 one-warp blocks an SM putting fewer warps on
// a scheduler than 4 four-warp ones; K under 260 keeps both from
// ModeledBatchTiles, which gave K of 331 and 401 four-warp tiles); and from 512
// where they take one round (513 x 250 x 257 x 3; 514 x 250 x 258 x 3, B in
// pairs; 900 x 141 x 140 x 6, B on 16 bytes, 870 blocks; 514 x 150 x 386 x 4, A
// in pairs, whose 64-wide tiles would give way to 128 x 128 ones, not four-warp
// 64 x 64 ones). From 6 blocks an SM and 9 steps of K their steps run unrolled
// (160^3 x 100, 72^3 x 234, 140^3 x 40 with a K remainder, 141 x 301 x 270 x 30
// with gaps of 1, 900 x 141 x 140 x 6): from 792 blocks exactly and K of 72 (33
// x 72 x 33 x 198), but not at 788 blocks (x 197) nor K of 71 (33 x 71 x 33 x
// 198).
INSTANTIATE_TEST_SUITE_P(
    TinyTiles, GpuBatchedSgemm,
    ::testing::Values(
        BatchCase{{50, 50, 50}, 100, 0}, BatchCase{{50, 52, 50}, 100, 0},
        BatchCase{{41, 1, 37}, 30, 0}, BatchCase{{40, 90, 90}, 100, 0},
        BatchCase{{67, 101, 131}, 40, 0}, BatchCase{{65, 300, 90}, 50, 4},
        BatchCase{{70, 72, 70}, 300, 0}, BatchCase{{150, 151, 150}, 20, 1},
        BatchCase{{200, 131, 130}, 10, 0}, BatchCase{{250, 251, 250}, 5, 0},
        BatchCase{{144, 144, 144}, 30, 0}, BatchCase{{140, 140, 140}, 40, 4},
        BatchCase{{160, 160, 160}, 100, 0}, BatchCase{{136, 200, 136}, 40, 4},
        BatchCase{{88, 88, 88}, 80, 0}, BatchCase{{96, 200, 96}, 85, 0},
        BatchCase{{72, 72, 72}, 234, 0}, BatchCase{{128, 128, 128}, 30, 0},
        BatchCase{{200, 200, 200}, 12, 0}, BatchCase{{270, 131, 130}, 30, 0},
        BatchCase{{141, 301, 270}, 30, 1}, BatchCase{{129, 129, 260}, 30, 0},
        BatchCase{{260, 132, 131}, 30, 0}, BatchCase{{280, 999, 141}, 10, 0},
        BatchCase{{280, 150, 280}, 40, 0}, BatchCase{{257, 257, 257}, 3, 0},
        BatchCase{{330, 131, 130}, 30, 0}, BatchCase{{513, 250, 257}, 3, 0},
        BatchCase{{514, 250, 258}, 3, 0}, BatchCase{{900, 141, 140}, 6, 0},
        BatchCase{{401, 251, 401}, 20, 0}, BatchCase{{401, 251, 401}, 9, 0},
        BatchCase{{514, 150, 386}, 4, 0}, BatchCase{{33, 72, 33}, 198, 0},
        BatchCase{{33, 72, 33}, 197, 0}, BatchCase{{33, 71, 33}, 198, 0}),
    BatchTestName);

// Batches with an operand element by element that 32 x 32 tiles would pad as
// much as 64 x 64 ones take 64 x 64 tiles of four one-warp warp tiles where
// their problems are under 128 on a side, or under 256 where the 64-wide
// tiles would pad more; on 16 bytes, where the two-warp tiles would fill more
// than a round and these no more rounds. Five blocks per SM where four would
// take more rounds (on a GPU of 132 SMs, 660 blocks a round against 528):
// element by element (97^3 x 150, 600 blocks; 190 x 191 x 190 x 60 with gaps
// of 1, 540), with K split as five blocks per SM count (A on 16 bytes, 100 x
// 2000 x 101 x 6 planned in 27 parts, 648 blocks; 170 x 2000 x 170 x 3 in 24,
// 648; 60 x 500 x 170 x 30 in 7, 630), and on 16 bytes (120^3 x 300 with gaps
// of 4, 1200 blocks); and where both take more than three rounds (97^3 x 528,
// 2112 blocks, four rounds of either). Where the plan would split K for the
// last problems only, none splits: 90 of 192 x 256 x 192 (the last 17 after
// 73), 810 blocks, four per SM.
INSTANTIATE_TEST_SUITE_P(QuadTiles, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{97, 97, 97}, 150, 0},
                                           BatchCase{{190, 191, 190}, 60, 1},
                                           BatchCase{{100, 2000, 101}, 6, 0},
                                           BatchCase{{170, 2000, 170}, 3, 0},
                                           BatchCase{{60, 500, 170}, 30, 0},
                                           BatchCase{{120, 120, 120}, 300, 4},
                                           BatchCase{{192, 256, 192}, 90, 0},
                                           BatchCase{{97, 97, 97}, 528, 0}),
                         BatchTestName);

// Batches whose C's rows are off 16 bytes, in place of 64-wide tiles, take
// four-warp 64 x 64 tiles four to an SM with K whole where those fill from
// three blocks to every two SMs up to one round (on a GPU of 132 SMs, 198 to
// 528 blocks): A element by element and B in pairs (450 x 451 x 450 x 5, 320
// blocks, which split K in 6 parts before; 318^3 x 16, 400; 800 x 801 x 802 x
// 3, 507; 700 x 301 x 350 x 3, 198), both element by element (511^3 x 6, 384;
// 302 x 303 x 302 x 16 with gaps of 1), in place of 128 x 128 tiles one to an
// SM where A's rows go element by element, the blocks come to at most three on
// an SM and K is at most 512 (the whole 64s of 450 x 451 x 450 x 7, 343
// blocks), and as the whole 64s of 450 x 451 x 450 x 10 (448 x 448, 490
// blocks) beside the strips of its last two rows and columns. Not with four
// blocks on an SM where 128 x 128 tiles one to an SM would take the batch:
// 1001 x 100 x 1001 x 2 with gaps of 1 (512 blocks before) takes those,
// element by element. Nor with K past 2000: 700 x 3001 x 350 x 3 (198 blocks
// of them before) takes 64 x 128 tiles with K split in 4 parts of 752, added
// into C's rows realigned. With C's rows on 16 bytes, A's element by element
// and B's on 16 bytes: in place of 64-wide tiles where the blocks come to four
// on an SM (300 x 301 x 300 x 20, 500 blocks), and of 128 x 128 tiles one to
// an SM where they come to three and K is short (440 x 441 x 440 x 8, 392).
// In place of a round of 32 x 32 tiles whose one-warp blocks put as many
// warps on an SM's busiest scheduler: 401^3 x 10 (1690 of them, 13 on some
// SMs, against 490 four-warp blocks), 270 x 501 x 270 x 20 with gaps of 1
// (1620 against 500) and 514 x 301 x 386 x 4 (884 against 252).
INSTANTIATE_TEST_SUITE_P(
    QuadTilesWholeK, GpuBatchedSgemm,
    ::testing::Values(
        BatchCase{{450, 451, 450}, 5, 0}, BatchCase{{318, 318, 318}, 16, 0},
        BatchCase{{511, 511, 511}, 6, 0}, BatchCase{{800, 801, 802}, 3, 0},
        BatchCase{{700, 301, 350}, 3, 0}, BatchCase{{302, 303, 302}, 16, 1},
        BatchCase{{450, 451, 450}, 7, 0}, BatchCase{{1001, 100, 1001}, 2, 1},
        BatchCase{{450, 451, 450}, 10, 0}, BatchCase{{700, 3001, 350}, 3, 0},
        BatchCase{{300, 301, 300}, 20, 0}, BatchCase{{440, 441, 440}, 8, 0},
        BatchCase{{401, 401, 401}, 10, 0}, BatchCase{{270, 501, 270}, 20, 1},
        BatchCase{{514, 301, 386}, 4, 0}),
    BatchTestName);

// Batches with an operand off 16 bytes, sides from 260 to 1100 and from one
// 128 x 128 tile per SM to four rounds of them two to an SM take the shape
// ModeledBatchTiles picks on the whole batch (on a GPU of 132 SMs): both
// operands element by element in four-warp 64 x 64 tiles (300 x 301 x 261 x
// 20), two-warp ones (421 x 301 x 261 x 19), 96 x 96 ones (341 x 301 x 261 x
// 37), 64 x 128 ones (700 x 301 x 700 x 10) and 128 x 128 ones (500 x 301 x
// 500 x 30); A alone, in four-warp tiles (300 x 301 x 260 x 20); B alone, in
// 64 x 128 tiles (261 x 300 x 541 x 15) and four-warp ones (600 x 300 x 601 x
// 8).
INSTANTIATE_TEST_SUITE_P(ModeledTiles, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{300, 301, 261}, 20, 0},
                                           BatchCase{{421, 301, 261}, 19, 0},
                                           BatchCase{{341, 301, 261}, 37, 0},
                                           BatchCase{{700, 301, 700}, 10, 0},
                                           BatchCase{{500, 301, 500}, 30, 0},
                                           BatchCase{{300, 301, 260}, 20, 0},
                                           BatchCase{{261, 300, 541}, 15, 0},
                                           BatchCase{{600, 300, 601}, 8, 0}),
                         BatchTestName);

// The four-warp 64 x 64 tiles four to an SM copy unchecked steps in four
// parts spread over the step computed meanwhile (kInterleaved): element by
// element, one step (511 x 16 x 511 x 6 with gaps of 1; without them, A on 16
// bytes, it takes 128 x 128 tiles), a remainder and one whole step (511 x 17 x
// 511 x 6) or two (450 x 35 x 451 x 4); and on 16 bytes, two whole steps
// (192 x 32 x 192 x 100).
INSTANTIATE_TEST_SUITE_P(QuadFewInterleaved, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{511, 16, 511}, 6, 1},
                                           BatchCase{{511, 17, 511}, 6, 0},
                                           BatchCase{{450, 35, 451}, 4, 0},
                                           BatchCase{{192, 32, 192}, 100, 0}),
                         BatchTestName);

// The 128 x 128 tiles two to an SM with A not element by element copy
// unchecked steps in four parts too (kInterleaved): A on 16 bytes and B in
// pairs, whole steps only (1002 x 1024 x 1002 x 4) and a remainder first
// (kShortFirst) then one whole step (998 x 40 x 1002 x 4); B element by
// element, A on 16 bytes in whole steps (1001 x 1024 x 1001 x 4) and A in
// pairs with a remainder first (998 x 42 x 1001 x 4).
INSTANTIATE_TEST_SUITE_P(BigPairsInterleaved, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{1002, 1024, 1002}, 4, 0},
                                           BatchCase{{998, 40, 1002}, 4, 0},
                                           BatchCase{{1001, 1024, 1001}, 4, 0},
                                           BatchCase{{998, 42, 1001}, 4, 0}),
                         BatchTestName);

// The 128 x 128 tiles two to an SM with both operands element by element, one
// of them in rows an even number of elements apart, copy the rows of a warp
// that start on 8 bytes in pairs in unchecked steps (kAlignedPairs): with a
// gap of 1 the problems alternate which warps do, A's and B's (1002 x 1018 x
// 1002 x 4) or A's alone, B's pitch odd (1002 x 1018 x 1001 x 4).
INSTANTIATE_TEST_SUITE_P(AlignedPairs, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{1002, 1018, 1002}, 4, 1},
                                           BatchCase{{1002, 1018, 1001}, 4, 1}),
                         BatchTestName);

// The 128 x 128 tiles one to an SM, A element by element in unchecked steps,
// copy every other row in pairs where the operands that go element by element
// lie in rows an odd number of elements apart (kAlternatePairs): both, with
// problems an odd number of elements apart (1001 x 1021 x 1003 x 2, whose
// second problem's rows in pairs are the other parity) and an even one (gap
// 1); B in pairs (1001 x 1001 x 1002 x 2) or on 16 bytes (1001 x 1001 x 1000
// x 2). With a gap of 1, 1001 x 1001 x 1002 x 2's B goes element by element in
// rows an even number apart, which the launcher gives the kernel that copies
// every row element by element. Two to an SM, both element by element in rows
// an odd number apart (AlternateRowOffsets): 1001 x 1021 x 1003 x 4 with a gap
// of 1 (with none, 255 x 257 x 253 x 121 and it in BigTiles, 511^3 x 30 in
// SplitTails), and 694 x 553 x 491 x 10, whose 240 such tiles take one round
// where its 440 64-wide ones would take two (TakesBigTiles), with gaps of 0
// and 1.
INSTANTIATE_TEST_SUITE_P(AlternatePairs, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{1001, 1021, 1003}, 2, 0},
                                           BatchCase{{1001, 1021, 1003}, 2, 1},
                                           BatchCase{{1001, 1001, 1002}, 2, 0},
                                           BatchCase{{1001, 1001, 1002}, 2, 1},
                                           BatchCase{{1001, 1001, 1000}, 2, 0},
                                           BatchCase{{1001, 1021, 1003}, 4, 1},
                                           BatchCase{{694, 553, 491}, 10, 0},
                                           BatchCase{{694, 553, 491}, 10, 1}),
                         BatchTestName);

// Batches whose operands both go element by element in rows an odd number of
// elements apart (TakesTallTiles, TakesBigTiles; on a GPU of 132 SMs): where
// 128 x 64 tiles pad C less but take as many rounds as 64 x 128 ones, those
// take the batch (560 x 251 x 405 x 11, 385 against 396 blocks; K under 260
// keeps it from ModeledBatchTiles); where they
// take fewer, they keep it (250 x 301 x 177 x 66, 396 against 528), in K steps
// of 32 from K of 512 (250 x 513 x 177 x 66, one round), as they do where the
// rule for every shape gives them those steps (200 x 513 x 945 x 70, 2100
// blocks against 2240). 128 x 128 tiles two to an SM that pad C as little as
// 64 x 128 ones take the batch where 1.25 times their rounds equal the 64 x
// 128 tiles' (250 x 255 x 255 x 220, 880 blocks against 1760).
INSTANTIATE_TEST_SUITE_P(AlternateShapes, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{560, 251, 405}, 11, 0},
                                           BatchCase{{250, 301, 177}, 66, 0},
                                           BatchCase{{250, 513, 177}, 66, 0},
                                           BatchCase{{200, 513, 945}, 70, 0},
                                           BatchCase{{250, 255, 255}, 220, 0}),
                         BatchTestName);

// The two-warp 64 x 64 tiles six to an SM copy unchecked steps in four parts
// too (kInterleaved), whatever the operands' alignment: both element by
// element (321 x 35 x 321 x 122, two whole steps after a remainder), A alone
// (320 x 35 x 320 x 122) and B alone (321 x 32 x 321 x 122, two whole steps).
INSTANTIATE_TEST_SUITE_P(TwoWarpInterleaved, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{321, 35, 321}, 122, 0},
                                           BatchCase{{320, 35, 320}, 122, 0},
                                           BatchCase{{321, 32, 321}, 122, 0}),
                         BatchTestName);

// The 64 x 128 tiles in K steps of 32 (LongSteps: K at least 512, at least
// four rounds of blocks) copy unchecked steps in four parts too (kInterleaved)
// where an operand goes element by element: both, with a remainder first (128
// x 513 x 129 x 800), A alone with a remainder (128 x 513 x 128 x 800) and B
// alone in whole steps (128 x 512 x 129 x 800); the batch's last blocks split
// K.
INSTANTIATE_TEST_SUITE_P(WideStepsInterleaved, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{128, 513, 129}, 800, 0},
                                           BatchCase{{128, 513, 128}, 800, 0},
                                           BatchCase{{128, 512, 129}, 800, 0}),
                         BatchTestName);

// The four-warp 64 x 64 tiles' batches whose blocks take as few rounds at
// four per SM as at five, and at most three (on a GPU of 132 SMs), take four
// per SM with K steps of 16: in one round, element by element (97^3), A on 16
// bytes (100 x 100 x 101, 180 x 172 x 170), B on 16 bytes (120 x 121 x 120,
// 50 x 77 x 100 on checked steps), with gaps of 1 (113 x 127 x 109, 190 x 191
// x 190), 170^3, and with K split (3 of 170 x 512 x 170 in 8 parts, 216
// blocks; 2 of 100 x 500 x 101 in 7 parts of 80, the last of 20); in two
// (113 x 127 x 109 x 200 with gaps of 1, 800 blocks; on 16 bytes 180^3 x 100
// by bulk copies and 192^3 x 100 by cp.async, 900) and three (170^3 x 150,
// 1350). So do batches on 16 bytes in one round of four blocks on some SMs with
// K whole: 180^3 x 50 by bulk copies and 192^3 x 50 by cp.async (450 blocks),
// 100^3 x 110 and 120^3 x 110 with gaps of 4 (440), and 144^3 x 50, which 32 x
// 32 tiles would pad less.
INSTANTIATE_TEST_SUITE_P(
    QuadFewTiles, GpuBatchedSgemm,
    ::testing::Values(
        BatchCase{{97, 97, 97}, 50, 0}, BatchCase{{100, 100, 101}, 30, 0},
        BatchCase{{180, 172, 170}, 10, 0}, BatchCase{{120, 121, 120}, 20, 0},
        BatchCase{{50, 77, 100}, 30, 0}, BatchCase{{113, 127, 109}, 10, 1},
        BatchCase{{190, 191, 190}, 8, 1}, BatchCase{{170, 171, 170}, 20, 0},
        BatchCase{{170, 512, 170}, 3, 0}, BatchCase{{100, 500, 101}, 2, 0},
        BatchCase{{113, 127, 109}, 200, 1}, BatchCase{{180, 180, 180}, 100, 0},
        BatchCase{{192, 192, 192}, 100, 0}, BatchCase{{170, 171, 170}, 150, 0},
        BatchCase{{180, 180, 180}, 50, 0}, BatchCase{{192, 192, 192}, 50, 0},
        BatchCase{{100, 100, 100}, 110, 0}, BatchCase{{120, 120, 120}, 110, 4},
        BatchCase{{144, 144, 144}, 50, 0}),
    BatchTestName);

// The four-warp 64 x 64 tiles in K steps of 16 copy A in pairs where its rows
// start on 8 bytes (kPairsOfA): in one round with a remainder step (318^3 x
// 16, and B element by element in 318 x 318 x 319 x 16), in one and three
// rounds (170^3 x 40 and x 150), and with K split (170 x 514 x 170 x 3).
INSTANTIATE_TEST_SUITE_P(QuadFewPairs, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{318, 318, 318}, 16, 0},
                                           BatchCase{{318, 318, 319}, 16, 0},
                                           BatchCase{{170, 170, 170}, 40, 0},
                                           BatchCase{{170, 170, 170}, 150, 0},
                                           BatchCase{{170, 514, 170}, 3, 0}),
                         BatchTestName);

// Batches whose M or N lies 1 to 4 past a multiple of 64 compute the whole
// 64s as a batch of their own and the rest as strips beside it, where those
// 64s are at least 128 on a side and fill three quarters of a GPU of 132 SMs
// in 128 x 128 tiles one to an SM (99 tiles; 97.7 by area on 16 bytes): a row
// and a column element by element (129^3 x 100), 4 rows and 4 columns on 16
// bytes with gaps of 4 (260 x 100 x 196 x 30, 132 x 77 x 132 x 100), 3 rows
// and 2 columns (131 x 300 x 194), whole 64s in 64 x 64 tiles (196 x 64 x
// 196), columns only (1024 x 1024 x 1028, whose two problems would split K
// uncut), rows only (258 x 50 x 256), and K of several steps a warp with a
// remainder (132 x 1000 x 130). Whole 64s of 98 tiles by area on 16 bytes
// with gaps of 4, which split K into C zeroed problem by problem (900^3 x 2),
// and element by element in four-warp tiles (769^3 x 3). K of two slices of
// the strips' staged operand, the second short (577 x 1100 x 578 x 4). Columns
// 5 to 16 past a multiple of 64 where the 64-wide tiles of the whole 64s pad
// C less: 16 on 16 bytes (256 x 256 x 272 x 30), 14 element by element with 2
// rows (258 x 300 x 270 x 30 with gaps of 1), 9 (384 x 300 x 393 x 12) and 6
// in pairs (512 x 200 x 518 x 8).
INSTANTIATE_TEST_SUITE_P(
    EdgeStrips, GpuBatchedSgemm,
    ::testing::Values(
        BatchCase{{129, 129, 129}, 100, 1}, BatchCase{{260, 100, 196}, 30, 4},
        BatchCase{{132, 77, 132}, 100, 4}, BatchCase{{131, 300, 194}, 100, 1},
        BatchCase{{196, 64, 196}, 100, 0}, BatchCase{{1024, 1024, 1028}, 2, 0},
        BatchCase{{258, 50, 256}, 40, 0}, BatchCase{{132, 1000, 130}, 100, 1},
        BatchCase{{900, 900, 900}, 2, 4}, BatchCase{{769, 769, 769}, 3, 0},
        BatchCase{{577, 1100, 578}, 4, 1}, BatchCase{{256, 256, 272}, 30, 0},
        BatchCase{{258, 300, 270}, 30, 1}, BatchCase{{384, 300, 393}, 12, 0},
        BatchCase{{512, 200, 518}, 8, 0}),
    BatchTestName);

// Batches whose rows start on 8 bytes but not all on 16 (even sizes off a
// multiple of 4, or gaps of 2) copy them in 8-byte pairs on warp-tiled
// blocks: 96 x 96 tiles (90 x 298 x 90 x 560), 64-wide tiles moved to the
// edges (1026 x 250 x 258 x 2; B on 16 bytes, 514 x 250 x 256 x 3), in steps of
// 32 (128 x 530 x 136 x 600) and with K split, adding into C in padded rows
// (510 x 302 x 202 x 5), 128 x 128 tiles two to an SM (250 x 102 x 250 x 65)
// and one (1002 x 100 x 1002 x 2), and persistent blocks (46 x 38 x 50 x 700;
// A on 16 bytes, 40 x 36 x 50 x 700). One-warp 32 x 32 warp tiles copy B so
// and A element by element (50 x 54 x 50 x 100, 270 x 130 x 130 x 30; four to
// a block, 98^3 x 150), and two-warp 64 x 64 tiles both element by element
// (300 x 302 x 302 x 30). One operand in pairs and the other element by
// element: 1153 x 250 x 257 and 330 x 131 x 190 in MovedEdges.
INSTANTIATE_TEST_SUITE_P(
    PairCopies, GpuBatchedSgemm,
    ::testing::Values(
        BatchCase{{90, 298, 90}, 560, 2}, BatchCase{{300, 302, 302}, 30, 2},
        BatchCase{{1026, 250, 258}, 2, 0}, BatchCase{{514, 250, 256}, 3, 0},
        BatchCase{{128, 530, 136}, 600, 2}, BatchCase{{510, 302, 202}, 5, 0},
        BatchCase{{250, 102, 250}, 65, 2}, BatchCase{{1002, 100, 1002}, 2, 2},
        BatchCase{{46, 38, 50}, 700, 2}, BatchCase{{40, 36, 50}, 700, 0},
        BatchCase{{50, 54, 50}, 100, 2}, BatchCase{{270, 130, 130}, 30, 0},
        BatchCase{{98, 98, 98}, 150, 2}),
    BatchTestName);

// Problems up to 32 x 32 go to warps of their own: more problems than an
// H200 holds warps (2112), so warps take several, on the 16-byte path with
// whole K steps, whole 32 x 32 problems with a remainder step (K 52), a
// remainder and edges (K 52, M 20, N 28), K of one step or seven (M 1), and
// element-wise with a remainder. Problems up to 24 wide whose K pads less to
// steps of 8 take those: with a remainder step on the 16-byte path (K 20),
// of one step (K 8), and element-wise with edges (K 40).
INSTANTIATE_TEST_SUITE_P(PerWarp, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{32, 32, 32}, 2500, 0},
                                           BatchCase{{32, 52, 32}, 2200, 0},
                                           BatchCase{{20, 52, 28}, 2300, 0},
                                           BatchCase{{1, 100, 32}, 3000, 0},
                                           BatchCase{{32, 1, 32}, 2200, 0},
                                           BatchCase{{31, 33, 30}, 2200, 1},
                                           BatchCase{{20, 20, 20}, 2300, 0},
                                           BatchCase{{24, 8, 24}, 2200, 0},
                                           BatchCase{{23, 40, 21}, 2200, 1}),
                         BatchTestName);

// Problems of 17 to 32 with K from 128 take the per-warp kernel's deeper
// ring: more problems than an H200 holds warps of it (1056), with K a whole
// number of steps, whole 32 x 32 problems with a remainder step, a
// remainder and edges, and element-wise.
INSTANTIATE_TEST_SUITE_P(PerWarpLongK, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{32, 128, 32}, 1200, 0},
                                           BatchCase{{32, 200, 32}, 1500, 0},
                                           BatchCase{{28, 200, 32}, 1500, 0},
                                           BatchCase{{25, 129, 31}, 1100, 1}),
                         BatchTestName);

// Too few problems up to 32 x 32 to fill the GPU, with K from 512: they split
// K on warp-tiled blocks, on the 16-byte path and element-wise, and with gaps
// between the problems (C zeroed problem by problem).
INSTANTIATE_TEST_SUITE_P(FewLongProblems, GpuBatchedSgemm,
                         ::testing::Values(BatchCase{{32, 4096, 32}, 1, 0},
                                           BatchCase{{16, 700, 16}, 5, 0},
                                           BatchCase{{30, 601, 31}, 40, 0},
                                           BatchCase{{30, 601, 31}, 40, 3}),
                         BatchTestName);

// A grouped launch's problems, where their matrices start, and the plan that
// PlanSgemmGrouped must make for them (so that each case takes its path).
struct GroupedCase {
  std::string name;
  std::vector<Shape> shapes;
  // Odd problems' matrices on 16 bytes, even ones' 4 bytes past (kMixed) or
  // 8 bytes past (kPairs) 16 bytes; kVectors: every matrix on 16 bytes.
  enum Starts { kMixed, kPairs, kVectors } starts;
  bool warp_tiled;
  int width;  // of the warp tiles' copies
};

void PrintTo(const GroupedCase& c, std::ostream* os) { *os << c.name; }

class GpuGrouped : public GpuTest,
                   public ::testing::WithParamInterface<GroupedCase> {};

// Mixed shapes in one launch: every product right, the inputs untouched and
// nothing written between matrices.
TEST_P(GpuGrouped, MatchesTheReference) {
  const GroupedCase& c = GetParam();
  std::mt19937_64 rng = matserve::testing::FreshRng();
  std::vector<Matrix> inputs;     // A and B of each problem
  std::vector<uint64_t> offsets;  // A, B and C of each problem
  std::vector<uint64_t> sizes;
  uint64_t size = 0;
  for (size_t p = 0; p < c.shapes.size(); ++p) {
    const Shape& s = c.shapes[p];
    inputs.push_back(RandomMatrix(s.m, s.k, rng));
    inputs.push_back(RandomMatrix(s.k, s.n, rng));
    for (uint64_t floats :
         {uint64_t{s.m} * s.k, uint64_t{s.k} * s.n, uint64_t{s.m} * s.n}) {
      size = (size + 3) / 4 * 4;
      if (p % 2 == 0 && c.starts == GroupedCase::kMixed) size += 1;
      if (p % 2 == 0 && c.starts == GroupedCase::kPairs) size += 2;
      offsets.push_back(size);
      sizes.push_back(floats);
      size += floats;
    }
  }
  DeviceVector buffer(size);  // all NaN bits: gaps and outputs alike
  for (size_t p = 0; p < c.shapes.size(); ++p) {
    for (int which : {0, 1}) {
      const std::vector<float>& values = inputs[2 * p + which].values;
      ASSERT_CUDA_OK(cudaMemcpy(buffer.get() + offsets[3 * p + which],
                                values.data(), values.size() * 4,
                                cudaMemcpyHostToDevice));
    }
  }
  std::vector<kernels::GemmProblem> problems;
  for (size_t p = 0; p < c.shapes.size(); ++p) {
    const Shape& s = c.shapes[p];
    float* base = buffer.get();
    problems.push_back({s.m, s.n, s.k, base + offsets[3 * p],
                        base + offsets[3 * p + 1], base + offsets[3 * p + 2]});
  }
  std::vector<kernels::GroupedGemmEntry> entries(problems.size());
  const kernels::GroupedPlan plan = kernels::PlanSgemmGrouped(
      problems.data(), problems.size(), entries.data());
  ASSERT_GT(plan.blocks, 0);
  EXPECT_EQ(plan.warp_tiled, c.warp_tiled);
  if (c.warp_tiled) {
    EXPECT_EQ(plan.width, c.width);
  }
  for (size_t p = 0; p < c.shapes.size(); ++p) {
    const Shape& s = c.shapes[p];
    const bool on_16_bytes = c.starts == GroupedCase::kVectors || p % 2 == 1;
    EXPECT_EQ(entries[p].vectorized,
              on_16_bytes && s.k % 4 == 0 && s.n % 4 == 0)
        << ShapeName(s);
  }
  kernels::GroupedGemmEntry* device_entries = nullptr;
  ASSERT_CUDA_OK(
      cudaMalloc(&device_entries, entries.size() * sizeof(entries[0])));
  std::unique_ptr<kernels::GroupedGemmEntry, decltype(&cudaFree)> owner(
      device_entries, cudaFree);
  ASSERT_CUDA_OK(cudaMemcpy(device_entries, entries.data(),
                            entries.size() * sizeof(entries[0]),
                            cudaMemcpyHostToDevice));
  ASSERT_CUDA_OK(
      kernels::SgemmGrouped(device_entries, entries.size(), plan, nullptr));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());

  const std::vector<float> result = buffer.ToHost();
  std::vector<bool> in_a_matrix(size, false);
  for (size_t i = 0; i < offsets.size(); ++i) {
    std::fill_n(in_a_matrix.begin() + offsets[i], sizes[i], true);
  }
  for (size_t p = 0; p < c.shapes.size(); ++p) {
    SCOPED_TRACE(ShapeName(c.shapes[p]));
    for (int which : {0, 1}) {
      const std::vector<float>& values = inputs[2 * p + which].values;
      EXPECT_EQ(std::memcmp(&result[offsets[3 * p + which]], values.data(),
                            values.size() * 4),
                0)
          << "an input was overwritten";
    }
    const auto first = result.begin() + offsets[3 * p + 2];
    matserve::testing::ExpectMatchesReference(
        {first, first + sizes[3 * p + 2]},
        ReferenceMultiply(inputs[2 * p], inputs[2 * p + 1]));
  }
  for (uint64_t i = 0; i < size; ++i) {
    if (in_a_matrix[i]) continue;
    uint32_t bits;
    std::memcpy(&bits, &result[i], 4);
    ASSERT_EQ(bits, 0xFFFFFFFFu) << "element " << i << " of a gap was written";
  }
}

// The small tiles take sets of small problems; the warp tiles sets of larger
// ones, small problems among them, in the widest copies all rows allow. Sizes
// of 1, primes, and off every tile (64, 128) and K step (16).
const GroupedCase kGroupedCases[] = {
    {"small_tiles",
     {{1, 1, 1},
      {16, 16, 16},
      {17, 31, 29},
      {64, 64, 64},
      {65, 3, 130},
      {100, 37, 129},
      {1, 300, 1},
      {200, 64, 3},
      {257, 33, 96},
      {4, 8, 12},
      {8, 8, 8},
      {31, 1, 1}},
     GroupedCase::kMixed,
     false,
     1},
    {"warp_tiles_by_element",
     {{257, 1031, 300},
      {1, 1, 1},
      {129, 997, 65},
      {300, 512, 256},
      {1, 700, 513},
      {64, 1024, 128},
      {211, 97, 131},
      {5, 3, 2}},
     GroupedCase::kMixed,
     true,
     1},
    {"warp_tiles_in_pairs",
     {{258, 1030, 302},
      {2, 2, 2},
      {130, 998, 66},
      {1, 702, 514},
      {211, 98, 130},
      {64, 1024, 128}},
     GroupedCase::kPairs,
     true,
     2},
    {"warp_tiles_by_16_bytes",
     {{257, 1028, 300},
      {1, 4, 4},
      {129, 996, 68},
      {1, 700, 516},
      {211, 100, 132},
      {64, 1024, 128}},
     GroupedCase::kVectors,
     true,
     4},
};

INSTANTIATE_TEST_SUITE_P(Sets, GpuGrouped, ::testing::ValuesIn(kGroupedCases),
                         [](const ::testing::TestParamInfo<GroupedCase>& info) {
                           return info.param.name;
                         });

class GpuBatchedTranspose
    : public GpuTest,
      public ::testing::WithParamInterface<
          std::tuple<kernels::TransposeVariant, BatchCase>> {};

TEST_P(GpuBatchedTranspose, EveryMatrixIsBitExact) {
  const auto [variant, c] = GetParam();
  const uint32_t rows = c.shape.m, cols = c.shape.n;
  std::mt19937_64 rng = matserve::testing::FreshRng();
  std::vector<Matrix> inputs;
  for (uint32_t i = 0; i < c.count; ++i) {
    inputs.push_back(
        matserve::testing::MatrixWithSpecialValues(rows, cols, rng));
  }
  const uint64_t size = uint64_t{rows} * cols;
  const uint64_t stride = size + c.gap;
  DeviceVector din(Pack(inputs, stride)), dout(c.count * stride);
  ASSERT_CUDA_OK(kernels::TransposeStridedBatched(rows, cols, din.get(), stride,
                                                  dout.get(), stride, c.count,
                                                  nullptr, variant));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  const std::vector<float> out = dout.ToHost();
  ExpectTransposesPacked(inputs, out, size, stride);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GpuBatchedTranspose,
    ::testing::Combine(
        ::testing::ValuesIn(kTransposeVariantsAndAuto),
        ::testing::Values(
            BatchCase{{1, 0, 1}, 3, 0}, BatchCase{{16, 0, 16}, 5, 0},
            BatchCase{{33, 0, 17}, 4, 1}, BatchCase{{1, 0, 37}, 3, 1},
            BatchCase{{37, 0, 1}, 3, 0}, BatchCase{{68, 0, 132}, 2, 0},
            BatchCase{{130, 0, 67}, 2, 1},
            // Several blocks of the packed
            // kernel, dense and with gaps, ranges
            // that start inside 16-byte words.
            BatchCase{{16, 0, 16}, 300, 0}, BatchCase{{16, 0, 16}, 37, 1},
            BatchCase{{33, 0, 17}, 101, 0}, BatchCase{{33, 0, 17}, 29, 3},
            BatchCase{{1000, 0, 3}, 7, 0}, BatchCase{{3, 0, 1000}, 5, 2},
            BatchCase{{2, 0, 3}, 1001, 0}, BatchCase{{61, 0, 67}, 3, 0},
            BatchCase{{64, 0, 64}, 5, 0}, BatchCase{{65, 0, 63}, 3, 4})),
    [](const auto& info) {
      return std::string(
                 kernels::TransposeVariantName(std::get<0>(info.param))) +
             "_" + BatchCaseName(std::get<1>(info.param));
    });

// Matrices that start off 16 bytes (out three elements in; in one element in
// for an odd count, else four, on 16 bytes): every
// variant must fall back to accesses that are legal there, and write neither
// before nor after its output.
class GpuTransposeMisaligned
    : public GpuTest,
      public ::testing::WithParamInterface<
          std::tuple<kernels::TransposeVariant, BatchCase>> {};

TEST_P(GpuTransposeMisaligned, IsBitExact) {
  const auto [variant, c] = GetParam();
  const uint32_t rows = c.shape.m, cols = c.shape.n;
  const uint64_t in_offset = c.count % 2 == 1 ? 1 : 4;
  constexpr uint64_t kOutOffset = 3, kTail = 5;
  std::mt19937_64 rng = matserve::testing::FreshRng();
  std::vector<Matrix> inputs;
  for (uint32_t i = 0; i < c.count; ++i) {
    inputs.push_back(
        matserve::testing::MatrixWithSpecialValues(rows, cols, rng));
  }
  const uint64_t size = uint64_t{rows} * cols;
  const uint64_t stride = size + c.gap;
  std::vector<float> packed = Pack(inputs, stride);
  packed.insert(packed.begin(), in_offset, 0.0f);
  DeviceVector din(packed), dout(kOutOffset + c.count * stride + kTail);
  ASSERT_CUDA_OK(kernels::TransposeStridedBatched(
      rows, cols, din.get() + in_offset, stride, dout.get() + kOutOffset,
      stride, c.count, nullptr, variant));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  const std::vector<float> all = dout.ToHost();
  for (uint64_t i : {uint64_t{0}, uint64_t{1}, uint64_t{2}}) {
    uint32_t bits;
    std::memcpy(&bits, &all[i], 4);
    EXPECT_EQ(bits, 0xFFFFFFFFu) << "element " << i << " before out written";
  }
  for (uint64_t i = all.size() - kTail; i < all.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &all[i], 4);
    EXPECT_EQ(bits, 0xFFFFFFFFu) << "element " << i << " after out written";
  }
  const std::vector<float> out(all.begin() + kOutOffset, all.end() - kTail);
  ExpectTransposesPacked(inputs, out, size, stride);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, GpuTransposeMisaligned,
    ::testing::Combine(::testing::ValuesIn(kTransposeVariantsAndAuto),
                       ::testing::Values(BatchCase{{36, 0, 40}, 1, 0},
                                         BatchCase{{68, 0, 132}, 3, 0},
                                         BatchCase{{16, 0, 16}, 41, 0},
                                         BatchCase{{33, 0, 17}, 13, 0},
                                         BatchCase{{16, 0, 16}, 40, 0},
                                         BatchCase{{4, 0, 4}, 10, 0})),
    [](const auto& info) {
      return std::string(
                 kernels::TransposeVariantName(std::get<0>(info.param))) +
             "_" + BatchCaseName(std::get<1>(info.param));
    });

// Every variant; 67x45x71 takes the element-wise path of the register-blocked
// kernel, 67x44x72 its 16-byte path.
TEST_F(GpuTest, SgemmPropagatesNanAndInfinity) {
  std::mt19937_64 rng = matserve::testing::FreshRng();
  for (const Shape& s : {Shape{67, 45, 71}, Shape{67, 44, 72}}) {
    const Matrix a = matserve::testing::MatrixWithSpecialValues(s.m, s.k, rng);
    const Matrix b = matserve::testing::MatrixWithSpecialValues(s.k, s.n, rng);
    const std::vector<double> want = ReferenceMultiply(a, b);
    DeviceVector da(a.values), db(b.values), dc(uint64_t{s.m} * s.n);
    for (kernels::SgemmVariant variant : kernels::kSgemmVariants) {
      SCOPED_TRACE(std::string(kernels::SgemmVariantName(variant)) + " " +
                   ShapeName(s));
      ASSERT_CUDA_OK(kernels::Sgemm(s.m, s.n, s.k, da.get(), db.get(), dc.get(),
                                    nullptr, variant));
      ASSERT_CUDA_OK(cudaDeviceSynchronize());
      matserve::testing::ExpectMatchesReference(dc.ToHost(), want);
    }
  }
}

TEST_F(GpuTest, ZeroSizeIsRefusedNotLaunched) {
  EXPECT_EQ(kernels::Sgemm(0, 4, 4, nullptr, nullptr, nullptr, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kernels::Transpose(4, 0, nullptr, nullptr, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kernels::SgemmStridedBatched(4, 4, 4, nullptr, 16, nullptr, 16,
                                         nullptr, 16, 0, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(kernels::TransposeStridedBatched(4, 4, nullptr, 16, nullptr, 16, 0,
                                             nullptr),
            cudaErrorInvalidValue);
  const kernels::GemmProblem problems[] = {
      {4, 4, 4, nullptr, nullptr, nullptr},
      {4, 0, 4, nullptr, nullptr, nullptr}};
  kernels::GroupedGemmEntry entries[2];
  EXPECT_EQ(kernels::PlanSgemmGrouped(problems, 2, entries).blocks, -1);
  const kernels::GroupedPlan plan =
      kernels::PlanSgemmGrouped(problems, 1, entries);
  EXPECT_EQ(plan.blocks, 1);
  EXPECT_EQ(kernels::SgemmGrouped(nullptr, 0, plan, nullptr),
            cudaErrorInvalidValue);
}

// Host-only: the cost model's picks on a GPU of 132 SMs (the lent H100s' and
// H200s'), one batch for each shape it picks and each class of operands off
// 16 bytes, and the edges of its range, where it hands batches to the rules
// (kAuto). The picks are those of the model as fitted (docs/benchmarks.md,
// session 65; tools/fit_tile_model.py picks the same). Measured in their
// picks against the tree of their run (ms, H200): 279 x 891 x 667 x 58 0.5031
// against 0.6364 and 316 x 957 x 1047 x 15 0.2456 against 0.2802 (the rules),
// 735 x 1088 x 1045 x 3 0.1314 against 0.1599 (session 62's model).
TEST(ModeledBatchTiles, PicksAShapeOnlyInTheRangeItWasFittedOn) {
  using kernels::BatchTiles;
  constexpr int64_t kSms = 132;
  struct Case {
    int64_t m, k, n, count;
    bool vector_a, vector_b;
    BatchTiles tiles;
  };
  const Case cases[] = {
      // Both operands element by element, A alone, B alone.
      {279, 891, 667, 58, false, false, BatchTiles::kMid},
      {316, 957, 1047, 15, false, false, BatchTiles::kSmall},
      {563, 1020, 383, 21, false, false, BatchTiles::kWide},
      {408, 815, 940, 5, false, true, BatchTiles::kQuadFew},
      {735, 1088, 1045, 3, true, false, BatchTiles::kMid},
      {767, 498, 826, 24, true, false, BatchTiles::kBig},
      // 12 tiles of 128 x 128 a problem: from one per SM (11 problems) to four
      // rounds of them two to an SM (88).
      {512, 301, 384, 10, false, false, BatchTiles::kAuto},
      {512, 301, 384, 11, false, false, BatchTiles::kBig},
      {512, 301, 384, 88, false, false, BatchTiles::kBig},
      {512, 301, 384, 89, false, false, BatchTiles::kAuto},
      // Sides from 260 to 1100.
      {259, 301, 384, 40, false, false, BatchTiles::kAuto},
      {260, 301, 384, 40, false, false, BatchTiles::kMid},
      {384, 301, 259, 60, false, false, BatchTiles::kAuto},
      {384, 301, 260, 60, false, false, BatchTiles::kMid},
      {512, 259, 384, 40, false, false, BatchTiles::kAuto},
      {512, 260, 384, 40, false, false, BatchTiles::kBig},
      {1100, 301, 384, 20, false, false, BatchTiles::kWide},
      {1101, 301, 384, 20, false, false, BatchTiles::kAuto},
      {512, 1100, 384, 40, false, false, BatchTiles::kBig},
      {512, 1101, 384, 40, false, false, BatchTiles::kAuto},
      // A on 16 bytes takes the model; both on 16 bytes, the rules.
      {512, 300, 384, 40, true, false, BatchTiles::kBig},
      {512, 300, 384, 40, true, true, BatchTiles::kAuto},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message()
                 << c.m << "x" << c.k << "x" << c.n << " x " << c.count
                 << " vector A " << c.vector_a << " B " << c.vector_b);
    EXPECT_EQ(kernels::ModeledBatchTiles(c.m, c.n, c.k, c.count, c.vector_a,
                                         c.vector_b, kSms),
              c.tiles);
  }
  // A single product is never the model's, even where its tiles would fill a
  // smaller GPU.
  EXPECT_EQ(kernels::ModeledBatchTiles(1100, 1100, 301, 1, false, false, 46),
            BatchTiles::kAuto);
  EXPECT_EQ(kernels::ModeledBatchTiles(1100, 1100, 301, 2, false, false, 46),
            BatchTiles::kBig);
}

// Host-only: runs without a GPU too.
TEST(KernelVariants, NamesRoundTripAndUnknownOnesAreRefused) {
  for (kernels::SgemmVariant variant : kernels::kSgemmVariants) {
    kernels::SgemmVariant parsed = kernels::SgemmVariant::kAuto;
    EXPECT_TRUE(kernels::ParseSgemmVariant(kernels::SgemmVariantName(variant),
                                           &parsed));
    EXPECT_EQ(parsed, variant);
  }
  for (kernels::TransposeVariant variant : kernels::kTransposeVariants) {
    kernels::TransposeVariant parsed = kernels::TransposeVariant::kAuto;
    EXPECT_TRUE(kernels::ParseTransposeVariant(
        kernels::TransposeVariantName(variant), &parsed));
    EXPECT_EQ(parsed, variant);
  }
  for (kernels::BatchTiles tiles : kernels::kBatchTiles) {
    kernels::BatchTiles parsed = kernels::BatchTiles::kAuto;
    EXPECT_TRUE(
        kernels::ParseBatchTiles(kernels::BatchTilesName(tiles), &parsed));
    EXPECT_EQ(parsed, tiles);
  }
  kernels::SgemmVariant sgemm;
  EXPECT_FALSE(kernels::ParseSgemmVariant("fast", &sgemm));
  kernels::BatchTiles tiles;
  EXPECT_FALSE(kernels::ParseBatchTiles("huge", &tiles));
  kernels::TransposeVariant transpose;
  EXPECT_FALSE(kernels::ParseTransposeVariant("", &transpose));

  // The names are checked before any device is looked for.
  absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> executors =
      engine::MakeCudaExecutors({.sgemm_variant = "fast"});
  EXPECT_EQ(executors.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(executors.status().message(), ::testing::HasSubstr("\"fast\""));
  executors = engine::MakeCudaExecutors({.transpose_variant = "narrow"});
  EXPECT_EQ(executors.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(executors.status().message(), ::testing::HasSubstr("\"narrow\""));
}

// A forced variant (--sgemm_variant, --transpose_variant) is the one run.
TEST_F(GpuTest, ExecutorsRunAForcedVariant) {
  absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> executors =
      engine::MakeCudaExecutors({.streams_per_device = 1,
                                 .sgemm_variant = "naive",
                                 .transpose_variant = "tiled"});
  ASSERT_TRUE(executors.ok()) << executors.status();
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Shape s{70, 33, 129};
  const Matrix a = RandomMatrix(s.m, s.k, rng);
  const Matrix b = RandomMatrix(s.k, s.n, rng);
  std::vector<float> c(uint64_t{s.m} * s.n, NAN);
  engine::Executor& executor = *(*executors)[0];
  ASSERT_TRUE(
      RunOne(executor, engine::MultiplyOp{s.m, s.k, s.n, a.values.data(),
                                          b.values.data(), c.data()})
          .ok());
  matserve::testing::ExpectMatchesReference(c, ReferenceMultiply(a, b));
  std::vector<float> output(a.values.size(), NAN);
  ASSERT_TRUE(RunOne(executor, engine::TransposeOp{s.m, s.k, a.values.data(),
                                                   output.data()})
                  .ok());
  matserve::testing::ExpectExactTranspose(a, output);
  // A forced variant runs a batch one launch at a time.
  matserve::testing::ExpectMultiplyBatchMatches(
      executor, {{17, 31, 29}, {17, 31, 29}, {130, 7, 129}});
}

// The executor's ways to launch a multiply batch: one shape (strided), small
// mixed shapes (the grouped table: small tiles, or warp tiles for the batch of
// products up to 127 x 511 x 300), large shapes (from 128 x 128, or K from
// 512) beside small ones (strided per large shape, the small ones grouped),
// and large ones of more than four shapes (all grouped, in warp tiles).
TEST_F(GpuTest, ExecutorBatchesMatchTheReference) {
  absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> executors =
      engine::MakeCudaExecutors({.streams_per_device = 1});
  ASSERT_TRUE(executors.ok()) << executors.status();
  engine::Executor& executor = *(*executors)[0];
  const std::vector<std::vector<Shape>> batches = {
      std::vector<Shape>(100, Shape{64, 64, 64}),
      std::vector<Shape>(37, Shape{17, 31, 29}),
      {{1, 1, 1},
       {17, 31, 29},
       {64, 64, 64},
       {3, 257, 5},
       {33, 1, 65},
       {17, 31, 29},
       {127, 131, 61},
       {1, 1000, 7}},
      {{300, 200, 129},
       {17, 31, 29},
       {300, 200, 129},
       {1, 1, 1},
       {513, 129, 257},
       {64, 64, 64}},
      {{17, 31, 29}, {64, 1000, 48}, {33, 1, 65}, {64, 1000, 48}, {5, 600, 3}},
      {{120, 500, 127},
       {5, 7, 3},
       {127, 511, 300},
       {100, 400, 90},
       {120, 500, 127}},
      {{300, 200, 129},
       {129, 600, 131},
       {17, 31, 29},
       {257, 100, 300},
       {140, 513, 128},
       {300, 200, 129},
       {200, 300, 200},
       {1, 1, 1}},
  };
  for (const std::vector<Shape>& batch : batches) {
    SCOPED_TRACE(::testing::Message()
                 << batch.size() << " problems from " << batch[0]);
    const engine::BatchRecord record =
        matserve::testing::ExpectMultiplyBatchMatches(executor, batch);
    EXPECT_GT(record.compute, absl::ZeroDuration());
    EXPECT_GT(record.host_to_device, absl::ZeroDuration());
    EXPECT_GT(record.device_to_host, absl::ZeroDuration());
    EXPECT_GE(record.busy, record.compute);
    uint64_t output_bytes = 0;
    for (const Shape& s : batch) output_bytes += uint64_t{s.m} * s.n * 4;
    EXPECT_EQ(record.device_to_host_bytes, output_bytes);
  }
}

TEST_F(GpuTest, ExecutorTransposeBatchesAreExact) {
  absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> executors =
      engine::MakeCudaExecutors({.streams_per_device = 1});
  ASSERT_TRUE(executors.ok()) << executors.status();
  engine::Executor& executor = *(*executors)[0];
  matserve::testing::ExpectTransposeBatchExact(
      executor, std::vector<Shape>(50, Shape{64, 0, 64}));
  matserve::testing::ExpectTransposeBatchExact(executor, {{1, 0, 1},
                                                          {33, 0, 65},
                                                          {1, 0, 4097},
                                                          {33, 0, 65},
                                                          {4097, 0, 1},
                                                          {64, 0, 64},
                                                          {257, 0, 129},
                                                          {33, 0, 65}});
}

// A request over max_staged_bytes goes alone, copied without staging.
TEST_F(GpuTest, ExecutorRunsALargeRequestUnstaged) {
  absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> executors =
      engine::MakeCudaExecutors(
          {.streams_per_device = 1, .max_staged_bytes = 1024});
  ASSERT_TRUE(executors.ok()) << executors.status();
  engine::Executor& executor = *(*executors)[0];
  const engine::BatchRecord record =
      matserve::testing::ExpectMultiplyBatchMatches(executor,
                                                    {{300, 200, 129}});
  EXPECT_GT(record.compute, absl::ZeroDuration());
  matserve::testing::ExpectTransposeBatchExact(executor, {{1000, 0, 3000}});
  // Batches still stage, whatever the bound.
  matserve::testing::ExpectMultiplyBatchMatches(
      executor, {{300, 200, 129}, {300, 200, 129}, {5, 6, 7}});
}

TEST_F(GpuTest, ExecutorsRefuseADeviceThatIsNotVisible) {
  absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> executors =
      engine::MakeCudaExecutors({.devices = {4096}});
  EXPECT_EQ(executors.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(executors.status().message(), ::testing::HasSubstr("4096"));
}

// Every executor (one per stream) computes right, one after another and reusing
// its buffers across shapes of different sizes.
TEST_F(GpuTest, EveryExecutorStreamMatchesTheReference) {
  absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> executors =
      engine::MakeCudaExecutors({.streams_per_device = 2});
  ASSERT_TRUE(executors.ok()) << executors.status();
  std::mt19937_64 rng = matserve::testing::FreshRng();
  for (const std::unique_ptr<engine::Executor>& executor : *executors) {
    SCOPED_TRACE(executor->Describe());
    for (const Shape& s :
         {Shape{513, 1025, 257}, Shape{1, 7, 4097}, Shape{127, 131, 137}}) {
      SCOPED_TRACE(ShapeName(s));
      const Matrix a = RandomMatrix(s.m, s.k, rng);
      const Matrix b = RandomMatrix(s.k, s.n, rng);
      std::vector<float> c(uint64_t{s.m} * s.n, NAN);
      ASSERT_TRUE(
          RunOne(*executor, engine::MultiplyOp{s.m, s.k, s.n, a.values.data(),
                                               b.values.data(), c.data()})
              .ok());
      matserve::testing::ExpectMatchesReference(c, ReferenceMultiply(a, b));

      const Matrix input =
          matserve::testing::MatrixWithSpecialValues(s.m, s.n, rng);
      std::vector<float> output(input.values.size(), NAN);
      ASSERT_TRUE(
          RunOne(*executor, engine::TransposeOp{s.m, s.n, input.values.data(),
                                                output.data()})
              .ok());
      matserve::testing::ExpectExactTranspose(input, output);
    }
  }
}

}  // namespace
}  // namespace matserve
