// ServerMetrics: the engine::Observer that turns what the RPC layer and the
// engine report into Prometheus families, served on /metrics over HTTP.
#ifndef MATSERVE_SERVER_METRICS_SERVER_METRICS_H_
#define MATSERVE_SERVER_METRICS_SERVER_METRICS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "server/engine/cuda_executor.h"
#include "server/engine/observer.h"
#include "server/metrics/busy_tracker.h"
#include "server/metrics/sharded.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace matserve::metrics {

struct MetricsOptions {
  // host:port of the HTTP endpoint (path /metrics); port 0 picks a free one.
  std::string address = "0.0.0.0:9464";
  // matserve_build_info{version, backend}: e.g. "0.1.0" and "cuda" or "cpu".
  std::string version = {};
  std::string backend = {};
  // The `device` label of each device, indexed by BatchRecord::device: {"0",
  // "1"} for two GPUs, {"cpu"} on the CPU backend.
  std::vector<std::string> devices = {};
  // The engine's largest batch: matserve_batch_size's buckets run from 1 to it.
  size_t max_batch_size = 1;
  // The queue's bound, exported as matserve_queue_capacity_requests so that an
  // alert can compare the queue with it.
  size_t queue_capacity = 0;
  // Requests waiting for compute now. Called at every scrape, on an HTTP
  // thread; required.
  std::function<size_t()> queued_requests = nullptr;
  // A device's memory by index into `devices`, called at every scrape on an
  // HTTP thread. Empty: no memory gauges (the CPU backend). An error leaves
  // that device's gauges out of that scrape.
  std::function<absl::StatusOr<engine::DeviceMemory>(int device)>
      device_memory = nullptr;
};

// The families, all exported from the start at zero so that rate() and the
// alerts see every series:
// - matserve_requests_total{method,code}: counter.
// - matserve_request_duration_seconds{method}: histogram, handler to answer.
// - matserve_queue_duration_seconds{method}: histogram, arrival to batch.
// - matserve_compute_duration_seconds{method}: histogram, per batch.
// - matserve_copy_duration_seconds{direction}: histogram, per batch.
// - matserve_batch_size{method}: histogram, requests per batch.
// - matserve_queue_requests, matserve_queue_capacity_requests,
//   matserve_inflight_requests: gauges.
// - matserve_flops_total: counter.
// - matserve_payload_bytes_total{direction}: counter, request/response.
// - matserve_copy_bytes_total{direction}: counter, host<->device.
// - matserve_device_busy_seconds_total{device}: counter.
// - matserve_device_memory_{used,total}_bytes{device}: gauges.
// - matserve_build_info{version,backend}: gauge, 1.
//
// Observations are lock-free (per-thread shards of relaxed atomics, see
// sharded.h), except device busy time: one mutex per device, once per batch.
class ServerMetrics final : public engine::Observer,
                            public prometheus::Collectable {
 public:
  // Builds the families; serves nothing until Listen. `options.devices` is not
  // empty and `options.queued_requests` is set.
  explicit ServerMetrics(MetricsOptions options);
  // Stops the HTTP server first, so no scrape runs while members go away.
  ~ServerMetrics() override;

  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  // Serves /metrics on options.address, from HTTP threads of its own. Call at
  // most once, when what the callbacks read exists. UNAVAILABLE (with the
  // address and the HTTP server's reason) when the address cannot be bound.
  absl::Status Listen();
  // The address Listen bound, host:port with the real port.
  std::string BoundAddress() const;

  // engine::Observer; any thread.
  void RequestStarted(engine::Method method) override;
  void RequestFinished(engine::Method method, absl::StatusCode code,
                       absl::Duration duration, uint64_t request_bytes,
                       uint64_t response_bytes) override;
  void BatchFinished(const engine::BatchRecord& record) override;

  // prometheus::Collectable: every family, summed over the shards, with the
  // gauges read from the callbacks. Any thread.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  static constexpr size_t kMethodCount = std::size(engine::kMethods);
  static constexpr size_t kCodeCount = 17;  // absl::StatusCode 0..16

  // Cells of request_cells_.
  enum RequestCell : size_t {
    kInflight,
    kRequestBytes,
    kResponseBytes,
    kFirstRequestCount,  // then one per (method, code)
  };
  // Cells of batch_cells_.
  enum BatchCell : size_t {
    kFlops,
    kHostToDeviceBytes,
    kDeviceToHostBytes,
    kBatchCellCount,
  };

  const MetricsOptions options_;
  ShardedCells request_cells_;
  ShardedCells batch_cells_;
  // Indexed by method (the copy histograms by direction).
  std::vector<ShardedHistogram> request_duration_;
  std::vector<ShardedHistogram> queue_duration_;
  std::vector<ShardedHistogram> compute_duration_;
  std::vector<ShardedHistogram> copy_duration_;
  std::vector<ShardedHistogram> batch_size_;
  std::vector<std::unique_ptr<BusyTracker>> device_busy_;  // by device

  // What the HTTP server holds: a non-owning pointer to this (the HTTP server
  // is stopped before this object goes away).
  std::shared_ptr<prometheus::Collectable> registration_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace matserve::metrics

#endif  // MATSERVE_SERVER_METRICS_SERVER_METRICS_H_
