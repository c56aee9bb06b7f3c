// The servers' shared start-up and stop: see serving.h.
#include "server/serving.h"

#include <grpcpp/security/server_credentials.h>
#include <pthread.h>

#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace matserve {

StopSignals::StopSignals() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

int StopSignals::Wait() {
  int signal_number = 0;
  sigwait(&signals_, &signal_number);
  return signal_number;
}

absl::StatusOr<int> MessageLimit(int64_t max_message_bytes) {
  if (max_message_bytes < 1 ||
      max_message_bytes > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_message_bytes=", max_message_bytes,
                     ": must be in [1, 2^31 - 1]"));
  }
  return static_cast<int>(max_message_bytes);
}

std::unique_ptr<grpc::Server> StartListening(grpc::ServerBuilder& builder,
                                             const std::string& address,
                                             int max_message_bytes,
                                             std::string* bound) {
  int port = 0;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(max_message_bytes);
  builder.SetMaxSendMessageSize(max_message_bytes);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) return nullptr;
  *bound = absl::StrCat(address.substr(0, address.rfind(':')), ":", port);
  return server;
}

}  // namespace matserve
