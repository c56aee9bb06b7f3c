// Request validation: every check between the wire and a Job, with messages
// that name the problem.
#ifndef MATSERVE_SERVER_RPC_VALIDATION_H_
#define MATSERVE_SERVER_RPC_VALIDATION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "matserve/v1/matrix_service.pb.h"

namespace matserve::rpc {

struct Limits {
  // The most elements any one matrix of a request or response may have.
  uint64_t max_elements = uint64_t{1} << 27;
};

// INVALID_ARGUMENT for a missing matrix, a zero dimension, an unknown dtype,
// data of the wrong length or inner dimensions that differ; RESOURCE_EXHAUSTED
// for a matrix (C included) over limits.max_elements. All sizes are computed in
// 64 bits.
absl::Status ValidateMultiply(const v1::MultiplyRequest& request,
                              const Limits& limits);

// As ValidateMultiply, for the single input matrix.
absl::Status ValidateTranspose(const v1::TransposeRequest& request,
                               const Limits& limits);

}  // namespace matserve::rpc

#endif  // MATSERVE_SERVER_RPC_VALIDATION_H_
