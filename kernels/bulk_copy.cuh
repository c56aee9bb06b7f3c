// Bulk tensor copies (cp.async.bulk.tensor, sm_90 and later) and the
// shared-memory barriers (mbarrier) that wait for them: one thread copies a
// whole box of a tensor from global to shared memory, and the barrier's phase
// completes once the bytes it was told to expect have landed and its
// arrivals have arrived.
#ifndef MATSERVE_KERNELS_BULK_COPY_CUH_
#define MATSERVE_KERNELS_BULK_COPY_CUH_

#include <cuda.h>

#include <cstdint>

namespace matserve::kernels {

__device__ inline unsigned SharedAddress(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

#if __CUDA_ARCH__ >= 900

// Sets up `barrier` for `arrivals` arrivals a phase, in phase 0.
__device__ inline void BarrierInit(uint64_t* barrier, int arrivals) {
  asm volatile(
      "mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SharedAddress(barrier)),
      "r"(arrivals)
      : "memory");
}

// Makes the barriers this thread set up visible to the bulk copies.
__device__ inline void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ inline void BarrierArrive(uint64_t* barrier) {
  asm volatile(
      "mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(SharedAddress(barrier))
      : "memory");
}

// Arrives, and adds `bytes` to what the current phase waits for.
__device__ inline void BarrierArriveExpecting(uint64_t* barrier,
                                              unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   SharedAddress(barrier)),
               "r"(bytes)
               : "memory");
}

// Waits until the phase of `barrier` with parity `parity` has completed. A
// barrier starts in phase 0, so waiting on parity 1 returns at once.
__device__ inline void BarrierWait(uint64_t* barrier, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred complete;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
        "selp.u32 %0, 1, 0, complete;\n"
        "}\n"
        : "=r"(done)
        : "r"(SharedAddress(barrier)), "r"(parity)
        : "memory");
  } while (!done);
}

// Fetches the tensor map `map` (a kernel parameter) into the cache that bulk
// tensor copies read it from.
__device__ inline void PrefetchTensorMap(const CUtensorMap& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map) : "memory");
}

// Copies the box at coordinates x, y, z (innermost first) of the tensor that
// `map` (a kernel parameter) describes into shared `dst`, laid out and filled
// past the tensor's edges as the map says, and counts its bytes off
// `barrier`'s expected bytes as they land.
__device__ inline void BulkTensorCopy(float* dst, const CUtensorMap& map, int x,
                                      int y, int z, uint64_t* barrier) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_"
      "tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(SharedAddress(dst)),
      "l"(&map), "r"(x), "r"(y), "r"(z), "r"(SharedAddress(barrier))
      : "memory");
}

#endif  // __CUDA_ARCH__ >= 900

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_BULK_COPY_CUH_
