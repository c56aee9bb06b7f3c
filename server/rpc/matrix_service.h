// MatrixService: the gRPC callback handlers. They validate, hand a Job to the
// engine and return at once; the engine's worker finishes the call.
#ifndef MATSERVE_SERVER_RPC_MATRIX_SERVICE_H_
#define MATSERVE_SERVER_RPC_MATRIX_SERVICE_H_

#include "matserve/v1/matrix_service.grpc.pb.h"
#include "server/engine/engine.h"
#include "server/engine/observer.h"
#include "server/rpc/validation.h"

namespace matserve::rpc {

class MatrixService final : public v1::MatrixService::CallbackService {
 public:
  // `engine` and `observer` outlive this service and every call it accepted.
  // The observer hears of every call: its start, and its answer.
  MatrixService(engine::Engine* engine, Limits limits,
                engine::Observer* observer)
      : engine_(engine), limits_(limits), observer_(observer) {}

  grpc::ServerUnaryReactor* Multiply(grpc::CallbackServerContext* context,
                                     const v1::MultiplyRequest* request,
                                     v1::MultiplyResponse* response) override;
  grpc::ServerUnaryReactor* Transpose(grpc::CallbackServerContext* context,
                                      const v1::TransposeRequest* request,
                                      v1::TransposeResponse* response) override;

 private:
  engine::Engine* const engine_;
  const Limits limits_;
  engine::Observer* const observer_;
};

}  // namespace matserve::rpc

#endif  // MATSERVE_SERVER_RPC_MATRIX_SERVICE_H_
