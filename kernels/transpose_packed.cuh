// Batched transpose of small matrices: each block moves several whole matrices
// of a strided batch through shared memory, so that no thread idles in a
// mostly empty tile.
#ifndef MATSERVE_KERNELS_TRANSPOSE_PACKED_CUH_
#define MATSERVE_KERNELS_TRANSPOSE_PACKED_CUH_

#include <cstdint>

#include "kernels/fast_divisor.cuh"
#include "kernels/grid_dependency.cuh"

namespace matserve::kernels {

struct PackedTransposeArgs {
  int64_t rows, cols;
  const float* in;
  int64_t in_stride;
  float* out;
  int64_t out_stride;
  int64_t batch;
  int64_t per_block;   // matrices per block
  FastDivisor size;    // rows * cols
  FastDivisor rows_d;  // rows
};

// Block b moves matrices [b * per_block, b * per_block + per_block) of the
// batch (fewer in the last block): it reads all of their elements into shared
// memory in input order (coalesced: the matrices of a dense batch are one
// contiguous range), then writes them in output order (again one contiguous
// range), gathering each output element from shared memory. per_block *
// rows * cols <= kCapacity - 3 (the launcher's choice): the 3 leave room for
// a range that starts inside a 16-byte word.
//
// kVectorizedIn / kVectorizedOut: that side is dense (stride == rows * cols)
// and starts on 16 bytes. The block then moves the 16-byte words that overlap
// its range, one 16-byte access for a word wholly inside the array, element
// by element for a word it shares with the array's end or with the next
// block (whose part that block writes); every element outside the block's
// range is left alone. Otherwise every element is one 4-byte access, the
// matrix found by a FastDivisor division.
//
// Shared memory holds element p at p + p / 32: one word of padding per 32,
// so that the gather (element i * cols + j for consecutive i) spreads over
// the banks for any cols, not only odd ones (16 x 16: 2-way conflicts
// instead of 8-way).
template <int kThreads, int kCapacity, bool kVectorizedIn, bool kVectorizedOut>
__global__ void __launch_bounds__(kThreads)
    TransposePackedKernel(PackedTransposeArgs a) {
  WaitForPriorGrid();
  AllowDependentLaunch();
  static_assert(kCapacity % (4 * kThreads) == 0,
                "each thread moves a whole number of 16-byte words");
  constexpr int kPerThread = kCapacity / kThreads;
  constexpr int kWordsPerThread = kPerThread / 4;
  __shared__ float staged[kCapacity + kCapacity / 32];
  auto at = [](int64_t p) { return p + p / 32; };

  const int64_t first = blockIdx.x * a.per_block;
  const int64_t count =
      a.batch - first < a.per_block ? a.batch - first : a.per_block;
  const uint32_t size = a.size.divisor;
  const int64_t n = count * size;        // elements this block moves
  const int64_t total = a.batch * size;  // of a dense array
  // Dense: the block's range starts at `start` of the array, and its 16-byte
  // words at the word that holds it.
  const int64_t start = first * size;
  const int64_t first_word = start / 4;

  float values[kPerThread];
  if constexpr (kVectorizedIn) {
#pragma unroll
    for (int k = 0; k < kWordsPerThread; ++k) {
      const int64_t word = first_word + threadIdx.x + k * kThreads;
      const int64_t e0 = word * 4;  // array index of its first element
      if (e0 + 3 < total && e0 < start + n) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(a.in) + word);
        values[4 * k] = v.x, values[4 * k + 1] = v.y, values[4 * k + 2] = v.z,
                   values[4 * k + 3] = v.w;
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          values[4 * k + q] =
              e0 + q < total && e0 + q < start + n ? __ldg(a.in + e0 + q) : 0;
        }
      }
    }
#pragma unroll
    for (int k = 0; k < kWordsPerThread; ++k) {
      const int64_t p0 = (first_word + threadIdx.x + k * kThreads) * 4 - start;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        if (p0 + q >= 0 && p0 + q < n) staged[at(p0 + q)] = values[4 * k + q];
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int p = threadIdx.x + k * kThreads;
      if (p < n) {
        const uint32_t m = a.size.Divide(p);
        values[k] = __ldg(a.in + (first + m) * a.in_stride + (p - m * size));
      }
    }
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int p = threadIdx.x + k * kThreads;
      if (p < n) staged[at(p)] = values[k];
    }
  }
  __syncthreads();  // every element is staged before any is gathered

  // Output element o of the block's range: matrix m, output row j (an input
  // column), output column i (an input row); it is staged element
  // m * size + i * cols + j.
  const uint32_t cols = static_cast<uint32_t>(a.cols);
  auto gather = [&](uint32_t o) {
    const uint32_t m = a.size.Divide(o);
    const uint32_t e = o - m * size;
    const uint32_t j = a.rows_d.Divide(e);
    const uint32_t i = e - j * a.rows_d.divisor;
    return staged[at(m * size + i * cols + j)];
  };
  if constexpr (kVectorizedOut) {
#pragma unroll
    for (int k = 0; k < kWordsPerThread; ++k) {
      const int64_t word = first_word + threadIdx.x + k * kThreads;
      const int64_t o0 = word * 4 - start;  // block index of its first element
      if (o0 >= 0 && o0 + 3 < n) {
        const float4 v = make_float4(gather(o0), gather(o0 + 1), gather(o0 + 2),
                                     gather(o0 + 3));
        *(reinterpret_cast<float4*>(a.out) + word) = v;
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          if (o0 + q >= 0 && o0 + q < n) a.out[start + o0 + q] = gather(o0 + q);
        }
      }
    }
  } else {
#pragma unroll
    for (int k = 0; k < kPerThread; ++k) {
      const int o = threadIdx.x + k * kThreads;
      if (o < n) {
        const uint32_t m = a.size.Divide(o);
        a.out[(first + m) * a.out_stride + (o - m * size)] = gather(o);
      }
    }
  }
}

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_TRANSPOSE_PACKED_CUH_
