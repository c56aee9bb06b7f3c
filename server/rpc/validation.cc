// Request validation. The order matters: the element count is bounded before it
// is multiplied by the element size, so that no product can wrap (a 2^32 x 2^32
// matrix has 2^64 elements).
#include "server/rpc/validation.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "server/engine/status_macros.h"

namespace matserve::rpc {
namespace {

absl::Status CheckElements(absl::string_view name, uint64_t rows, uint64_t cols,
                           const Limits& limits) {
  const uint64_t elements = rows * cols;  // both < 2^32: no wrap in 64 bits
  if (elements > limits.max_elements) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, " is ", rows, "x", cols, " = ", elements,
                     " elements, over this server's limit of ",
                     limits.max_elements, " (--max_elements)"));
  }
  return absl::OkStatus();
}

absl::Status CheckMatrix(absl::string_view name, bool present,
                         const v1::Matrix& matrix, const Limits& limits) {
  if (!present)
    return absl::InvalidArgumentError(absl::StrCat("missing matrix ", name));
  if (matrix.rows() == 0 || matrix.cols() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " is ", matrix.rows(), "x", matrix.cols(),
                     ": every dimension must be at least 1"));
  }
  if (matrix.dtype() != v1::DTYPE_FLOAT32) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ".dtype is ", static_cast<int>(matrix.dtype()),
                     ": only DTYPE_FLOAT32 (0) is supported"));
  }
  MATSERVE_RETURN_IF_ERROR(
      CheckElements(name, matrix.rows(), matrix.cols(), limits));
  const uint64_t expected =
      uint64_t{matrix.rows()} * matrix.cols() * sizeof(float);
  if (matrix.data().size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ".data has ", matrix.data().size(), " bytes; a ", matrix.rows(),
        "x", matrix.cols(), " float32 matrix needs exactly ", expected));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateMultiply(const v1::MultiplyRequest& request,
                              const Limits& limits) {
  MATSERVE_RETURN_IF_ERROR(
      CheckMatrix("a", request.has_a(), request.a(), limits));
  MATSERVE_RETURN_IF_ERROR(
      CheckMatrix("b", request.has_b(), request.b(), limits));
  const v1::Matrix& a = request.a();
  const v1::Matrix& b = request.b();
  if (a.cols() != b.rows()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "inner dimensions differ: a is ", a.rows(), "x", a.cols(), " and b is ",
        b.rows(), "x", b.cols(), " (a.cols must equal b.rows)"));
  }
  return CheckElements("the product c", a.rows(), b.cols(), limits);
}

absl::Status ValidateTranspose(const v1::TransposeRequest& request,
                               const Limits& limits) {
  return CheckMatrix("input", request.has_input(), request.input(), limits);
}

}  // namespace matserve::rpc
