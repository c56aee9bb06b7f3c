// ToGrpcStatus: the one place an absl::Status becomes a grpc::Status.
#ifndef MATSERVE_SERVER_RPC_STATUS_H_
#define MATSERVE_SERVER_RPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace matserve::rpc {

// Same code (Abseil's canonical codes are gRPC's), same message.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace matserve::rpc

#endif  // MATSERVE_SERVER_RPC_STATUS_H_
