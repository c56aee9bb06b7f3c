// The CUDA backend's factory: one executor per (device, stream). No CUDA types
// in this header, so main and the RPC layer can use it without CUDA headers.
#ifndef MATSERVE_SERVER_ENGINE_CUDA_EXECUTOR_H_
#define MATSERVE_SERVER_ENGINE_CUDA_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/engine/executor.h"

namespace matserve::engine {

// How many CUDA devices this process sees; an error (no driver, or a build
// without CUDA) says why there are none.
absl::StatusOr<int> CudaDeviceCount();

// A device's memory as the driver reports it (cudaMemGetInfo): used counts
// every process's allocations, not only this one's.
struct DeviceMemory {
  uint64_t used_bytes = 0;
  uint64_t total_bytes = 0;
};
// Any thread; cheap enough for a metrics scrape.
absl::StatusOr<DeviceMemory> CudaDeviceMemory(int device);

struct CudaExecutorOptions {
  // CUDA device ordinals to serve on; empty for every visible device. An
  // executor's device() is its device's position in this list.
  std::vector<int> devices = {};
  int streams_per_device = 4;
  // Batches stage through pinned buffers that grow to what they need; a lone
  // request over this many bytes (inputs and outputs) is copied straight from
  // its own memory instead. The engine's max_batch_bytes bounds the rest.
  uint64_t max_staged_bytes = uint64_t{64} << 20;
  // Kernel variants by name (kernels.h: "auto", "naive", "tiled",
  // "register_blocked"; "auto", "tiled", "wide", "large_tile", "packed"):
  // anything but "auto" forces that variant for every shape, for experiments.
  std::string sgemm_variant = "auto";
  std::string transpose_variant = "auto";
};

// `streams_per_device` executors on each device, each with its own stream and
// staging buffers. INVALID_ARGUMENT for an unknown variant name or a device
// that is not visible, UNAVAILABLE when no device is visible.
absl::StatusOr<std::vector<std::unique_ptr<Executor>>> MakeCudaExecutors(
    const CudaExecutorOptions& options);

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_CUDA_EXECUTOR_H_
