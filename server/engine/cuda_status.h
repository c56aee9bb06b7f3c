// CudaStatus and MATSERVE_CUDA_RETURN_IF_ERROR: the one place a cudaError_t
// becomes a Status.
#ifndef MATSERVE_SERVER_ENGINE_CUDA_STATUS_H_
#define MATSERVE_SERVER_ENGINE_CUDA_STATUS_H_

#include <cuda_runtime.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/engine/status_macros.h"

namespace matserve::engine {

// OK for cudaSuccess; RESOURCE_EXHAUSTED for an allocation failure; INTERNAL
// otherwise. `what` names the call that failed.
inline absl::Status CudaStatus(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  std::string message =
      absl::StrCat("CUDA error in ", what, ": ", cudaGetErrorName(error), " (",
                   cudaGetErrorString(error), ")");
  if (error == cudaErrorMemoryAllocation)
    return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

}  // namespace matserve::engine

#define MATSERVE_CUDA_RETURN_IF_ERROR(call) \
  MATSERVE_RETURN_IF_ERROR(::matserve::engine::CudaStatus((call), #call))

#endif  // MATSERVE_SERVER_ENGINE_CUDA_STATUS_H_
