// Executor: what computes a batch of Ops (a CUDA stream, or the CPU). The
// engine sees only this interface.
#ifndef MATSERVE_SERVER_ENGINE_EXECUTOR_H_
#define MATSERVE_SERVER_ENGINE_EXECUTOR_H_

#include <string>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "server/engine/job.h"
#include "server/engine/observer.h"

namespace matserve::engine {

class Executor {
 public:
  virtual ~Executor() = default;

  // Computes every op of `batch` (one method; shapes may differ) into its
  // output and returns when all outputs are written, or with the error that
  // fails the whole batch. Fills `record`'s timings and byte counts (compute,
  // host_to_device, device_to_host and their bytes, busy); the engine fills
  // the rest. Called by one engine worker thread at a time; the memory behind
  // the ops stays valid for the call.
  virtual absl::Status Run(absl::Span<const Op> batch, BatchRecord& record) = 0;

  // The device it runs on, an index into the visible devices (0 on the CPU).
  virtual int device() const = 0;

  // For logs: "cpu (eigen, 16 threads)", "cuda:0 NVIDIA H100 stream 2".
  virtual std::string Describe() const = 0;
};

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_EXECUTOR_H_
