// Asynchronous global-to-shared copies (cp.async, sm_80 and later): the
// bytes go straight to shared memory without passing through registers.
#ifndef MATSERVE_KERNELS_COPY_ASYNC_CUH_
#define MATSERVE_KERNELS_COPY_ASYNC_CUH_

namespace matserve::kernels {

// Copies the first `bytes` (0 to 16) of the 16 at global `src` to shared
// `dst` without holding them in registers, and zeros the rest of the 16 at
// `dst`; it reads nothing past those bytes (with 0, nothing at all).
__device__ inline void CopyAsync16(float* dst, const float* src, int bytes) {
  const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared),
               "l"(src), "r"(bytes));
}
// Copies 4 bytes, or where `valid` is false reads nothing and writes zeros.
__device__ inline void CopyAsync4(float* dst, const float* src, bool valid) {
  const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared),
               "l"(src), "r"(valid ? 4 : 0));
}
// Copies the first `length` (0 to 4) of the 4 floats at global `src` to
// shared `dst` and zeros the rest of the 4, reading nothing for them (with
// none, `matrix`, a valid address, is given instead): one 16-byte copy where
// kVector (src and dst on 16 bytes), else one copy per element.
template <bool kVector>
__device__ inline void CopyRunAsync(float* dst, const float* matrix,
                                    const float* src, int length) {
  if constexpr (kVector) {
    CopyAsync16(dst, length > 0 ? src : matrix, 4 * length);
  } else {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      CopyAsync4(dst + q, q < length ? src + q : matrix, q < length);
    }
  }
}

// Copies the first `length` (0 to 2) of the 2 floats at global `src` (on 8
// bytes) to shared `dst` (on 8 bytes) and zeros the rest of the 2, reading
// nothing for them (with none, src must still be a valid address).
__device__ inline void CopyAsync8(float* dst, const float* src, int length) {
  const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(shared),
               "l"(src), "r"(4 * length));
}

// A piece of a row that one thread copies: kWidth elements (4, 2 or 1) in one
// copy of 16, 8 or 4 bytes, where the rows start on 16 or 8 bytes. Element
// by element, the lanes of a warp take consecutive elements, so that one copy
// of the warp reads a few sectors and writes shared memory with few bank
// conflicts; by pairs likewise.
//
// Copies the first `length` (0 to kWidth) of the piece at global `src` to
// shared `dst` and zeros the rest, reading nothing for them (with none,
// `matrix`, a valid address on kWidth * 4 bytes, is given instead).
template <int kWidth>
__device__ inline void CopyPieceAsync(float* dst, const float* matrix,
                                      const float* src, int length) {
  static_assert(kWidth == 1 || kWidth == 2 || kWidth == 4, "a copy's width");
  if constexpr (kWidth == 4) {
    CopyRunAsync<true>(dst, matrix, src, length);
  } else if constexpr (kWidth == 2) {
    CopyAsync8(dst, length > 0 ? src : matrix, length);
  } else {
    CopyAsync4(dst, length > 0 ? src : matrix, length > 0);
  }
}

// Copies the kWidth floats at global `src` (on 4 * kWidth bytes) to shared
// `dst` (likewise) where `copy`, else reads and writes nothing.
template <int kWidth>
__device__ inline void CopyPieceAsyncIf(float* dst, const float* src,
                                        bool copy) {
  static_assert(kWidth == 1 || kWidth == 2 || kWidth == 4, "a copy's width");
  const unsigned shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  if constexpr (kWidth == 4) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n"
        "@p cp.async.cg.shared.global [%0], [%1], 16;\n}\n" ::"r"(shared),
        "l"(src), "r"(static_cast<int>(copy)));
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n"
        "@p cp.async.ca.shared.global [%0], [%1], %3;\n}\n" ::"r"(shared),
        "l"(src), "r"(static_cast<int>(copy)), "n"(4 * kWidth));
  }
}

__device__ inline void CopyAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
// Waits until at most kPending of this thread's committed groups are in
// flight.
template <int kPending>
__device__ inline void CopyAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_COPY_ASYNC_CUH_
