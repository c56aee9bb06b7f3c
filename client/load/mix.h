// The workload of matserve-load: which operations, on which shapes, in which
// proportions (--mix=multiply:64x64x64,transpose:1024x1024:0.2).
#ifndef MATSERVE_CLIENT_LOAD_MIX_H_
#define MATSERVE_CLIENT_LOAD_MIX_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace matserve::load {

struct Operation {
  enum class Kind { kMultiply, kTranspose };
  Kind kind = Kind::kMultiply;
  // Multiply: A is m x k and B is k x n. Transpose: the input is m x n (k is
  // 0).
  uint32_t m = 0, k = 0, n = 0;
  double weight = 1.0;  // relative to the other operations of the mix

  std::string Name() const;  // "multiply:64x64x64", "transpose:1024x1024"
  double Flops() const;      // 2mkn for a multiply, 0 for a transpose
  // Matrix data on the wire (4 bytes an element): the inputs, and the result.
  uint64_t RequestBytes() const;
  uint64_t ResponseBytes() const;
};

// Parses comma-separated KIND:SHAPE[:WEIGHT] items: multiply:MxKxN or
// transpose:RxC, every dimension a whole number >= 1, the weight a positive
// number (default 1). The error message names the item and what is wrong.
absl::StatusOr<std::vector<Operation>> ParseMix(absl::string_view mix);

// The canonical form of a mix, which ParseMix reads back:
// "multiply:64x64x64,transpose:1024x1024:0.2" (weights of 1 left out).
std::string MixName(const std::vector<Operation>& mix);

}  // namespace matserve::load

#endif  // MATSERVE_CLIENT_LOAD_MIX_H_
