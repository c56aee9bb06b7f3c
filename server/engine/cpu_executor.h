// CpuExecutor: Eigen GEMM and transpose on the host's cores, for machines
// without a GPU (and CI).
#ifndef MATSERVE_SERVER_ENGINE_CPU_EXECUTOR_H_
#define MATSERVE_SERVER_ENGINE_CPU_EXECUTOR_H_

#include <string>

#include "server/engine/executor.h"

namespace matserve::engine {

class CpuExecutor final : public Executor {
 public:
  // Eigen's GEMM spreads over OpenMP threads; one CpuExecutor therefore uses
  // every core.
  absl::Status Run(absl::Span<const Op> batch, BatchRecord& record) override;
  int device() const override { return 0; }
  std::string Describe() const override;
};

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_CPU_EXECUTOR_H_
