// CudaExecutor: stages a batch's inputs through pinned memory in one transfer,
// runs its launches on the executor's own stream, and copies the outputs back
// in one transfer.
#include "server/engine/cuda_executor.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/types/span.h"
#include "kernels/kernels.h"
#include "server/engine/cuda_status.h"

namespace matserve::engine {
namespace {

// A host or device allocation that only grows, so that a steady stream of
// batches allocates nothing.
template <cudaError_t (*kAllocate)(void**, size_t),
          cudaError_t (*kRelease)(void*)>
class GrowingBuffer {
 public:
  GrowingBuffer() = default;
  GrowingBuffer(const GrowingBuffer&) = delete;
  GrowingBuffer& operator=(const GrowingBuffer&) = delete;
  ~GrowingBuffer() { kRelease(data_); }

  // Makes room for `bytes`; the old contents are not kept. Call on the owning
  // device.
  absl::Status Reserve(uint64_t bytes) {
    if (bytes <= capacity_) return absl::OkStatus();
    MATSERVE_CUDA_RETURN_IF_ERROR(kRelease(data_));
    data_ = nullptr;
    capacity_ = 0;
    MATSERVE_CUDA_RETURN_IF_ERROR(kAllocate(&data_, bytes));
    capacity_ = bytes;
    return absl::OkStatus();
  }

  float* floats() const { return static_cast<float*>(data_); }

 private:
  void* data_ = nullptr;
  uint64_t capacity_ = 0;
};

cudaError_t AllocateDevice(void** data, size_t bytes) {
  return cudaMalloc(data, bytes);
}
cudaError_t AllocatePinned(void** data, size_t bytes) {
  return cudaMallocHost(data, bytes);
}
using DeviceBuffer = GrowingBuffer<AllocateDevice, cudaFree>;
using PinnedBuffer = GrowingBuffer<AllocatePinned, cudaFreeHost>;

// Elements rounded up to whole 16-byte units, so that every matrix in a
// staging buffer starts where 16-byte vector accesses are legal.
uint64_t Padded(uint64_t floats) { return (floats + 3) / 4 * 4; }

// A batch's matrices in the staging buffers, in floats from their starts, with
// the ops ordered so that equal shapes sit together at equal strides.
struct Layout {
  struct Place {
    size_t op;            // index into the batch
    uint64_t input[2]{};  // A and B, or the transpose's input
    uint64_t output = 0;  // C, or the transpose's output
  };
  std::vector<Place> places;  // in staging order
  uint64_t input_floats = 0;
  uint64_t output_floats = 0;
};

// The shape that decides which ops share a strided launch.
std::tuple<uint32_t, uint32_t, uint32_t> Shape(const Op& op) {
  if (const auto* m = std::get_if<MultiplyOp>(&op)) return {m->m, m->k, m->n};
  const auto& t = std::get<TransposeOp>(op);
  return {t.rows, t.cols, 0};
}

Layout Arrange(absl::Span<const Op> batch) {
  Layout layout;
  layout.places.resize(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) layout.places[i].op = i;
  std::stable_sort(layout.places.begin(), layout.places.end(),
                   [&](const Layout::Place& x, const Layout::Place& y) {
                     return Shape(batch[x.op]) < Shape(batch[y.op]);
                   });
  for (Layout::Place& place : layout.places) {
    const Op& op = batch[place.op];
    if (const auto* m = std::get_if<MultiplyOp>(&op)) {
      place.input[0] = layout.input_floats;
      place.input[1] = place.input[0] + Padded(uint64_t{m->m} * m->k);
      layout.input_floats = place.input[1] + Padded(uint64_t{m->k} * m->n);
      place.output = layout.output_floats;
      layout.output_floats += Padded(uint64_t{m->m} * m->n);
    } else {
      const auto& t = std::get<TransposeOp>(op);
      place.input[0] = layout.input_floats;
      layout.input_floats += Padded(uint64_t{t.rows} * t.cols);
      place.output = layout.output_floats;
      layout.output_floats += Padded(uint64_t{t.rows} * t.cols);
    }
  }
  return layout;
}

// Multiplies that run as launches of their own rather than in a batch's
// grouped launch: from 128 x 128 up (the warp-tiled kernel's larger tiles),
// and from K = 512 up, since a grouped block walks its tile's whole K alone
// while a launch of its own splits K. Measured on an H200, a grouped launch of
// 63 random problems up to 64 on a side with one more problem in it, against
// without it plus its own launch: 64x256x64 0.020 ms against 0.023, 100x300x100
// 0.024 against 0.024, 127x127x1000 0.017 against 0.024; 64x512x512 0.032
// against 0.022, 127x512x127 0.038 against 0.025, 64x1024x64 0.055 against
// 0.023, 64x4096x4096 0.196 against 0.070.
bool LargeProblem(const MultiplyOp& op) {
  return (op.m >= 128 && op.n >= 128) || op.k >= 512;
}

// A batch whose large multiplies come in more shapes than this puts them in
// its grouped launch too: their own launches, one a shape, run one after
// another, each filling less of the GPU. Measured on an H100 (ms,
// docs/benchmarks.md, session 32; the kernels alone: sets of random shapes up
// to MAX on a side, a grouped launch of all against the large ones' own
// launches and the rest grouped): five large or more, 5 up to 2048 0.4271
// against 0.4516, 6 up to 1024 0.1096 against 0.1439, 8 up to 1024 0.1825
// against 0.2030, 16 up to 1024 0.1373 against 0.2835, 32 up to 2048 1.4021
// against 1.8111, 64 up to 511 (38 large) 0.1136 against 0.5148; four or
// fewer, the own launches led in most (2 up to 2048 0.1112 against 0.0563, 4
// up to 2048 0.3734 against 0.3142, 3 up to 1536 0.1624 against 0.1559), not
// all (4 up to 1536 0.1550 against 0.1727).
constexpr size_t kMaxLargeShapesApart = 4;

// CUDA events around a batch's copies and kernels.
class BatchTimer {
 public:
  BatchTimer() {
    for (cudaEvent_t& event : events_) cudaEventCreate(&event);
  }
  ~BatchTimer() {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
  }
  BatchTimer(const BatchTimer&) = delete;
  BatchTimer& operator=(const BatchTimer&) = delete;

  enum Mark { kStart, kCopiedIn, kComputed, kCopiedOut, kMarks };
  absl::Status Record(Mark mark, cudaStream_t stream) {
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_[mark], stream));
    return absl::OkStatus();
  }
  // After the stream has synchronized.
  absl::Duration Between(Mark from, Mark to) const {
    float milliseconds = 0;
    if (cudaEventElapsedTime(&milliseconds, events_[from], events_[to]) !=
        cudaSuccess) {
      return absl::ZeroDuration();
    }
    return absl::Microseconds(1000.0 * milliseconds);
  }

 private:
  cudaEvent_t events_[kMarks]{};
};

class CudaExecutor final : public Executor {
 public:
  CudaExecutor(int device, int ordinal, int index, cudaStream_t stream,
               std::string device_name, const CudaExecutorOptions& options,
               kernels::SgemmVariant sgemm_variant,
               kernels::TransposeVariant transpose_variant)
      : device_(device),
        ordinal_(ordinal),
        index_(index),
        stream_(stream),
        device_name_(std::move(device_name)),
        max_staged_bytes_(options.max_staged_bytes),
        sgemm_variant_(sgemm_variant),
        transpose_variant_(transpose_variant) {}
  ~CudaExecutor() override {
    cudaSetDevice(ordinal_);
    cudaStreamDestroy(stream_);
  }

  absl::Status Run(absl::Span<const Op> batch, BatchRecord& record) override {
    // The current device is per thread.
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal_));
    uint64_t bytes = 0;
    for (const Op& op : batch) bytes += InputBytes(op) + OutputBytes(op);
    const Layout layout = Arrange(batch);
    const bool staged = batch.size() > 1 || bytes <= max_staged_bytes_;
    absl::Time start = absl::Now();  // Stage and Unstaged move it later
    absl::Status enqueued =
        staged ? Stage(batch, layout, start) : Unstaged(batch[0], start);
    // Synchronize even after a failed enqueue: nothing queued may outlive the
    // ops' memory.
    absl::Status finished =
        CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    record.busy = absl::Now() - start;
    MATSERVE_RETURN_IF_ERROR(enqueued);
    MATSERVE_RETURN_IF_ERROR(finished);
    if (staged) Scatter(batch, layout);
    record.host_to_device =
        timer_.Between(BatchTimer::kStart, BatchTimer::kCopiedIn);
    record.compute =
        timer_.Between(BatchTimer::kCopiedIn, BatchTimer::kComputed);
    record.device_to_host =
        timer_.Between(BatchTimer::kComputed, BatchTimer::kCopiedOut);
    for (const Op& op : batch) {
      record.host_to_device_bytes += InputBytes(op);
      record.device_to_host_bytes += OutputBytes(op);
    }
    return absl::OkStatus();
  }

  int device() const override { return device_; }

  std::string Describe() const override {
    return absl::StrCat("cuda:", ordinal_, " (", device_name_, ") stream ",
                        index_);
  }

 private:
  // Gathers the inputs into pinned memory, copies them in one transfer, runs
  // the batch's launches and copies every output back in one transfer.
  // `start` is when the device got the batch's first work.
  absl::Status Stage(absl::Span<const Op> batch, const Layout& layout,
                     absl::Time& start) {
    const uint64_t table_floats = Padded(
        batch.size() * sizeof(kernels::GroupedGemmEntry) / sizeof(float));
    const uint64_t input_bytes =
        (layout.input_floats + table_floats) * sizeof(float);
    const uint64_t output_bytes = layout.output_floats * sizeof(float);
    MATSERVE_RETURN_IF_ERROR(pinned_in_.Reserve(input_bytes));
    MATSERVE_RETURN_IF_ERROR(pinned_out_.Reserve(output_bytes));
    MATSERVE_RETURN_IF_ERROR(device_in_.Reserve(input_bytes));
    MATSERVE_RETURN_IF_ERROR(device_out_.Reserve(output_bytes));
    float* host = pinned_in_.floats();
    for (const Layout::Place& place : layout.places) {
      const Op& op = batch[place.op];
      if (const auto* m = std::get_if<MultiplyOp>(&op)) {
        std::memcpy(host + place.input[0], m->a, MatrixBytes(m->m, m->k));
        std::memcpy(host + place.input[1], m->b, MatrixBytes(m->k, m->n));
      } else {
        const auto& t = std::get<TransposeOp>(op);
        std::memcpy(host + place.input[0], t.input,
                    MatrixBytes(t.rows, t.cols));
      }
    }
    // The grouped launch's problem table rides in the same transfer, after
    // the matrices.
    auto* table = reinterpret_cast<kernels::GroupedGemmEntry*>(
        host + layout.input_floats);
    const kernels::GroupedPlan grouped_plan = PlanGrouped(batch, layout, table);
    start = absl::Now();
    MATSERVE_RETURN_IF_ERROR(timer_.Record(BatchTimer::kStart, stream_));
    MATSERVE_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(device_in_.floats(), host, input_bytes,
                        cudaMemcpyHostToDevice, stream_));
    MATSERVE_RETURN_IF_ERROR(timer_.Record(BatchTimer::kCopiedIn, stream_));
    MATSERVE_RETURN_IF_ERROR(Launch(batch, layout, grouped_plan));
    MATSERVE_RETURN_IF_ERROR(timer_.Record(BatchTimer::kComputed, stream_));
    MATSERVE_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(pinned_out_.floats(), device_out_.floats(),
                        output_bytes, cudaMemcpyDeviceToHost, stream_));
    return timer_.Record(BatchTimer::kCopiedOut, stream_);
  }

  // After the stream synchronized: each output to its own response.
  void Scatter(absl::Span<const Op> batch, const Layout& layout) const {
    const float* host = pinned_out_.floats();
    for (const Layout::Place& place : layout.places) {
      const Op& op = batch[place.op];
      if (const auto* m = std::get_if<MultiplyOp>(&op)) {
        std::memcpy(m->c, host + place.output, MatrixBytes(m->m, m->n));
      } else {
        const auto& t = std::get<TransposeOp>(op);
        std::memcpy(t.output, host + place.output, MatrixBytes(t.rows, t.cols));
      }
    }
  }

  // Fills the device problem table for the batch's multiplies of mixed
  // shapes that don't run apart and returns the grouped launch's plan; none (0
  // blocks) when the batch needs no grouped launch.
  kernels::GroupedPlan PlanGrouped(absl::Span<const Op> batch,
                                   const Layout& layout,
                                   kernels::GroupedGemmEntry* table) {
    grouped_.clear();
    kernels::GroupedPlan none;
    none.blocks = 0;
    if (sgemm_variant_ != kernels::SgemmVariant::kAuto) return none;
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> large_shapes;
    for (const Op& op : batch) {
      const auto* m = std::get_if<MultiplyOp>(&op);
      if (m != nullptr && LargeProblem(*m)) large_shapes.insert(Shape(*m));
    }
    large_apart_ = large_shapes.size() <= kMaxLargeShapesApart;
    std::tuple<uint32_t, uint32_t, uint32_t> first_shape;
    bool mixed = false;
    for (const Layout::Place& place : layout.places) {
      const auto* m = std::get_if<MultiplyOp>(&batch[place.op]);
      if (m == nullptr || RunsApart(*m)) continue;
      if (grouped_.empty()) first_shape = Shape(*m);
      mixed = mixed || Shape(*m) != first_shape;
      grouped_.push_back(kernels::GemmProblem{
          m->m, m->n, m->k, device_in_.floats() + place.input[0],
          device_in_.floats() + place.input[1],
          device_out_.floats() + place.output});
    }
    if (!mixed) {
      grouped_.clear();  // one shape: the strided launch serves it better
      return none;
    }
    return kernels::PlanSgemmGrouped(grouped_.data(), grouped_.size(), table);
  }

  // Same-shape runs of the layout go to one strided launch each; the
  // multiplies of mixed shapes that don't run apart to one grouped launch
  // (planned in the table).
  absl::Status Launch(absl::Span<const Op> batch, const Layout& layout,
                      const kernels::GroupedPlan& grouped_plan) {
    if (!grouped_.empty()) {
      if (grouped_plan.blocks < 0) {
        return absl::InternalError("the grouped launch's grid is too large");
      }
      MATSERVE_CUDA_RETURN_IF_ERROR(kernels::SgemmGrouped(
          reinterpret_cast<const kernels::GroupedGemmEntry*>(
              device_in_.floats() + layout.input_floats),
          grouped_.size(), grouped_plan, stream_));
    }
    for (size_t begin = 0; begin < layout.places.size();) {
      const Op& op = batch[layout.places[begin].op];
      size_t end = begin + 1;
      while (end < layout.places.size() &&
             Shape(batch[layout.places[end].op]) == Shape(op)) {
        ++end;
      }
      const auto* m = std::get_if<MultiplyOp>(&op);
      if (m == nullptr || grouped_.empty() || RunsApart(*m)) {
        MATSERVE_RETURN_IF_ERROR(
            LaunchRun(op, layout.places[begin], end - begin));
      }
      begin = end;
    }
    return absl::OkStatus();
  }

  // `count` ops of `op`'s shape, laid out one after another from `first`.
  absl::Status LaunchRun(const Op& op, const Layout::Place& first,
                         size_t count) {
    const float* in = device_in_.floats();
    float* out = device_out_.floats();
    if (const auto* m = std::get_if<MultiplyOp>(&op)) {
      const int64_t in_stride =
          Padded(uint64_t{m->m} * m->k) + Padded(uint64_t{m->k} * m->n);
      const int64_t out_stride = Padded(uint64_t{m->m} * m->n);
      if (count == 1 || sgemm_variant_ != kernels::SgemmVariant::kAuto) {
        for (size_t i = 0; i < count; ++i) {
          MATSERVE_CUDA_RETURN_IF_ERROR(kernels::Sgemm(
              m->m, m->n, m->k, in + first.input[0] + i * in_stride,
              in + first.input[1] + i * in_stride,
              out + first.output + i * out_stride, stream_, sgemm_variant_));
        }
        return absl::OkStatus();
      }
      MATSERVE_CUDA_RETURN_IF_ERROR(kernels::SgemmStridedBatched(
          m->m, m->n, m->k, in + first.input[0], in_stride, in + first.input[1],
          in_stride, out + first.output, out_stride, count, stream_));
      return absl::OkStatus();
    }
    const auto& t = std::get<TransposeOp>(op);
    const int64_t stride = Padded(uint64_t{t.rows} * t.cols);
    MATSERVE_CUDA_RETURN_IF_ERROR(kernels::TransposeStridedBatched(
        t.rows, t.cols, in + first.input[0], stride, out + first.output, stride,
        count, stream_, transpose_variant_));
    return absl::OkStatus();
  }

  // A request too large to stage goes alone, copied straight from and to its
  // pageable buffers.
  absl::Status Unstaged(const Op& op, absl::Time& start) {
    const uint64_t input_bytes = InputBytes(op);
    const uint64_t output_bytes = OutputBytes(op);
    MATSERVE_RETURN_IF_ERROR(device_in_.Reserve(input_bytes));
    MATSERVE_RETURN_IF_ERROR(device_out_.Reserve(output_bytes));
    float* in = device_in_.floats();
    float* out = device_out_.floats();
    start = absl::Now();
    MATSERVE_RETURN_IF_ERROR(timer_.Record(BatchTimer::kStart, stream_));
    if (const auto* m = std::get_if<MultiplyOp>(&op)) {
      const uint64_t a_floats = uint64_t{m->m} * m->k;
      MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
          in, m->a, MatrixBytes(m->m, m->k), cudaMemcpyHostToDevice, stream_));
      MATSERVE_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(in + a_floats, m->b, MatrixBytes(m->k, m->n),
                          cudaMemcpyHostToDevice, stream_));
      MATSERVE_RETURN_IF_ERROR(timer_.Record(BatchTimer::kCopiedIn, stream_));
      MATSERVE_CUDA_RETURN_IF_ERROR(kernels::Sgemm(
          m->m, m->n, m->k, in, in + a_floats, out, stream_, sgemm_variant_));
      MATSERVE_RETURN_IF_ERROR(timer_.Record(BatchTimer::kComputed, stream_));
      MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
          m->c, out, output_bytes, cudaMemcpyDeviceToHost, stream_));
    } else {
      const auto& t = std::get<TransposeOp>(op);
      MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
          in, t.input, input_bytes, cudaMemcpyHostToDevice, stream_));
      MATSERVE_RETURN_IF_ERROR(timer_.Record(BatchTimer::kCopiedIn, stream_));
      MATSERVE_CUDA_RETURN_IF_ERROR(kernels::Transpose(
          t.rows, t.cols, in, out, stream_, transpose_variant_));
      MATSERVE_RETURN_IF_ERROR(timer_.Record(BatchTimer::kComputed, stream_));
      MATSERVE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
          t.output, out, output_bytes, cudaMemcpyDeviceToHost, stream_));
    }
    return timer_.Record(BatchTimer::kCopiedOut, stream_);
  }

  const int device_;   // index among the executors' devices
  const int ordinal_;  // the CUDA device ordinal
  const int index_;
  const cudaStream_t stream_;
  const std::string device_name_;
  const uint64_t max_staged_bytes_;
  const kernels::SgemmVariant sgemm_variant_;
  const kernels::TransposeVariant transpose_variant_;
  PinnedBuffer pinned_in_;  // the batch's inputs, and the grouped table
  PinnedBuffer pinned_out_;
  DeviceBuffer device_in_;
  DeviceBuffer device_out_;
  // Whether this batch's large multiplies run apart from its grouped launch
  // (kMaxLargeShapesApart).
  bool RunsApart(const MultiplyOp& m) const {
    return large_apart_ && LargeProblem(m);
  }

  std::vector<kernels::GemmProblem> grouped_;  // this batch's grouped launch
  bool large_apart_ = true;
  BatchTimer timer_;
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
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown SGEMM variant \"", options.sgemm_variant,
        "\": expected auto, naive, tiled, register_blocked or warp_tiled"));
  }
  kernels::TransposeVariant transpose_variant;
  if (!kernels::ParseTransposeVariant(options.transpose_variant.c_str(),
                                      &transpose_variant)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown transpose variant \"", options.transpose_variant,
                     "\": expected auto, tiled, wide, large_tile or packed"));
  }
  absl::StatusOr<int> devices = CudaDeviceCount();
  if (!devices.ok()) return absl::UnavailableError(devices.status().message());
  if (*devices == 0) return absl::UnavailableError("no CUDA device is visible");
  std::vector<int> ordinals = options.devices;
  if (ordinals.empty()) {
    for (int ordinal = 0; ordinal < *devices; ++ordinal) {
      ordinals.push_back(ordinal);
    }
  }
  for (int ordinal : ordinals) {
    if (ordinal < 0 || ordinal >= *devices) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device ", ordinal, " is not visible: this process sees ", *devices,
          " CUDA device(s), 0 to ", *devices - 1));
    }
  }
  std::vector<std::unique_ptr<Executor>> executors;
  for (int device = 0; device < static_cast<int>(ordinals.size()); ++device) {
    const int ordinal = ordinals[device];
    MATSERVE_CUDA_RETURN_IF_ERROR(cudaSetDevice(ordinal));
    cudaDeviceProp properties;
    MATSERVE_CUDA_RETURN_IF_ERROR(
        cudaGetDeviceProperties(&properties, ordinal));
    for (int index = 0; index < options.streams_per_device; ++index) {
      cudaStream_t stream;
      MATSERVE_CUDA_RETURN_IF_ERROR(
          cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      executors.push_back(std::make_unique<CudaExecutor>(
          device, ordinal, index, stream, properties.name, options,
          sgemm_variant, transpose_variant));
    }
  }
  return executors;
}

}  // namespace matserve::engine
