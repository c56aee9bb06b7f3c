// Division by a number the host knows before the launch, without a divide
// instruction.
#ifndef MATSERVE_KERNELS_FAST_DIVISOR_CUH_
#define MATSERVE_KERNELS_FAST_DIVISOR_CUH_

#include <cstdint>

namespace matserve::kernels {

// n / d for 0 <= n < 2^31 without a divide instruction: a multiply-high, an
// add and a shift (the round-up method, as CUTLASS's FastDivmod). The host
// fills it once per launch.
struct FastDivisor {
  uint32_t divisor, multiplier, shift;

  static FastDivisor For(uint32_t d) {
    uint32_t shift = 0;
    while ((uint64_t{1} << shift) < d) ++shift;
    const uint64_t multiplier =
        ((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1;
    return {d, static_cast<uint32_t>(multiplier), shift};
  }
  __device__ __forceinline__ uint32_t Divide(uint32_t n) const {
    return (__umulhi(n, multiplier) + n) >> shift;
  }
};

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_FAST_DIVISOR_CUH_
