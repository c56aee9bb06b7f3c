// What matserve-server and matserve-echo-server share around their services:
// the stop signals, the message-size flag's check, and starting to listen.
#ifndef MATSERVE_SERVER_SERVING_H_
#define MATSERVE_SERVER_SERVING_H_

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <signal.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace matserve {

// SIGTERM and SIGINT, taken by Wait() instead of a handler. Construct it first
// in main, before any thread starts, so that every thread inherits the mask
// and none is interrupted.
class StopSignals {
 public:
  StopSignals();
  // Blocks until one of them arrives; returns its number.
  int Wait();

 private:
  sigset_t signals_;
};

// --max_message_bytes as gRPC takes it (an int); INVALID_ARGUMENT, naming the
// flag, outside [1, 2^31 - 1].
absl::StatusOr<int> MessageLimit(int64_t max_message_bytes);

// Starts `builder` (services registered) listening on `address` ("host:port";
// port 0 picks a free one) with messages up to `max_message_bytes` each way.
// Sets *bound to "host:port" with the port it got. nullptr when it cannot
// listen.
std::unique_ptr<grpc::Server> StartListening(grpc::ServerBuilder& builder,
                                             const std::string& address,
                                             int max_message_bytes,
                                             std::string* bound);

}  // namespace matserve

#endif  // MATSERVE_SERVER_SERVING_H_
