// Client: one blocking unary call per operation on a shared channel.
#include "client/client.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace matserve {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the wire format is little-endian");

absl::Status ToAbslStatus(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

}  // namespace

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target,
                                           int max_message_bytes,
                                           bool own_connection) {
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(max_message_bytes);
  arguments.SetMaxSendMessageSize(max_message_bytes);
  if (own_connection) {
    // A subchannel pool of its own: no other channel can reuse its connection.
    arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  }
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                   arguments);
}

Client Client::Connect(const std::string& target, int max_message_bytes) {
  return Client(MakeChannel(target, max_message_bytes));
}

Client::Client(std::shared_ptr<grpc::Channel> channel)
    : stub_(v1::MatrixService::NewStub(std::move(channel))) {}

absl::StatusOr<Matrix> Client::Multiply(const Matrix& a, const Matrix& b,
                                        absl::Duration timeout) const {
  v1::MultiplyRequest request;
  ToProto(a, request.mutable_a());
  ToProto(b, request.mutable_b());
  v1::MultiplyResponse response;
  grpc::ClientContext context;
  SetDeadline(context, timeout);
  if (grpc::Status status = stub_->Multiply(&context, request, &response);
      !status.ok()) {
    return ToAbslStatus(status);
  }
  return FromProto(response.c());
}

absl::StatusOr<Matrix> Client::Transpose(const Matrix& input,
                                         absl::Duration timeout) const {
  v1::TransposeRequest request;
  ToProto(input, request.mutable_input());
  v1::TransposeResponse response;
  grpc::ClientContext context;
  SetDeadline(context, timeout);
  if (grpc::Status status = stub_->Transpose(&context, request, &response);
      !status.ok()) {
    return ToAbslStatus(status);
  }
  return FromProto(response.output());
}

void ToProto(const Matrix& matrix, v1::Matrix* proto) {
  proto->set_rows(matrix.rows);
  proto->set_cols(matrix.cols);
  proto->set_data(matrix.values.data(), matrix.values.size() * sizeof(float));
}

absl::StatusOr<Matrix> FromProto(const v1::Matrix& proto) {
  const uint64_t elements = uint64_t{proto.rows()} * proto.cols();
  if (proto.data().size() != elements * sizeof(float)) {
    return absl::DataLossError(absl::StrCat("response matrix is ", proto.rows(),
                                            "x", proto.cols(), " but carries ",
                                            proto.data().size(), " bytes"));
  }
  Matrix matrix{proto.rows(), proto.cols(), std::vector<float>(elements)};
  std::memcpy(matrix.values.data(), proto.data().data(), proto.data().size());
  return matrix;
}

}  // namespace matserve
