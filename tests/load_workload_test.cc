// matserve-load's workload: operations picked in proportion to their weights,
// and CheckAnswer, which passes right answers and catches wrong ones.
#include <grpcpp/impl/codegen/proto_utils.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "client/client.h"
#include "client/load/workload.h"
#include "client/reference.h"
#include "matserve/v1/matrix_service.grpc.pb.h"

namespace matserve::load {
namespace {

using Kind = Operation::Kind;

template <typename Message>
grpc::ByteBuffer Serialize(const Message& message) {
  grpc::ByteBuffer buffer;
  bool own_buffer = false;
  EXPECT_TRUE(grpc::SerializationTraits<Message>::Serialize(message, &buffer,
                                                            &own_buffer)
                  .ok());
  return buffer;
}

template <typename Message>
Message Parse(const grpc::ByteBuffer& buffer) {
  grpc::ByteBuffer copy = buffer;  // Deserialize consumes it
  Message message;
  EXPECT_TRUE(
      grpc::SerializationTraits<Message>::Deserialize(&copy, &message).ok());
  return message;
}

// The answer the service should give: A*B of the request rounded to float32.
v1::MultiplyResponse RightProduct(const PreparedOp& prepared) {
  const auto request = Parse<v1::MultiplyRequest>(prepared.request);
  const std::vector<double> c =
      ReferenceMultiply(*FromProto(request.a()), *FromProto(request.b()));
  v1::MultiplyResponse response;
  ToProto(Matrix{prepared.op.m, prepared.op.n,
                 std::vector<float>(c.begin(), c.end())},
          response.mutable_c());
  return response;
}

// Scales element (row, col) of `matrix` by `factor`.
void Scale(v1::Matrix* matrix, uint32_t row, uint32_t col, float factor) {
  char* at = matrix->mutable_data()->data() +
             (uint64_t{row} * matrix->cols() + col) * sizeof(float);
  float value;
  std::memcpy(&value, at, sizeof(float));
  value *= factor;
  std::memcpy(at, &value, sizeof(float));
}

absl::Status Check(const PreparedOp& op, const google::protobuf::Message& m) {
  grpc::ByteBuffer answer = Serialize(m);
  return CheckAnswer(op, &answer);
}

TEST(Workload, PicksInProportionToTheWeights) {
  const Workload workload = Workload::Prepare(
      {{Kind::kMultiply, 2, 2, 2, 1.0}, {Kind::kTranspose, 2, 0, 3, 3.0}},
      /*verifiable=*/false, /*seed=*/1);
  constexpr int kPicks = 100000;
  int transposes = 0;
  for (uint64_t i = 0; i < kPicks; ++i) {
    transposes += workload.Pick(i).op.kind == Kind::kTranspose;
  }
  EXPECT_NEAR(transposes / double(kPicks), 0.75, 0.01);
}

TEST(Workload, RequestsHoldTheShapes) {
  const Workload workload = Workload::Prepare(
      {{Kind::kMultiply, 3, 4, 5, 1.0}, {Kind::kTranspose, 6, 0, 7, 1.0}},
      /*verifiable=*/false, /*seed=*/1);
  const auto multiply = Parse<v1::MultiplyRequest>(workload.ops()[0].request);
  EXPECT_EQ(workload.ops()[0].method, "/matserve.v1.MatrixService/Multiply");
  EXPECT_EQ(multiply.a().rows(), 3u);
  EXPECT_EQ(multiply.b().cols(), 5u);
  EXPECT_EQ(multiply.b().data().size(), 4u * 5 * 4);
  const auto transpose = Parse<v1::TransposeRequest>(workload.ops()[1].request);
  EXPECT_EQ(workload.ops()[1].method, "/matserve.v1.MatrixService/Transpose");
  EXPECT_EQ(transpose.input().rows(), 6u);
  EXPECT_EQ(transpose.input().data().size(), 6u * 7 * 4);
}

TEST(CheckAnswer, ProductRightPassesWrongFails) {
  const Workload workload = Workload::Prepare(
      {{Kind::kMultiply, 37, 53, 29, 1.0}}, /*verifiable=*/true, /*seed=*/3);
  const PreparedOp& op = workload.ops()[0];
  EXPECT_EQ(op.checked_rows.size(), 37u) << "a small product is checked whole";
  v1::MultiplyResponse right = RightProduct(op);
  EXPECT_TRUE(Check(op, right).ok()) << Check(op, right);

  v1::MultiplyResponse off = right;
  Scale(off.mutable_c(), 20, 11, 1.01f);
  absl::Status wrong = Check(op, off);
  EXPECT_EQ(wrong.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(wrong.message().find("multiply:37x53x29: normwise relative error"),
            std::string::npos)
      << wrong;

  v1::MultiplyResponse zeros = right;  // what matserve-echo-server answers
  zeros.mutable_c()->mutable_data()->assign(37 * 29 * 4, '\0');
  EXPECT_FALSE(Check(op, zeros).ok());

  v1::MultiplyResponse transposed = right;
  transposed.mutable_c()->set_rows(29);
  transposed.mutable_c()->set_cols(37);
  EXPECT_NE(Check(op, transposed).message().find("the answer is 29x37"),
            std::string::npos);

  v1::MultiplyResponse short_data = right;
  short_data.mutable_c()->mutable_data()->resize(8);
  EXPECT_NE(Check(op, short_data).message().find("with 8 bytes of data"),
            std::string::npos);

  grpc::Slice garbage(std::string("\xff\xff\xff"));
  grpc::ByteBuffer not_proto(&garbage, 1);
  EXPECT_NE(CheckAnswer(op, &not_proto)
                .message()
                .find("the answer is not a MultiplyResponse"),
            std::string::npos);
}

// Over the reference budget (64 x 4096 x 4096 is 2^30 multiply-adds) the
// rows checked are spread from the first to the last, so an error in the
// last row, where partial tiles live, is caught.
TEST(CheckAnswer, LargeProductChecksSpreadRowsWithTheLast) {
  const Workload workload = Workload::Prepare(
      {{Kind::kMultiply, 64, 4096, 4096, 1.0}}, /*verifiable=*/true, 5);
  const PreparedOp& op = workload.ops()[0];
  ASSERT_EQ(op.checked_rows.size(), 16u);
  EXPECT_EQ(op.checked_rows.front(), 0u);
  EXPECT_EQ(op.checked_rows.back(), 63u);
  // An answer with the reference in the checked rows.
  Matrix c{64, 4096, std::vector<float>(64 * 4096)};
  for (size_t i = 0; i < op.checked_rows.size(); ++i) {
    for (uint32_t j = 0; j < 4096; ++j) {
      c.at(op.checked_rows[i], j) = op.reference_rows[i * 4096 + j];
    }
  }
  v1::MultiplyResponse answer;
  ToProto(c, answer.mutable_c());
  EXPECT_TRUE(Check(op, answer).ok()) << Check(op, answer);
  for (uint32_t j = 0; j < 4096; ++j) Scale(answer.mutable_c(), 63, j, 1.001f);
  EXPECT_FALSE(Check(op, answer).ok()) << "a wrong last row passed";
}

TEST(CheckAnswer, TransposeMustBeBitExact) {
  const Workload workload = Workload::Prepare(
      {{Kind::kTranspose, 3, 0, 5, 1.0}}, /*verifiable=*/true, /*seed=*/4);
  const PreparedOp& op = workload.ops()[0];
  Matrix transposed{5, 3, std::vector<float>(15)};
  for (uint32_t r = 0; r < 3; ++r) {
    for (uint32_t c = 0; c < 5; ++c) transposed.at(c, r) = op.input.at(r, c);
  }
  v1::TransposeResponse right;
  ToProto(transposed, right.mutable_output());
  EXPECT_TRUE(Check(op, right).ok()) << Check(op, right);

  v1::TransposeResponse one_bit = right;
  (*one_bit.mutable_output()->mutable_data())[4 * 7] ^= 1;  // lowest bit
  EXPECT_NE(Check(op, one_bit).message().find("output(2, 1)"),
            std::string::npos)
      << Check(op, one_bit);

  v1::TransposeResponse echoed;  // the input's bytes, dimensions swapped
  ToProto(op.input, echoed.mutable_output());
  echoed.mutable_output()->set_rows(5);
  echoed.mutable_output()->set_cols(3);
  EXPECT_FALSE(Check(op, echoed).ok());
}

}  // namespace
}  // namespace matserve::load
