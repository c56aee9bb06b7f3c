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

// One call from its arrival to its answer, as the observer hears of it.
struct Call {
  Call(grpc::CallbackServerContext* context, engine::Observer* observer,
       engine::Method method, uint64_t request_bytes)
      : reactor(context->DefaultReactor()),
        observer(observer),
        method(method),
        arrival(absl::Now()),
        request_bytes(request_bytes) {
    observer->RequestStarted(method);
  }

  // Reports the answer, then sends it. An error carries no response payload.
  void Finish(const absl::Status& status, uint64_t response_bytes) const {
    observer->RequestFinished(method, status.code(), absl::Now() - arrival,
                              request_bytes, status.ok() ? response_bytes : 0);
    reactor->Finish(ToGrpcStatus(status));
  }

  grpc::ServerUnaryReactor* reactor;
  engine::Observer* observer;
  engine::Method method;
  absl::Time arrival;
  uint64_t request_bytes;
};

// Hands `op` to the engine with a done callback that finishes the call; answers
// at once if the request is invalid or the engine refuses it.
grpc::ServerUnaryReactor* Dispatch(grpc::CallbackServerContext* context,
                                   engine::Engine* engine, const Call& call,
                                   absl::Status validation,
                                   absl::FunctionRef<engine::Op()> op) {
  if (!validation.ok()) {
    call.Finish(validation, 0);
    return call.reactor;
  }
  engine::Op computed = op();
  const uint64_t response_bytes = engine::OutputBytes(computed);
  engine::Job job{
      .op = computed,
      .deadline = absl::FromChrono(context->deadline()),
      .arrival = call.arrival,
      .cancelled = [context] { return context->IsCancelled(); },
      .done = [call, response_bytes](
                  absl::Status status) { call.Finish(status, response_bytes); },
  };
  if (absl::Status submitted = engine->Submit(std::move(job));
      !submitted.ok()) {
    call.Finish(submitted, 0);
  }
  return call.reactor;
}

}  // namespace

grpc::ServerUnaryReactor* MatrixService::Multiply(
    grpc::CallbackServerContext* context, const v1::MultiplyRequest* request,
    v1::MultiplyResponse* response) {
  const Call call(
      context, observer_, engine::Method::kMultiply,
      request->a().data().size() + uint64_t{request->b().data().size()});
  return Dispatch(
      context, engine_, call, ValidateMultiply(*request, limits_),
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
  const Call call(context, observer_, engine::Method::kTranspose,
                  request->input().data().size());
  return Dispatch(context, engine_, call, ValidateTranspose(*request, limits_),
                  [&]() -> engine::Op {
                    const v1::Matrix& input = request->input();
                    return engine::TransposeOp{
                        input.rows(), input.cols(), Floats(input),
                        ResultBuffer(response->mutable_output(), input.cols(),
                                     input.rows())};
                  });
}

}  // namespace matserve::rpc
