// MatrixService handlers. gRPC owns the request and response until Finish, so
// the Job's views into them stay valid until the engine calls done.
#include "server/rpc/matrix_service.h"

#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/time/time.h"
#include "server/rpc/status.h"

namespace matserve::rpc {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "Matrix.data is little-endian float32, read in place");

// protobuf keeps bytes fields in std::string, whose heap and inline buffers are
// both aligned for float, so the wire bytes are used where they lie.
const float* Floats(const v1::Matrix& matrix) {
  return reinterpret_cast<const float*>(matrix.data().data());
}

// Shapes `matrix` as rows x cols and returns its data, sized for the result.
float* ResultBuffer(v1::Matrix* matrix, uint32_t rows, uint32_t cols) {
  matrix->set_rows(rows);
  matrix->set_cols(cols);
  std::string* data = matrix->mutable_data();
  data->resize(uint64_t{rows} * cols * sizeof(float));
  return reinterpret_cast<float*>(data->data());
}

// Hands `op` to the engine with a done callback that finishes the call; answers
// at once if the request is invalid or the engine refuses it.
grpc::ServerUnaryReactor* Dispatch(grpc::CallbackServerContext* context,
                                   engine::Engine* engine,
                                   absl::Status validation,
                                   absl::FunctionRef<engine::Op()> op) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  if (!validation.ok()) {
    reactor->Finish(ToGrpcStatus(validation));
    return reactor;
  }
  engine::Job job{op(), absl::FromChrono(context->deadline()),
                  [reactor](absl::Status status) {
                    reactor->Finish(ToGrpcStatus(status));
                  }};
  if (absl::Status submitted = engine->Submit(std::move(job));
      !submitted.ok()) {
    reactor->Finish(ToGrpcStatus(submitted));
  }
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* MatrixService::Multiply(
    grpc::CallbackServerContext* context, const v1::MultiplyRequest* request,
    v1::MultiplyResponse* response) {
  return Dispatch(
      context, engine_, ValidateMultiply(*request, limits_),
      [&]() -> engine::Op {
        const v1::Matrix& a = request->a();
        const v1::Matrix& b = request->b();
        return engine::MultiplyOp{
            a.rows(),  b.rows(),
            b.cols(),  Floats(a),
            Floats(b), ResultBuffer(response->mutable_c(), a.rows(), b.cols())};
      });
}

grpc::ServerUnaryReactor* MatrixService::Transpose(
    grpc::CallbackServerContext* context, const v1::TransposeRequest* request,
    v1::TransposeResponse* response) {
  return Dispatch(context, engine_, ValidateTranspose(*request, limits_),
                  [&]() -> engine::Op {
                    const v1::Matrix& input = request->input();
                    return engine::TransposeOp{
                        input.rows(), input.cols(), Floats(input),
                        ResultBuffer(response->mutable_output(), input.cols(),
                                     input.rows())};
                  });
}

}  // namespace matserve::rpc
