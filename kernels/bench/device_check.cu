#include <cstdio>
#include <cstdlib>

#include "kernels/bench/device_check.h"

namespace matserve::kernels::bench {
namespace {

// A counter-based hash (splitmix64) of seed and index: reproducible like a
// seeded host generator, but fast enough for gigabytes of inputs. Not curand:
// libcurand is 130 MB, over what the GPU machine's carry takes.
__global__ void FillUniformKernel(float* data, int64_t count, uint64_t seed) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < count; i += stride) {
    uint64_t z = seed + static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    data[i] = static_cast<float>(z >> 40) * 0x1p-23f - 1.0f;
  }
}

}  // namespace

void Fail(const char* call, const char* file, int line, const char* error) {
  std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, error);
  std::exit(2);
}

void Check(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) Fail(call, file, line, cudaGetErrorName(status));
}

void Check(cublasStatus_t status, const char* call, const char* file,
           int line) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    Fail(call, file, line, cublasGetStatusName(status));
  }
}

void FillUniform(float* data, int64_t count, uint64_t seed,
                 cudaStream_t stream) {
  FillUniformKernel<<<1024, 256, 0, stream>>>(data, count, seed);
  CHECK(cudaGetLastError());
}

void Poison(float* data, int64_t count, cudaStream_t stream) {
  CHECK(cudaMemsetAsync(data, 0xFF, count * sizeof(float), stream));
}

std::vector<float> ToHost(const float* data, int64_t count,
                          cudaStream_t stream) {
  std::vector<float> host(count);
  CHECK(cudaMemcpyAsync(host.data(), data, count * sizeof(float),
                        cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace matserve::kernels::bench
