// Table-driven tests of request validation: every bad input gets its code and a
// message that names the problem.
#include "server/rpc/validation.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace matserve::rpc {
namespace {

v1::Matrix MakeMatrix(uint32_t rows, uint32_t cols) {
  v1::Matrix m;
  m.set_rows(rows);
  m.set_cols(cols);
  m.set_data(std::string(uint64_t{rows} * cols * 4, '\x3f'));
  return m;
}

v1::MultiplyRequest MakeMultiply(uint32_t m, uint32_t k, uint32_t n) {
  v1::MultiplyRequest request;
  *request.mutable_a() = MakeMatrix(m, k);
  *request.mutable_b() = MakeMatrix(k, n);
  return request;
}

struct MultiplyCase {
  std::string name;
  std::function<void(v1::MultiplyRequest&)>
      spoil;  // applied to a valid 3x4 * 4x5 request
  absl::StatusCode code;
  std::string message;  // a part the message must contain
};

class ValidateMultiplyTest : public ::testing::TestWithParam<MultiplyCase> {};

TEST_P(ValidateMultiplyTest, RejectsWithCodeAndMessage) {
  v1::MultiplyRequest request = MakeMultiply(3, 4, 5);
  GetParam().spoil(request);
  const absl::Status status =
      ValidateMultiply(request, Limits{.max_elements = 1000});
  EXPECT_EQ(status.code(), GetParam().code) << status;
  EXPECT_NE(status.message().find(GetParam().message), std::string::npos)
      << status;
}

constexpr uint32_t k65536 = 65536;

INSTANTIATE_TEST_SUITE_P(
    BadRequests, ValidateMultiplyTest,
    ::testing::Values(
        MultiplyCase{"MissingA", [](auto& r) { r.clear_a(); },
                     absl::StatusCode::kInvalidArgument, "missing matrix a"},
        MultiplyCase{"MissingB", [](auto& r) { r.clear_b(); },
                     absl::StatusCode::kInvalidArgument, "missing matrix b"},
        MultiplyCase{"ZeroRows", [](auto& r) { r.mutable_a()->set_rows(0); },
                     absl::StatusCode::kInvalidArgument,
                     "a is 0x4: every dimension"},
        MultiplyCase{"ZeroCols", [](auto& r) { r.mutable_b()->set_cols(0); },
                     absl::StatusCode::kInvalidArgument,
                     "b is 4x0: every dimension"},
        MultiplyCase{"ShortData",
                     [](auto& r) { r.mutable_a()->mutable_data()->pop_back(); },
                     absl::StatusCode::kInvalidArgument, "a.data has 47 bytes"},
        MultiplyCase{
            "LongData",
            [](auto& r) { r.mutable_b()->mutable_data()->push_back('x'); },
            absl::StatusCode::kInvalidArgument, "b.data has 81 bytes"},
        MultiplyCase{"EmptyData", [](auto& r) { r.mutable_b()->clear_data(); },
                     absl::StatusCode::kInvalidArgument, "needs exactly 80"},
        MultiplyCase{"UnknownDtype",
                     [](auto& r) {
                       r.mutable_a()->set_dtype(static_cast<v1::DType>(7));
                     },
                     absl::StatusCode::kInvalidArgument, "a.dtype is 7"},
        MultiplyCase{"InnerDimensionsDiffer",
                     [](auto& r) { *r.mutable_b() = MakeMatrix(5, 5); },
                     absl::StatusCode::kInvalidArgument,
                     "inner dimensions differ: a is 3x4"},
        MultiplyCase{
            "AOverLimit", [](auto& r) { *r.mutable_a() = MakeMatrix(251, 4); },
            absl::StatusCode::kResourceExhausted, "a is 251x4 = 1004 elements"},
        MultiplyCase{"ProductOverLimit",
                     [](auto& r) {
                       *r.mutable_a() = MakeMatrix(100, 1);
                       *r.mutable_b() = MakeMatrix(1, 11);
                     },
                     absl::StatusCode::kResourceExhausted,
                     "the product c is 100x11"},
        // 65536 * 65536 * 4 wraps to 0 in 32 bits, which would match empty
        // data.
        MultiplyCase{"HugeShapeWithEmptyData",
                     [](auto& r) {
                       r.mutable_a()->set_rows(k65536);
                       r.mutable_a()->set_cols(k65536);
                       r.mutable_a()->clear_data();
                     },
                     absl::StatusCode::kResourceExhausted,
                     "4294967296 elements"},
        MultiplyCase{"LargestDimensions",
                     [](auto& r) {
                       r.mutable_b()->set_rows(UINT32_MAX);
                       r.mutable_b()->set_cols(UINT32_MAX);
                     },
                     absl::StatusCode::kResourceExhausted,
                     "18446744065119617025 elements"}),
    [](const auto& info) { return info.param.name; });

TEST(ValidateMultiply, AcceptsValidShapes) {
  const Limits limits{.max_elements = 1000};
  EXPECT_TRUE(ValidateMultiply(MakeMultiply(1, 1, 1), limits).ok());
  EXPECT_TRUE(ValidateMultiply(MakeMultiply(3, 4, 5), limits).ok());
  EXPECT_TRUE(
      ValidateMultiply(MakeMultiply(1000, 1, 1), limits).ok());  // at the limit
}

TEST(ValidateMultiply, HugeShapeIsRejectedUnderTheDefaultLimitToo) {
  v1::MultiplyRequest request = MakeMultiply(1, 1, 1);
  request.mutable_a()->set_rows(k65536);
  request.mutable_a()->set_cols(k65536);
  request.mutable_a()->clear_data();
  EXPECT_EQ(ValidateMultiply(request, Limits{}).code(),
            absl::StatusCode::kResourceExhausted);
}

struct TransposeCase {
  std::string name;
  std::function<void(v1::TransposeRequest&)>
      spoil;  // applied to a valid 6x7 request
  absl::StatusCode code;
  std::string message;
};

class ValidateTransposeTest : public ::testing::TestWithParam<TransposeCase> {};

TEST_P(ValidateTransposeTest, RejectsWithCodeAndMessage) {
  v1::TransposeRequest request;
  *request.mutable_input() = MakeMatrix(6, 7);
  GetParam().spoil(request);
  const absl::Status status =
      ValidateTranspose(request, Limits{.max_elements = 100});
  EXPECT_EQ(status.code(), GetParam().code) << status;
  EXPECT_NE(status.message().find(GetParam().message), std::string::npos)
      << status;
}

INSTANTIATE_TEST_SUITE_P(
    BadRequests, ValidateTransposeTest,
    ::testing::Values(
        TransposeCase{"Missing", [](auto& r) { r.clear_input(); },
                      absl::StatusCode::kInvalidArgument,
                      "missing matrix input"},
        TransposeCase{"ZeroRows",
                      [](auto& r) { r.mutable_input()->set_rows(0); },
                      absl::StatusCode::kInvalidArgument, "input is 0x7"},
        TransposeCase{
            "WrongLength", [](auto& r) { r.mutable_input()->set_cols(6); },
            absl::StatusCode::kInvalidArgument, "input.data has 168 bytes"},
        TransposeCase{"OverLimit",
                      [](auto& r) { *r.mutable_input() = MakeMatrix(11, 10); },
                      absl::StatusCode::kResourceExhausted,
                      "over this server's limit of 100"}),
    [](const auto& info) { return info.param.name; });

TEST(ValidateTranspose, AcceptsValidShapes) {
  v1::TransposeRequest request;
  *request.mutable_input() = MakeMatrix(1, 100);
  EXPECT_TRUE(ValidateTranspose(request, Limits{.max_elements = 100}).ok());
}

}  // namespace
}  // namespace matserve::rpc
