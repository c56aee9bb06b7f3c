// matserve-echo-server: the transport floor. It serves matserve.v1's
// MatrixService with no compute and no batching: Multiply answers an M x N
// matrix of zeros (the bytes the real service sends back), Transpose the
// input's bytes with the dimensions swapped. matserve-load --floor_target runs
// the same load against it, to tell what gRPC alone allows on the machine.
#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "matserve/v1/matrix_service.grpc.pb.h"
#include "server/serving.h"

ABSL_FLAG(std::string, address, "0.0.0.0:50052",
          "host:port to listen on; port 0 picks a free port (the log line says "
          "which)");
ABSL_FLAG(int64_t, max_message_bytes, int64_t{1} << 30,
          "largest request or response message, in bytes");

namespace matserve {
namespace {

void Log(const std::string& line) {
  std::cerr << "matserve-echo-server: " << line << std::endl;
}

// The data of `matrix` holds rows * cols float32 values.
bool Consistent(const v1::Matrix& matrix) {
  return matrix.data().size() ==
         uint64_t{matrix.rows()} * matrix.cols() * sizeof(float);
}

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

class EchoService final : public v1::MatrixService::CallbackService {
 public:
  explicit EchoService(int64_t max_message_bytes)
      : max_message_bytes_(max_message_bytes) {}

  grpc::ServerUnaryReactor* Multiply(grpc::CallbackServerContext* context,
                                     const v1::MultiplyRequest* request,
                                     v1::MultiplyResponse* response) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    const v1::Matrix& a = request->a();
    const v1::Matrix& b = request->b();
    const uint64_t bytes = uint64_t{a.rows()} * b.cols() * sizeof(float);
    if (!Consistent(a) || !Consistent(b) || a.cols() != b.rows()) {
      reactor->Finish(Invalid("a and b must be M x K and K x N with data"));
    } else if (bytes > uint64_t(max_message_bytes_)) {
      reactor->Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                                   "the answer is over --max_message_bytes"));
    } else {
      v1::Matrix* c = response->mutable_c();
      c->set_rows(a.rows());
      c->set_cols(b.cols());
      c->mutable_data()->resize(bytes);  // zeros, written like a result
      reactor->Finish(grpc::Status::OK);
    }
    return reactor;
  }

  grpc::ServerUnaryReactor* Transpose(
      grpc::CallbackServerContext* context, const v1::TransposeRequest* request,
      v1::TransposeResponse* response) override {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    const v1::Matrix& input = request->input();
    if (!Consistent(input)) {
      reactor->Finish(Invalid("input must be R x C with data"));
    } else {
      v1::Matrix* output = response->mutable_output();
      output->set_rows(input.cols());
      output->set_cols(input.rows());
      output->set_data(input.data());  // copied, as a result would be written
      reactor->Finish(grpc::Status::OK);
    }
    return reactor;
  }

 private:
  const int64_t max_message_bytes_;
};

int Serve() {
  StopSignals stop_signals;  // before any thread starts
  const absl::StatusOr<int> max_message_bytes =
      MessageLimit(absl::GetFlag(FLAGS_max_message_bytes));
  if (!max_message_bytes.ok()) {
    Log(std::string(max_message_bytes.status().message()));
    return 2;
  }
  EchoService service(*max_message_bytes);
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  const std::string address = absl::GetFlag(FLAGS_address);
  std::string bound;
  std::unique_ptr<grpc::Server> server =
      StartListening(builder, address, *max_message_bytes, &bound);
  if (server == nullptr) {
    Log(absl::StrCat("cannot listen on ", address));
    return 1;
  }
  Log(absl::StrCat("serving on ", bound, " (no compute: the transport floor)"));
  stop_signals.Wait();
  server->Shutdown();
  Log("stopped");
  return 0;
}

}  // namespace
}  // namespace matserve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "matserve-echo-server: MatrixService with no compute, the transport "
      "floor for matserve-load");
  absl::ParseCommandLine(argc, argv);
  return matserve::Serve();
}
