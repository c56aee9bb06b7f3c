#include "server/metrics/server_metrics.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "prometheus/exposer.h"

namespace matserve::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr double kNanosecondsPerSecond = 1e9;

// Durations from 10 us (a small transpose on the CPU) to 50 s (a 2^27-element
// multiply queued behind others), 1-2.5-5 per decade: histogram_quantile's
// interpolation stays within one such step.
std::vector<uint64_t> DurationBoundsNs() {
  std::vector<uint64_t> bounds;
  for (uint64_t decade = 10'000; decade <= 10'000'000'000; decade *= 10) {
    bounds.push_back(decade);
    bounds.push_back(decade * 5 / 2);
    bounds.push_back(decade * 5);
  }
  return bounds;
}

// 1, 2, 4, ... up to the largest batch, which is a bound itself.
std::vector<uint64_t> BatchSizeBounds(size_t max_batch_size) {
  std::vector<uint64_t> bounds;
  for (uint64_t size = 1; size < max_batch_size; size *= 2) {
    bounds.push_back(size);
  }
  bounds.push_back(std::max<size_t>(max_batch_size, 1));
  return bounds;
}

std::vector<ShardedHistogram> Histograms(size_t count,
                                         const std::vector<uint64_t>& bounds) {
  std::vector<ShardedHistogram> histograms;
  histograms.reserve(count);
  for (size_t i = 0; i < count; ++i) histograms.emplace_back(bounds);
  return histograms;
}

uint64_t Nanoseconds(absl::Duration duration) {
  return static_cast<uint64_t>(
      std::max<int64_t>(0, absl::ToInt64Nanoseconds(duration)));
}

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

size_t MethodIndex(engine::Method method) {
  return static_cast<size_t>(method);
}

// The copy directions, as labelled, in copy_duration_'s order.
constexpr const char* kCopyDirections[] = {"host_to_device", "device_to_host"};

ClientMetric Labelled(std::vector<ClientMetric::Label> labels) {
  ClientMetric metric;
  metric.label = std::move(labels);
  return metric;
}

MetricFamily Family(std::string name, std::string help, MetricType type) {
  MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

}  // namespace

ServerMetrics::ServerMetrics(MetricsOptions options)
    : options_(std::move(options)),
      request_cells_(kFirstRequestCount + kMethodCount * kCodeCount),
      batch_cells_(kBatchCellCount),
      request_duration_(Histograms(kMethodCount, DurationBoundsNs())),
      queue_duration_(Histograms(kMethodCount, DurationBoundsNs())),
      compute_duration_(Histograms(kMethodCount, DurationBoundsNs())),
      copy_duration_(
          Histograms(std::size(kCopyDirections), DurationBoundsNs())),
      batch_size_(
          Histograms(kMethodCount, BatchSizeBounds(options_.max_batch_size))),
      registration_(this, [](prometheus::Collectable*) {}) {
  for (size_t i = 0; i < options_.devices.size(); ++i) {
    device_busy_.push_back(std::make_unique<BusyTracker>());
  }
}

ServerMetrics::~ServerMetrics() { exposer_.reset(); }

absl::Status ServerMetrics::Listen() {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(options_.address);
  } catch (const std::exception& e) {
    // civetweb (under prometheus-cpp) throws when it cannot bind.
    return absl::UnavailableError(absl::StrCat(
        "cannot serve metrics on ", options_.address, ": ", e.what()));
  }
  exposer_->RegisterCollectable(registration_);
  return absl::OkStatus();
}

std::string ServerMetrics::BoundAddress() const {
  const size_t colon = options_.address.rfind(':');
  const std::string host = colon == std::string::npos
                               ? "0.0.0.0"
                               : options_.address.substr(0, colon);
  const std::vector<int> ports = exposer_->GetListeningPorts();
  return absl::StrCat(host, ":", ports.empty() ? 0 : ports.front());
}

void ServerMetrics::RequestStarted(engine::Method) {
  request_cells_.Add(kInflight, 1);
}

void ServerMetrics::RequestFinished(engine::Method method,
                                    absl::StatusCode code,
                                    absl::Duration duration,
                                    uint64_t request_bytes,
                                    uint64_t response_bytes) {
  size_t code_index = static_cast<size_t>(code);
  if (code_index >= kCodeCount) {
    code_index = static_cast<size_t>(absl::StatusCode::kUnknown);
  }
  request_cells_.Add(kInflight, ~uint64_t{0});  // -1
  request_cells_.Add(
      kFirstRequestCount + MethodIndex(method) * kCodeCount + code_index, 1);
  request_cells_.Add(kRequestBytes, request_bytes);
  request_cells_.Add(kResponseBytes, response_bytes);
  request_duration_[MethodIndex(method)].Observe(Nanoseconds(duration));
}

void ServerMetrics::BatchFinished(const engine::BatchRecord& record) {
  const size_t method = MethodIndex(record.method);
  for (absl::Duration wait : record.queue_waits) {
    queue_duration_[method].Observe(Nanoseconds(wait));
  }
  if (!record.queue_waits.empty()) {
    batch_size_[method].Observe(record.queue_waits.size());
  }
  if (record.ok) {
    compute_duration_[method].Observe(Nanoseconds(record.compute));
    // The CPU backend copies nothing: no zero-length copies in the histogram.
    if (record.host_to_device_bytes > 0) {
      copy_duration_[0].Observe(Nanoseconds(record.host_to_device));
      batch_cells_.Add(kHostToDeviceBytes, record.host_to_device_bytes);
    }
    if (record.device_to_host_bytes > 0) {
      copy_duration_[1].Observe(Nanoseconds(record.device_to_host));
      batch_cells_.Add(kDeviceToHostBytes, record.device_to_host_bytes);
    }
    if (record.flops > 0) batch_cells_.AddDouble(kFlops, record.flops);
  }
  // A failed batch still occupied the device.
  if (record.device >= 0 &&
      static_cast<size_t>(record.device) < device_busy_.size()) {
    device_busy_[record.device]->Add(
        SteadyNowNs(), static_cast<int64_t>(Nanoseconds(record.busy)));
  }
}

std::vector<MetricFamily> ServerMetrics::Collect() const {
  std::vector<MetricFamily> families;

  MetricFamily build =
      Family("matserve_build_info",
             "The server's version and compute backend; 1.", MetricType::Gauge);
  build.metric.push_back(
      Labelled({{"version", options_.version}, {"backend", options_.backend}}));
  build.metric.back().gauge.value = 1;
  families.push_back(std::move(build));

  MetricFamily requests = Family(
      "matserve_requests_total",
      "RPCs answered, by method and gRPC status code.", MetricType::Counter);
  for (engine::Method method : engine::kMethods) {
    for (size_t code = 0; code < kCodeCount; ++code) {
      requests.metric.push_back(Labelled(
          {{"method", engine::MethodName(method)},
           {"code",
            absl::StatusCodeToString(static_cast<absl::StatusCode>(code))}}));
      requests.metric.back().counter.value =
          static_cast<double>(request_cells_.Sum(
              kFirstRequestCount + MethodIndex(method) * kCodeCount + code));
    }
  }
  families.push_back(std::move(requests));

  const auto add_histograms =
      [&](std::string name, std::string help, const std::string& label,
          const std::vector<ShardedHistogram>& histograms,
          const std::vector<std::string>& label_values, double divisor) {
        MetricFamily family =
            Family(std::move(name), std::move(help), MetricType::Histogram);
        for (size_t i = 0; i < histograms.size(); ++i) {
          family.metric.push_back(Labelled({{label, label_values[i]}}));
          family.metric.back().histogram = histograms[i].Collect(divisor);
        }
        families.push_back(std::move(family));
      };
  const std::vector<std::string> methods = {
      engine::MethodName(engine::Method::kMultiply),
      engine::MethodName(engine::Method::kTranspose)};
  add_histograms("matserve_request_duration_seconds",
                 "From the RPC reaching its handler to its answer going to "
                 "gRPC, every status code.",
                 "method", request_duration_, methods, kNanosecondsPerSecond);
  add_histograms("matserve_queue_duration_seconds",
                 "From a request's arrival to the start of its batch.",
                 "method", queue_duration_, methods, kNanosecondsPerSecond);
  add_histograms("matserve_compute_duration_seconds",
                 "Kernel time of each successful batch: CUDA events on the "
                 "GPU, wall time on the CPU backend.",
                 "method", compute_duration_, methods, kNanosecondsPerSecond);
  add_histograms("matserve_copy_duration_seconds",
                 "Host<->device transfers of each successful batch (CUDA "
                 "events); none on the CPU backend.",
                 "direction", copy_duration_,
                 {kCopyDirections[0], kCopyDirections[1]},
                 kNanosecondsPerSecond);
  add_histograms("matserve_batch_size", "Requests per batch.", "method",
                 batch_size_, methods, 1);

  const auto add_value =
      [&](std::string name, std::string help, MetricType type,
          std::vector<ClientMetric::Label> labels, double value) {
        if (families.empty() || families.back().name != name) {
          families.push_back(Family(std::move(name), std::move(help), type));
        }
        families.back().metric.push_back(Labelled(std::move(labels)));
        if (type == MetricType::Counter) {
          families.back().metric.back().counter.value = value;
        } else {
          families.back().metric.back().gauge.value = value;
        }
      };
  add_value("matserve_queue_requests", "Requests waiting for compute.",
            MetricType::Gauge, {},
            static_cast<double>(options_.queued_requests()));
  add_value("matserve_queue_capacity_requests",
            "Requests the queue holds before refusing with "
            "RESOURCE_EXHAUSTED.",
            MetricType::Gauge, {},
            static_cast<double>(options_.queue_capacity));
  add_value("matserve_inflight_requests",
            "RPCs between reaching their handler and their answer.",
            MetricType::Gauge, {},
            static_cast<double>(std::max<int64_t>(
                0, static_cast<int64_t>(request_cells_.Sum(kInflight)))));
  add_value("matserve_flops_total",
            "Floating-point operations of successful multiplies (2*m*n*k).",
            MetricType::Counter, {}, batch_cells_.SumDouble(kFlops));
  const char* payload_help =
      "Matrix data of the RPCs: received in requests, sent in responses.";
  add_value("matserve_payload_bytes_total", payload_help, MetricType::Counter,
            {{"direction", "request"}},
            static_cast<double>(request_cells_.Sum(kRequestBytes)));
  add_value("matserve_payload_bytes_total", payload_help, MetricType::Counter,
            {{"direction", "response"}},
            static_cast<double>(request_cells_.Sum(kResponseBytes)));
  const char* copy_help = "Bytes copied between host and device.";
  add_value("matserve_copy_bytes_total", copy_help, MetricType::Counter,
            {{"direction", kCopyDirections[0]}},
            static_cast<double>(batch_cells_.Sum(kHostToDeviceBytes)));
  add_value("matserve_copy_bytes_total", copy_help, MetricType::Counter,
            {{"direction", kCopyDirections[1]}},
            static_cast<double>(batch_cells_.Sum(kDeviceToHostBytes)));
  for (size_t device = 0; device < options_.devices.size(); ++device) {
    add_value("matserve_device_busy_seconds_total",
              "Time the device had at least one batch in progress (the "
              "union of the batches' busy intervals): rate() is its "
              "utilisation.",
              MetricType::Counter, {{"device", options_.devices[device]}},
              static_cast<double>(device_busy_[device]->TotalNanoseconds()) /
                  kNanosecondsPerSecond);
  }
  if (options_.device_memory) {
    std::vector<std::pair<std::string, engine::DeviceMemory>> memory;
    for (size_t device = 0; device < options_.devices.size(); ++device) {
      absl::StatusOr<engine::DeviceMemory> read =
          options_.device_memory(static_cast<int>(device));
      if (read.ok()) memory.emplace_back(options_.devices[device], *read);
    }
    for (const auto& [device, read] : memory) {
      add_value("matserve_device_memory_used_bytes",
                "Device memory in use, by every process (cudaMemGetInfo).",
                MetricType::Gauge, {{"device", device}},
                static_cast<double>(read.used_bytes));
    }
    for (const auto& [device, read] : memory) {
      add_value("matserve_device_memory_total_bytes", "Device memory in all.",
                MetricType::Gauge, {{"device", device}},
                static_cast<double>(read.total_bytes));
    }
  }
  return families;
}

}  // namespace matserve::metrics
