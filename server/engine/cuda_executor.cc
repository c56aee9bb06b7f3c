// CudaExecutor: copies a job's inputs to reusable device buffers, runs the
// kernel on its own stream, and copies the result back.
#include "server/engine/cuda_executor.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "kernels/kernels.h"
#include "server/engine/cuda_status.h"

namespace matserve::engine {
namespace {

// A device allocation that only grows, so that a steady stream of requests
// allocates nothing.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(data_); }

  // Makes room for `bytes`; the old contents are not kept. Call on the owning
  // device.
  absl::Status Reserve(uint64_t bytes) {
    if (bytes <= capacity_) return absl::OkStatus();
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaFree(data_));
    data_ = nullptr;
    capacity_ = 0;
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaMalloc(&data_, bytes));
    capacity_ = bytes;
    return absl::OkStatus();
  }

  float* data() const { return static_cast<float*>(data_); }

 private:
  void* data_ = nullptr;
  uint64_t capacity_ = 0;
};

uint64_t Bytes(uint64_t rows, uint64_t cols) {
  return rows * cols * sizeof(float);
}

class CudaExecutor final : public Executor {
 public:
  CudaExecutor(int device, int index, cudaStream_t stream,
               std::string device_name, kernels::SgemmVariant sgemm_variant,
               kernels::TransposeVariant transpose_variant)
      : device_(device),
        index_(index),
        stream_(stream),
        device_name_(std::move(device_name)),
        sgemm_variant_(sgemm_variant),
        transpose_variant_(transpose_variant) {}
  ~CudaExecutor() override {
    cudaSetDevice(device_);
    cudaStreamDestroy(stream_);
  }

  absl::Status Run(const Op& op) override {
    MATSERVE_CUDA_RETURN_IF_ERROR(
        cudaSetDevice(device_));  // current device is per thread
    absl::Status enqueued =
        std::visit([this](const auto& o) { return Enqueue(o); }, op);
    // Synchronize even after a failed enqueue: nothing queued may outlive the
    // job's memory.
    absl::Status finished =
        CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    return enqueued.ok() ? finished : enqueued;
  }

  std::string Describe() const override {
    return absl::StrCat("cuda:", device_, " (", device_name_, ") stream ",
                        index_);
  }

 private:
  absl::Status Enqueue(const MultiplyOp& op) {
    const uint64_t a_bytes = Bytes(op.m, op.k);
    const uint64_t b_bytes = Bytes(op.k, op.n);
    const uint64_t c_bytes = Bytes(op.m, op.n);
    MATSERVE_RETURN_IF_ERROR(a_.Reserve(a_bytes));
    MATSERVE_RETURN_IF_ERROR(b_.Reserve(b_bytes));
    MATSERVE_RETURN_IF_ERROR(c_.Reserve(c_bytes));
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        a_.data(), op.a, a_bytes, cudaMemcpyHostToDevice, stream_));
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        b_.data(), op.b, b_bytes, cudaMemcpyHostToDevice, stream_));
    MATSERVE_CUDA_RETURN_IF_ERROR(kernels::Sgemm(op.m, op.n, op.k, a_.data(),
                                                 b_.data(), c_.data(), stream_,
                                                 sgemm_variant_));
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        op.c, c_.data(), c_bytes, cudaMemcpyDeviceToHost, stream_));
    return absl::OkStatus();
  }

  absl::Status Enqueue(const TransposeOp& op) {
    const uint64_t bytes = Bytes(op.rows, op.cols);
    MATSERVE_RETURN_IF_ERROR(a_.Reserve(bytes));
    MATSERVE_RETURN_IF_ERROR(c_.Reserve(bytes));
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        a_.data(), op.input, bytes, cudaMemcpyHostToDevice, stream_));
    MATSERVE_CUDA_RETURN_IF_ERROR(kernels::Transpose(
        op.rows, op.cols, a_.data(), c_.data(), stream_, transpose_variant_));
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        op.output, c_.data(), bytes, cudaMemcpyDeviceToHost, stream_));
    return absl::OkStatus();
  }

  const int device_;
  const int index_;
  const cudaStream_t stream_;
  const std::string device_name_;
  const kernels::SgemmVariant sgemm_variant_;
  const kernels::TransposeVariant transpose_variant_;
  DeviceBuffer a_;  // A, or the transpose's input
  DeviceBuffer b_;
  DeviceBuffer c_;  // C, or the transpose's output
};

}  // namespace

absl::StatusOr<int> CudaDeviceCount() {
  int count = 0;
  MATSERVE_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  return count;
}

absl::StatusOr<DeviceMemory> CudaDeviceMemory(int device) {
  // cudaMemGetInfo reads the current device, which is per thread: a scrape
  // thread sets it for itself.
  MATSERVE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  return DeviceMemory{total_bytes - free_bytes, total_bytes};
}

absl::StatusOr<std::vector<std::unique_ptr<Executor>>> MakeCudaExecutors(
    const CudaExecutorOptions& options) {
  kernels::SgemmVariant sgemm_variant;
  if (!kernels::ParseSgemmVariant(options.sgemm_variant.c_str(),
                                  &sgemm_variant)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown SGEMM variant \"", options.sgemm_variant,
                     "\": expected auto, naive, tiled or register_blocked"));
  }
  kernels::TransposeVariant transpose_variant;
  if (!kernels::ParseTransposeVariant(options.transpose_variant.c_str(),
                                      &transpose_variant)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown transpose variant \"", options.transpose_variant,
                     "\": expected auto, tiled or wide"));
  }
  absl::StatusOr<int> devices = CudaDeviceCount();
  if (!devices.ok()) return absl::UnavailableError(devices.status().message());
  if (*devices == 0) return absl::UnavailableError("no CUDA device is visible");
  std::vector<std::unique_ptr<Executor>> executors;
  for (int device = 0; device < *devices; ++device) {
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    cudaDeviceProp properties;
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&properties, device));
    for (int index = 0; index < options.streams_per_device; ++index) {
      cudaStream_t stream;
      MATSERVE_CUDA_RETURN_IF_ERROR(
          cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      executors.push_back(
          std::make_unique<CudaExecutor>(device, index, stream, properties.name,
                                         sgemm_variant, transpose_variant));
    }
  }
  return executors;
}

}  // namespace matserve::engine
