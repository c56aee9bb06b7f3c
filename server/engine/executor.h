// Executor: what computes an Op (a CUDA stream, or the CPU). The engine sees
// only this interface.
#ifndef MATSERVE_SERVER_ENGINE_EXECUTOR_H_
#define MATSERVE_SERVER_ENGINE_EXECUTOR_H_

#include <string>

#include "absl/status/status.h"
#include "server/engine/job.h"

namespace matserve::engine {

class Executor {
 public:
  virtual ~Executor() = default;

  // Computes `op` into its output and returns when the output is written.
  // Called by one engine worker thread at a time; the memory behind `op` stays
  // valid for the call.
  virtual absl::Status Run(const Op& op) = 0;

  // For logs: "cpu (eigen, 16 threads)", "cuda:0 NVIDIA H100 stream 2".
  virtual std::string Describe() const = 0;
};

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_EXECUTOR_H_
