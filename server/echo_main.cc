// matserve-echo-server: the transport floor. It serves matserve.v1's
// MatrixService with no compute and no batching: Multiply answers an M x N
// matrix of zeros (the bytes the real service sends back), Transpose the
// input's bytes with the dimensions swapped. matserve-load --floor_target runs
// the same load against it, to tell what gRPC alone allows on the machine.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <cstdint>
#include <iostream>
#include <limits>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "matserve/v1/matrix_service.grpc.pb.h"

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
  sigset_t stop_signals;  // taken by sigwait below, in no other thread
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  const int64_t max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  if (max_message_bytes < 1 ||
      max_message_bytes > std::numeric_limits<int>::max()) {
    Log(absl::StrCat("--max_message_bytes=", max_message_bytes,
                     ": must be in [1, 2^31 - 1]"));
    return 2;
  }
  EchoService service(max_message_bytes);
  grpc::ServerBuilder builder;
  int port = 0;
  const std::string address = absl::GetFlag(FLAGS_address);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(max_message_bytes));
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    Log(absl::StrCat("cannot listen on ", address));
    return 1;
  }
  Log(absl::StrCat("serving on ", address.substr(0, address.rfind(':')), ":",
                   port, " (no compute: the transport floor)"));
  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
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
