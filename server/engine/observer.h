// Observer: what the RPC layer and the engine report as they serve, for
// metrics. The engine and the RPC layer see only this interface; server/metrics
// implements it with Prometheus families.
#ifndef MATSERVE_SERVER_ENGINE_OBSERVER_H_
#define MATSERVE_SERVER_ENGINE_OBSERVER_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/engine/job.h"

namespace matserve::engine {

// What one batch cost, as its worker measured it.
struct BatchRecord {
  Method method = Method::kMultiply;
  // The executor's device: an index into the device list the observer was
  // built with (0 on the CPU backend).
  int device = 0;
  // How long each request of the batch waited, from arrival to the batch's
  // start; one entry per request computed.
  absl::Span<const absl::Duration> queue_waits;
  // Device (CUDA events) or CPU time of the kernels alone.
  absl::Duration compute;
  // Host<->device transfers (CUDA events); zero and zero bytes on the CPU.
  absl::Duration host_to_device;
  absl::Duration device_to_host;
  uint64_t host_to_device_bytes = 0;
  uint64_t device_to_host_bytes = 0;
  // Wall time from the first copy's enqueue to the stream's completion: the
  // time this batch gave the device work.
  absl::Duration busy;
  double flops = 0;  // 2*m*n*k summed over a multiply batch; 0 for transposes
  bool ok = true;
};

// Every method may be called from many threads at once and must return
// quickly: they sit on the serving path.
class Observer {
 public:
  virtual ~Observer() = default;

  // An RPC reached its handler (before validation).
  virtual void RequestStarted(Method method) = 0;
  // The RPC's answer was handed to gRPC: `code` as sent, `duration` from
  // RequestStarted, the request's and the response's matrix payload bytes.
  virtual void RequestFinished(Method method, absl::StatusCode code,
                               absl::Duration duration, uint64_t request_bytes,
                               uint64_t response_bytes) = 0;
  // A worker finished a batch (successfully or not).
  virtual void BatchFinished(const BatchRecord& record) = 0;
};

// Reports nothing: for tests, and for servers run without metrics.
class NoObserver final : public Observer {
 public:
  void RequestStarted(Method) override {}
  void RequestFinished(Method, absl::StatusCode, absl::Duration, uint64_t,
                       uint64_t) override {}
  void BatchFinished(const BatchRecord&) override {}
};

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_OBSERVER_H_
