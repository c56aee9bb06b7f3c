// The requests of a load run, made once: random inputs per operation of the
// mix, serialized once and shared by every call (gRPC sends a ByteBuffer by
// reference to its slices, not by copy), and what the answers are checked
// against.
#ifndef MATSERVE_CLIENT_LOAD_WORKLOAD_H_
#define MATSERVE_CLIENT_LOAD_WORKLOAD_H_

#include <grpcpp/support/byte_buffer.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "client/load/mix.h"
#include "client/matrix.h"

namespace matserve::load {

struct PreparedOp {
  Operation op;
  std::string method;        // "/matserve.v1.MatrixService/Multiply"
  grpc::ByteBuffer request;  // the serialized request
  // What CheckAnswer compares with; filled only for a verifiable workload.
  // Multiply: some rows of C (all of them for shapes up to ~2^28 multiply-adds,
  // evenly spaced ones with the first and the last beyond: the float64
  // reference of all of 4096^3 would take a minute) and those rows of A*B in
  // float64, row after row. Transpose: the input.
  std::vector<uint32_t> checked_rows;
  std::vector<double> reference_rows;
  Matrix input;
};

class Workload {
 public:
  // Random inputs in [-0.5, 1) from `seed` for every operation of `mix`; with
  // `verifiable`, the references too (seconds for shapes near 4096^3).
  static Workload Prepare(const std::vector<Operation>& mix, bool verifiable,
                          uint64_t seed);

  // The operation of call number `sequence`: a hash of it picks one with
  // probability proportional to its weight, without shared state, so that any
  // thread can pick.
  const PreparedOp& Pick(uint64_t sequence) const;

  const std::vector<PreparedOp>& ops() const { return ops_; }

 private:
  std::vector<PreparedOp> ops_;  // never resized once made: calls point in
  std::vector<double> cumulative_weights_;
};

// OK when `response` (the serialized answer to `op`, consumed) is right:
// multiply within kMultiplyTolerance of the reference (normwise, over the
// checked rows), transpose bit for bit. Otherwise a status that says what is
// wrong.
absl::Status CheckAnswer(const PreparedOp& op, grpc::ByteBuffer* response);

}  // namespace matserve::load

#endif  // MATSERVE_CLIENT_LOAD_WORKLOAD_H_
