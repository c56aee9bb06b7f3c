// FloatVector<N>::Type: the CUDA vector type of N floats (N = 1, 2, 4), for
// one 4-, 8- or 16-byte access.
#ifndef MATSERVE_KERNELS_FLOAT_VECTOR_CUH_
#define MATSERVE_KERNELS_FLOAT_VECTOR_CUH_

namespace matserve::kernels {

template <int kWidth>
struct FloatVector;
template <>
struct FloatVector<1> {
  using Type = float;
};
template <>
struct FloatVector<2> {
  using Type = float2;
};
template <>
struct FloatVector<4> {
  using Type = float4;
};

}  // namespace matserve::kernels

#endif  // MATSERVE_KERNELS_FLOAT_VECTOR_CUH_
