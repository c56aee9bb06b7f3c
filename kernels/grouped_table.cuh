// The problem table of a grouped launch (kernels.h), as its blocks read it.
#ifndef MATSERVE_KERNELS_GROUPED_TABLE_CUH_
#define MATSERVE_KERNELS_GROUPED_TABLE_CUH_

#include <cstdint>

#include "kernels/kernels.h"

namespace matserve::kernels {

// The entry of the problem whose blocks include `block`: by binary search,
// the last of entries[0, count) whose first_tile is at most `block`.
__device__ inline const GroupedGemmEntry& GroupedEntryOf(
    const GroupedGemmEntry* __restrict__ entries, int64_t count,
    int64_t block) {
  int64_t low = 0, high = count - 1;
  while (low < high) {
    const int64_t mid = (low + high + 1) / 2;
    if (entries[mid].first_tile <= block) {
      low = mid;
    } else {
      high = mid - 1;
    }
  }
  return entries[low];
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_GROUPED_TABLE_CUH_
