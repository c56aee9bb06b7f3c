// The unit of work the engine computes: an operation on views of caller-owned
// memory.
#ifndef MATSERVE_SERVER_ENGINE_JOB_H_
#define MATSERVE_SERVER_ENGINE_JOB_H_

#include <cstdint>
#include <variant>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/time/time.h"

namespace matserve::engine {

// C = A * B, all row-major float32: A is m x k, B is k x n, C is m x n.
struct MultiplyOp {
  uint32_t m = 0;
  uint32_t k = 0;
  uint32_t n = 0;
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
};

// output (cols x rows) = input (rows x cols) transposed, row-major float32.
struct TransposeOp {
  uint32_t rows = 0;
  uint32_t cols = 0;
  const float* input = nullptr;
  float* output = nullptr;
};

using Op = std::variant<MultiplyOp, TransposeOp>;

// A validated request. Whoever submits it keeps the memory behind `op` alive
// until `done` has run; the engine calls `done` exactly once, on one of its
// worker threads.
struct Job {
  Op op;
  absl::Time deadline = absl::InfiniteFuture();
  absl::AnyInvocable<void(absl::Status) &&> done;
};

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_JOB_H_
