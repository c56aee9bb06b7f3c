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

// The RPC an Op comes from; batches never mix methods.
enum class Method { kMultiply, kTranspose };
inline constexpr Method kMethods[] = {Method::kMultiply, Method::kTranspose};

// "Multiply", "Transpose": the RPC's name, as metrics label it.
inline const char* MethodName(Method method) {
  return method == Method::kMultiply ? "Multiply" : "Transpose";
}

inline Method MethodOf(const Op& op) {
  return std::holds_alternative<MultiplyOp>(op) ? Method::kMultiply
                                                : Method::kTranspose;
}

// Bytes of a rows x cols float32 matrix, in 64 bits.
inline uint64_t MatrixBytes(uint64_t rows, uint64_t cols) {
  return rows * cols * sizeof(float);
}

// The bytes an Op reads (A and B, or the input).
inline uint64_t InputBytes(const Op& op) {
  if (const auto* m = std::get_if<MultiplyOp>(&op)) {
    return MatrixBytes(m->m, m->k) + MatrixBytes(m->k, m->n);
  }
  const auto& t = std::get<TransposeOp>(op);
  return MatrixBytes(t.rows, t.cols);
}

// The bytes an Op writes (C, or the output).
inline uint64_t OutputBytes(const Op& op) {
  if (const auto* m = std::get_if<MultiplyOp>(&op)) {
    return MatrixBytes(m->m, m->n);
  }
  const auto& t = std::get<TransposeOp>(op);
  return MatrixBytes(t.rows, t.cols);
}

// 2*m*n*k for a multiply (a multiply and an add per term), 0 for a transpose.
inline double Flops(const Op& op) {
  const auto* m = std::get_if<MultiplyOp>(&op);
  return m == nullptr ? 0.0 : 2.0 * m->m * m->n * m->k;
}

// A validated request. Whoever submits it keeps the memory behind `op` alive
// until `done` has run; the engine calls `done` exactly once, on one of its
// worker threads.
struct Job {
  Op op;
  absl::Time deadline = absl::InfiniteFuture();
  // When the request reached the server; queue waits count from here.
  absl::Time arrival = absl::InfinitePast();
  // True once the client has given up (may be empty: never). The engine asks
  // from its worker threads before compute.
  absl::AnyInvocable<bool() const> cancelled;
  absl::AnyInvocable<void(absl::Status) &&> done;
};

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_JOB_H_
