// The CUDA backend's factory: one executor per (device, stream). No CUDA types
// in this header, so main and the RPC layer can use it without CUDA headers.
#ifndef MATSERVE_SERVER_ENGINE_CUDA_EXECUTOR_H_
#define MATSERVE_SERVER_ENGINE_CUDA_EXECUTOR_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "server/engine/executor.h"

namespace matserve::engine {

// How many CUDA devices this process sees; an error (no driver, or a build
// without CUDA) says why there are none.
absl::StatusOr<int> CudaDeviceCount();

// `streams_per_device` executors on every visible device, each with its own
// stream and device buffers. UNAVAILABLE when no device is visible.
absl::StatusOr<std::vector<std::unique_ptr<Executor>>> MakeCudaExecutors(
    int streams_per_device);

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_CUDA_EXECUTOR_H_
