// ToGrpcStatus.
#include "server/rpc/status.h"

#include <string>

namespace matserve::rpc {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

}  // namespace matserve::rpc
