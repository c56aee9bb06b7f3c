// GPU tests (label gpu): the kernels and the CUDA executors against the float64
// reference on odd shapes. Skipped, with a message, where no CUDA device is
// visible.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "client/reference.h"
#include "kernels/kernels.h"
#include "server/engine/cuda_executor.h"
#include "tests/test_util.h"

namespace matserve {
namespace {

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
// take the 16-byte path of the register-blocked kernel (K and N multiples of 4)
// with ragged edges.
INSTANTIATE_TEST_SUITE_P(
    Variants, GpuSgemm,
    ::testing::Combine(
        ::testing::Values(kernels::SgemmVariant::kAuto,
                          kernels::SgemmVariant::kNaive,
                          kernels::SgemmVariant::kTiled,
                          kernels::SgemmVariant::kRegisterBlocked),
        ::testing::ValuesIn([] {
          std::vector<Shape> shapes = matserve::testing::OddShapes();
          shapes.insert(shapes.end(),
                        {{129, 132, 260}, {300, 8, 4}, {1, 4, 4}});
          return shapes;
        }())),
    [](const auto& info) {
      return std::string(kernels::SgemmVariantName(std::get<0>(info.param))) +
             "_" + ShapeName(std::get<1>(info.param));
    });

class GpuTranspose : public GpuTest,
                     public ::testing::WithParamInterface<Shape> {};

TEST_P(GpuTranspose, IsBitExact) {
  const Shape s = GetParam();  // transposes an m x n input
  std::mt19937_64 rng = matserve::testing::FreshRng();
  const Matrix input =
      matserve::testing::MatrixWithSpecialValues(s.m, s.n, rng);
  DeviceVector din(input.values), dout(input.values.size());
  ASSERT_CUDA_OK(kernels::Transpose(s.m, s.n, din.get(), dout.get(), nullptr));
  ASSERT_CUDA_OK(cudaDeviceSynchronize());
  matserve::testing::ExpectExactTranspose(input, dout.ToHost());
}

INSTANTIATE_TEST_SUITE_P(OddShapes, GpuTranspose,
                         ::testing::ValuesIn(matserve::testing::OddShapes()),
                         [](const auto& info) {
                           return ShapeName(info.param);
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
}

// Every executor (one per stream) computes right, one after another and reusing
// its buffers across shapes of different sizes.
TEST_F(GpuTest, EveryExecutorStreamMatchesTheReference) {
  absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> executors =
      engine::MakeCudaExecutors(2);
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
      ASSERT_TRUE(executor
                      ->Run(engine::MultiplyOp{s.m, s.k, s.n, a.values.data(),
                                               b.values.data(), c.data()})
                      .ok());
      matserve::testing::ExpectMatchesReference(c, ReferenceMultiply(a, b));

      const Matrix input =
          matserve::testing::MatrixWithSpecialValues(s.m, s.n, rng);
      std::vector<float> output(input.values.size(), NAN);
      ASSERT_TRUE(executor
                      ->Run(engine::TransposeOp{s.m, s.n, input.values.data(),
                                                output.data()})
                      .ok());
      matserve::testing::ExpectExactTranspose(input, output);
    }
  }
}

}  // namespace
}  // namespace matserve
