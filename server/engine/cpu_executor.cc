// CpuExecutor: row-major Eigen maps over the job's buffers; no copies in or
// out.
#include "server/engine/cpu_executor.h"

#include <Eigen/Core>
#include <new>
#include <variant>

#include "absl/strings/str_cat.h"

namespace matserve::engine {
namespace {

using RowMajor =
    Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

absl::Status Compute(const MultiplyOp& op) {
  Eigen::Map<const RowMajor> a(op.a, op.m, op.k);
  Eigen::Map<const RowMajor> b(op.b, op.k, op.n);
  Eigen::Map<RowMajor> c(op.c, op.m, op.n);
  c.noalias() = a * b;
  return absl::OkStatus();
}

absl::Status Compute(const TransposeOp& op) {
  Eigen::Map<const RowMajor> input(op.input, op.rows, op.cols);
  Eigen::Map<RowMajor> output(op.output, op.cols, op.rows);
  output.noalias() = input.transpose();
  return absl::OkStatus();
}

}  // namespace

absl::Status CpuExecutor::Run(const Op& op) {
  try {
    return std::visit([](const auto& o) { return Compute(o); }, op);
  } catch (const std::bad_alloc&) {  // Eigen's GEMM blocking buffers
    return absl::ResourceExhaustedError("cpu backend: out of host memory");
  }
}

std::string CpuExecutor::Describe() const {
  return absl::StrCat("cpu (Eigen ", EIGEN_WORLD_VERSION, ".",
                      EIGEN_MAJOR_VERSION, ".", EIGEN_MINOR_VERSION, ", ",
                      Eigen::nbThreads(), " threads)");
}

}  // namespace matserve::engine
