// CpuExecutor: row-major Eigen maps over the job's buffers; no copies in or
// out.
#include "server/engine/cpu_executor.h"

#include <Eigen/Core>
#include <new>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace matserve::engine {
namespace {

using RowMajor =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void Compute(const MultiplyOp& op) {
  Eigen::Map<const RowMajor> a(op.a, op.m, op.k);
  Eigen::Map<const RowMajor> b(op.b, op.k, op.n);
  Eigen::Map<RowMajor> c(op.c, op.m, op.n);
  c.noalias() = a * b;
}

void Compute(const TransposeOp& op) {
  Eigen::Map<const RowMajor> input(op.input, op.rows, op.cols);
  Eigen::Map<RowMajor> output(op.output, op.cols, op.rows);
  output.noalias() = input.transpose();
}

}  // namespace

absl::Status CpuExecutor::Run(absl::Span<const Op> batch, BatchRecord& record) {
  // The ops run one after another, each on every core; the batch saves the
  // queue hand-offs, not arithmetic.
  const absl::Time start = absl::Now();
  try {
    for (const Op& op : batch) {
      std::visit([](const auto& o) { Compute(o); }, op);
    }
  } catch (const std::bad_alloc&) {  // Eigen's GEMM blocking buffers
    return absl::ResourceExhaustedError("cpu backend: out of host memory");
  }
  record.compute = absl::Now() - start;
  record.busy = record.compute;
  return absl::OkStatus();
}

std::string CpuExecutor::Describe() const {
  return absl::StrCat("cpu (Eigen ", EIGEN_WORLD_VERSION, ".",
                      EIGEN_MAJOR_VERSION, ".", EIGEN_MINOR_VERSION, ", ",
                      Eigen::nbThreads(), " threads)");
}

}  // namespace matserve::engine
