// Workload::Prepare, Pick, and CheckAnswer.
#include "client/load/workload.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/client.h"
#include "client/reference.h"
#include "matserve/v1/matrix_service.grpc.pb.h"

namespace matserve::load {
namespace {

// How much float64 reference a multiply shape may cost, in multiply-adds
// (about a quarter of a second).
constexpr uint64_t kReferenceBudget = uint64_t{1} << 28;

std::string MethodName(absl::string_view rpc) {
  return absl::StrCat("/", v1::MatrixService::service_full_name(), "/", rpc);
}

template <typename Message>
grpc::ByteBuffer Serialize(const Message& message) {
  grpc::ByteBuffer buffer;
  bool own_buffer = false;
  grpc::SerializationTraits<Message>::Serialize(message, &buffer, &own_buffer);
  return buffer;
}

template <typename Message>
bool Parse(grpc::ByteBuffer* buffer, Message* message) {
  return grpc::SerializationTraits<Message>::Deserialize(buffer, message).ok();
}

// Fills op->checked_rows and op->reference_rows for C = a * b.
void PrepareReference(const Matrix& a, const Matrix& b, PreparedOp* op) {
  const uint64_t per_row = uint64_t{a.cols} * b.cols;
  const uint32_t count = static_cast<uint32_t>(
      std::clamp<uint64_t>(kReferenceBudget / per_row, 1, a.rows));
  Matrix a_rows{count, a.cols, std::vector<float>(uint64_t{count} * a.cols)};
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t row =
        count == 1
            ? 0
            : static_cast<uint32_t>(uint64_t{i} * (a.rows - 1) / (count - 1));
    op->checked_rows.push_back(row);
    std::copy_n(&a.values[uint64_t{row} * a.cols], a.cols,
                &a_rows.values[uint64_t{i} * a.cols]);
  }
  op->reference_rows = ReferenceMultiply(a_rows, b);
}

absl::Status Wrong(const Operation& op, absl::string_view what) {
  return absl::DataLossError(absl::StrCat(op.Name(), ": ", what));
}

// OK when `answer` is rows x cols with the data to match.
absl::Status CheckShape(const Operation& op, const v1::Matrix& answer,
                        uint32_t rows, uint32_t cols) {
  if (answer.rows() == rows && answer.cols() == cols &&
      answer.data().size() == uint64_t{rows} * cols * sizeof(float)) {
    return absl::OkStatus();
  }
  return Wrong(op, absl::StrCat("the answer is ", answer.rows(), "x",
                                answer.cols(), " with ", answer.data().size(),
                                " bytes of data, expected ", rows, "x", cols));
}

absl::Status CheckProduct(const PreparedOp& prepared,
                          const v1::MultiplyResponse& answer) {
  const Operation& op = prepared.op;
  if (absl::Status shape = CheckShape(op, answer.c(), op.m, op.n);
      !shape.ok()) {
    return shape;
  }
  const char* data = answer.c().data().data();
  std::vector<float> got(prepared.reference_rows.size());
  for (size_t i = 0; i < prepared.checked_rows.size(); ++i) {
    std::memcpy(&got[i * op.n],
                data + uint64_t{prepared.checked_rows[i]} * op.n * 4,
                op.n * sizeof(float));
  }
  const double error = RelativeError(got, prepared.reference_rows);
  if (error <= kMultiplyTolerance) return absl::OkStatus();
  return Wrong(
      op,
      absl::StrFormat("normwise relative error %.3g over %zu checked rows, "
                      "above the %.0e tolerance",
                      error, prepared.checked_rows.size(), kMultiplyTolerance));
}

absl::Status CheckTranspose(const PreparedOp& prepared,
                            const v1::TransposeResponse& answer) {
  const Operation& op = prepared.op;
  const Matrix& input = prepared.input;
  if (absl::Status shape = CheckShape(op, answer.output(), op.n, op.m);
      !shape.ok()) {
    return shape;
  }
  const char* data = answer.output().data().data();
  for (uint32_t c = 0; c < input.cols; ++c) {
    for (uint32_t r = 0; r < input.rows; ++r) {
      const float want = input.at(r, c);
      const char* got = data + (uint64_t{c} * input.rows + r) * sizeof(float);
      if (std::memcmp(got, &want, sizeof(float)) != 0) {
        float value;
        std::memcpy(&value, got, sizeof(float));
        return Wrong(
            op, absl::StrFormat("output(%u, %u) is %g, not input(%u, %u) = %g",
                                c, r, value, r, c, want));
      }
    }
  }
  return absl::OkStatus();
}

// SplitMix64: consecutive call numbers to well-spread 64-bit values.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9;
  x = (x ^ (x >> 27)) * 0x94d049bb133111eb;
  return x ^ (x >> 31);
}

}  // namespace

Workload Workload::Prepare(const std::vector<Operation>& mix, bool verifiable,
                           uint64_t seed) {
  Workload workload;
  workload.ops_.reserve(mix.size());
  std::mt19937_64 rng(seed);
  double total_weight = 0;
  for (const Operation& op : mix) {
    PreparedOp& prepared = workload.ops_.emplace_back();
    prepared.op = op;
    if (op.kind == Operation::Kind::kMultiply) {
      const Matrix a = RandomMatrix(op.m, op.k, rng);
      const Matrix b = RandomMatrix(op.k, op.n, rng);
      v1::MultiplyRequest request;
      ToProto(a, request.mutable_a());
      ToProto(b, request.mutable_b());
      prepared.method = MethodName("Multiply");
      prepared.request = Serialize(request);
      if (verifiable) PrepareReference(a, b, &prepared);
    } else {
      Matrix input = RandomMatrix(op.m, op.n, rng);
      v1::TransposeRequest request;
      ToProto(input, request.mutable_input());
      prepared.method = MethodName("Transpose");
      prepared.request = Serialize(request);
      if (verifiable) prepared.input = std::move(input);
    }
    total_weight += op.weight;
    workload.cumulative_weights_.push_back(total_weight);
  }
  return workload;
}

const PreparedOp& Workload::Pick(uint64_t sequence) const {
  const double point = (Mix(sequence) >> 11) * 0x1.0p-53 *  // in [0, 1)
                       cumulative_weights_.back();
  const size_t index = std::upper_bound(cumulative_weights_.begin(),
                                        cumulative_weights_.end(), point) -
                       cumulative_weights_.begin();
  return ops_[std::min(index, ops_.size() - 1)];
}

absl::Status CheckAnswer(const PreparedOp& op, grpc::ByteBuffer* response) {
  if (op.op.kind == Operation::Kind::kMultiply) {
    v1::MultiplyResponse answer;
    if (!Parse(response, &answer)) {
      return Wrong(op.op, "the answer is not a MultiplyResponse");
    }
    return CheckProduct(op, answer);
  }
  v1::TransposeResponse answer;
  if (!Parse(response, &answer)) {
    return Wrong(op.op, "the answer is not a TransposeResponse");
  }
  return CheckTranspose(op, answer);
}

}  // namespace matserve::load
