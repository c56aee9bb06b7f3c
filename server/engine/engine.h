// Engine: the dynamic batcher between the RPC handlers and the executors. Jobs
// queue per method; each executor has a worker thread that takes the waiting
// jobs of one method as a batch and runs them together.
#ifndef MATSERVE_SERVER_ENGINE_ENGINE_H_
#define MATSERVE_SERVER_ENGINE_ENGINE_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/engine/executor.h"
#include "server/engine/hold_controller.h"
#include "server/engine/job.h"
#include "server/engine/observer.h"

namespace matserve::engine {

// When a free worker whose device is busy holds a batch open for company (up
// to max_queue_delay; never while its device is idle).
enum class HoldRule {
  // Only while every other worker on its device is busy: no worker idles while
  // jobs wait. Small batches (the GPU is rarely that busy), no added latency.
  kWhileOthersBusy,
  // While any other worker on its device is busy: batches as large as the
  // load makes them, at the cost of delaying answers by up to one batch.
  kWhileDeviceBusy,
  // kWhileDeviceBusy while the HoldController measures that holds do not slow
  // the rate at which the engine serves requests (by more than its margin),
  // else kWhileOthersBusy.
  kAdaptive,
};

struct EngineOptions {
  // Bounds on what waits for a worker; Submit refuses more with
  // RESOURCE_EXHAUSTED. Bytes count inputs and outputs.
  size_t max_queue_requests = 1024;
  uint64_t max_queue_bytes = uint64_t{4} << 30;
  // A batch closes at this many requests or bytes (inputs and outputs). A job
  // over max_batch_bytes on its own runs alone.
  size_t max_batch_size = 64;
  uint64_t max_batch_bytes = uint64_t{64} << 20;
  // How long a free worker may hold a batch open for company, counted from its
  // oldest job's arrival, and only while its device is busy as `hold_rule`
  // says. Zero: never wait.
  absl::Duration max_queue_delay = absl::ZeroDuration();
  HoldRule hold_rule = HoldRule::kAdaptive;
  HoldControllerOptions hold_controller = {};
  // The clock of the hold controller's epochs; empty: absl::Now. Tests step
  // it by hand. (Queue delays always run on absl::Now.)
  std::function<absl::Time()> clock = nullptr;
  // Hears a line each time the adaptive rule changes its mind (from a Submit
  // or a worker, without the engine's lock); may be empty.
  std::function<void(const std::string&)> log = nullptr;
  // Hears of every batch; nullptr for none. Outlives the engine.
  Observer* observer = nullptr;
};

class Engine {
 public:
  // Starts one worker thread per executor; the engine owns the executors.
  // `executors` is not empty; the options' sizes and bytes are >= 1.
  Engine(std::vector<std::unique_ptr<Executor>> executors,
         EngineOptions options);
  // Stops (see Stop) if that has not been done.
  ~Engine();

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues `job`; never waits for compute. Any thread. On OK the engine owns
  // the job and calls its `done` exactly once, on a worker thread: with its
  // batch's status; DEADLINE_EXCEEDED if its deadline passed, or CANCELLED if
  // the client gave up, before its batch started (it is then not computed).
  // Otherwise (UNAVAILABLE once stopping, RESOURCE_EXHAUSTED when the queue is
  // full) `done` is never called and the caller answers the request itself.
  absl::Status Submit(Job job);

  // Jobs waiting for a worker now. Any thread.
  size_t QueuedRequests() const;

  // Refuses new jobs, finishes every job already accepted, and joins the
  // workers. Any thread but a worker (so not from a `done` callback);
  // idempotent.
  void Stop();

 private:
  struct Queued {
    Job job;
    uint64_t bytes;      // inputs and outputs
    absl::Time arrival;  // the job's, or when it was queued
  };
  struct Batch {
    std::vector<Job> jobs;
    std::vector<Op> ops;
    std::vector<absl::Duration> queue_waits;
  };

  void WorkerLoop(Executor& executor);
  // The queue a free worker on `device` batches now: of those not held for
  // company, the one whose oldest job waited longest. None when every waiting
  // queue is held; `wake` is then when the first hold ends. mu_ held.
  std::optional<Method> ReadyQueue(int device, absl::Time now,
                                   bool while_device_busy,
                                   absl::Time& wake) const;
  // Whether free workers hold batches for company while any other worker on
  // their device is busy (kWhileDeviceBusy), rather than only while all are
  // (kWhileOthersBusy), now. mu_ held.
  bool HoldWhileDeviceBusy();
  // When a free worker on `device` should stop holding `method`'s queue open
  // for company, or InfinitePast() to close the batch now. mu_ held.
  absl::Time HoldUntil(Method method, int device, bool while_device_busy) const;
  // Moves the front of `method`'s queue into `batch`, up to the batch bounds,
  // and the jobs that must not be computed (deadline passed, cancelled) into
  // `dropped` with their status. mu_ held.
  void TakeBatch(Method method, absl::Time now, Batch& batch,
                 std::vector<std::pair<Job, absl::Status>>& dropped);
  void RunBatch(Executor& executor, Batch& batch);

  const EngineOptions options_;
  NoObserver no_observer_;
  Observer& observer_;
  const std::vector<std::unique_ptr<Executor>> executors_;
  mutable std::mutex mu_;
  std::condition_variable work_or_stop_;
  // By Method; guarded by mu_.
  std::deque<Queued> queues_[std::size(kMethods)];
  uint64_t queued_bytes_[std::size(kMethods)] = {};
  size_t queued_requests_ = 0;     // guarded by mu_
  std::vector<int> workers_;       // by device
  std::vector<int> busy_workers_;  // by device; guarded by mu_
  bool stopping_ = false;          // guarded by mu_
  const std::function<absl::Time()> clock_;
  std::optional<HoldController> controller_;  // kAdaptive; guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_ENGINE_H_
