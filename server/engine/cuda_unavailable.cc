// The CUDA backend's factory in a build without CUDA (MATSERVE_WITH_CUDA=OFF).
#include "server/engine/cuda_executor.h"

namespace matserve::engine {

absl::StatusOr<int> CudaDeviceCount() {
  return absl::UnavailableError(
      "this build has no CUDA backend (MATSERVE_WITH_CUDA=OFF)");
}

absl::StatusOr<DeviceMemory> CudaDeviceMemory(int) {
  return CudaDeviceCount().status();
}

absl::StatusOr<std::vector<std::unique_ptr<Executor>>> MakeCudaExecutors(
    const CudaExecutorOptions&) {
  return CudaDeviceCount().status();
}

}  // namespace matserve::engine
