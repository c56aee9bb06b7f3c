// The random matrix sides that the kernels' random checks draw: the fuzzer
// (kernel_fuzz.cu) and cuda_test's random batches.
#ifndef MATSERVE_KERNELS_BENCH_RANDOM_SIDE_H_
#define MATSERVE_KERNELS_BENCH_RANDOM_SIDE_H_

#include <cstdint>
#include <random>

namespace matserve::kernels::bench {

// A side up to 64 * max_tiles + 16 (max_tiles at least 2), one of four kinds
// equally often: anywhere from 1 to 64 * max_tiles, near a multiple of 64
// (where a batch's whole 64s are cut from its edges), 5-16 past one (where a
// strip takes the last columns), or on one.
inline int64_t RandomSide(std::mt19937_64& rng, int64_t max_tiles) {
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  switch (uniform(0, 3)) {
    case 0:
      return uniform(1, 64 * max_tiles);
    case 1:
      return 64 * uniform(1, max_tiles) + uniform(-4, 4);
    case 2:
      return 64 * uniform(2, max_tiles) + uniform(5, 16);
    default:
      return 64 * uniform(1, max_tiles);
  }
}

}  // namespace matserve::kernels::bench

#endif  // MATSERVE_KERNELS_BENCH_RANDOM_SIDE_H_
