// ParseMix and the sizes of an operation.
#include "client/load/mix.h"

#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace matserve::load {
namespace {

absl::Status BadItem(absl::string_view item, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("--mix item \"", item, "\": ", problem));
}

// "64x64x64" into `dims` (exactly dims.size() of them), or an error.
absl::Status ParseShape(absl::string_view item, absl::string_view shape,
                        absl::string_view expected,
                        std::vector<uint32_t*> dims) {
  const std::vector<absl::string_view> parts = absl::StrSplit(shape, 'x');
  if (parts.size() != dims.size()) {
    return BadItem(item, absl::StrCat("the shape must be ", expected,
                                      ", not \"", shape, "\""));
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!absl::SimpleAtoi(parts[i], dims[i]) || *dims[i] < 1) {
      return BadItem(item, absl::StrCat("dimension \"", parts[i],
                                        "\" is not a whole number >= 1"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Operation> ParseItem(absl::string_view item) {
  if (item.empty()) {
    return absl::InvalidArgumentError(
        "--mix has an empty item (two commas in a row, or one at an end)");
  }
  const std::vector<absl::string_view> fields = absl::StrSplit(item, ':');
  if (fields.size() < 2 || fields.size() > 3) {
    return BadItem(item,
                   "expected KIND:SHAPE[:WEIGHT], e.g. multiply:64x64x64 "
                   "or transpose:1024x1024:0.2");
  }
  Operation op;
  absl::Status shape;
  if (fields[0] == "multiply") {
    op.kind = Operation::Kind::kMultiply;
    shape = ParseShape(item, fields[1], "MxKxN", {&op.m, &op.k, &op.n});
  } else if (fields[0] == "transpose") {
    op.kind = Operation::Kind::kTranspose;
    shape = ParseShape(item, fields[1], "RxC", {&op.m, &op.n});
  } else {
    return BadItem(item, absl::StrCat("unknown operation \"", fields[0],
                                      "\" (expected multiply or transpose)"));
  }
  if (!shape.ok()) return shape;
  if (fields.size() == 3 && (!absl::SimpleAtod(fields[2], &op.weight) ||
                             !std::isfinite(op.weight) || op.weight <= 0)) {
    return BadItem(item, absl::StrCat("weight \"", fields[2],
                                      "\" is not a positive number"));
  }
  return op;
}

}  // namespace

std::string Operation::Name() const {
  return kind == Kind::kMultiply ? absl::StrCat("multiply:", m, "x", k, "x", n)
                                 : absl::StrCat("transpose:", m, "x", n);
}

double Operation::Flops() const {
  return kind == Kind::kMultiply ? 2.0 * m * k * n : 0.0;
}

uint64_t Operation::RequestBytes() const {
  const uint64_t elements = kind == Kind::kMultiply
                                ? uint64_t{m} * k + uint64_t{k} * n
                                : uint64_t{m} * n;
  return elements * sizeof(float);
}

uint64_t Operation::ResponseBytes() const {
  return uint64_t{m} * n * sizeof(float);
}

absl::StatusOr<std::vector<Operation>> ParseMix(absl::string_view mix) {
  if (mix.empty()) return absl::InvalidArgumentError("--mix is empty");
  std::vector<Operation> ops;
  for (absl::string_view item : absl::StrSplit(mix, ',')) {
    absl::StatusOr<Operation> op = ParseItem(item);
    if (!op.ok()) return op.status();
    ops.push_back(*op);
  }
  return ops;
}

std::string MixName(const std::vector<Operation>& mix) {
  return absl::StrJoin(mix, ",", [](std::string* out, const Operation& op) {
    absl::StrAppend(out, op.Name());
    if (op.weight != 1.0) absl::StrAppend(out, ":", op.weight);
  });
}

}  // namespace matserve::load
