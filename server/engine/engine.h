// Engine: the queue between the RPC handlers and the executors, and the worker
// threads that drain it. The dynamic batcher will take this queue's place; the
// contract of Submit stays.
#ifndef MATSERVE_SERVER_ENGINE_ENGINE_H_
#define MATSERVE_SERVER_ENGINE_ENGINE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "server/engine/executor.h"
#include "server/engine/job.h"

namespace matserve::engine {

struct EngineOptions {
  // Jobs waiting for a worker; Submit refuses more with RESOURCE_EXHAUSTED.
  size_t max_queued_jobs = 1024;
};

class Engine {
 public:
  // Starts one worker thread per executor; the engine owns the executors.
  // `executors` is not empty.
  Engine(std::vector<std::unique_ptr<Executor>> executors,
         EngineOptions options);
  // Stops (see Stop) if that has not been done.
  ~Engine();

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues `job`; never waits for compute. Any thread. On OK the engine owns
  // the job and calls its `done` exactly once, on a worker thread: with the
  // executor's status, or DEADLINE_EXCEEDED if the deadline passed while it
  // waited. Otherwise (UNAVAILABLE once stopping, RESOURCE_EXHAUSTED when the
  // queue is full) `done` is never called and the caller answers the request
  // itself.
  absl::Status Submit(Job job);

  // Refuses new jobs, finishes every job already accepted, and joins the
  // workers. Any thread but a worker (so not from a `done` callback);
  // idempotent.
  void Stop();

 private:
  void WorkerLoop(Executor& executor);

  const EngineOptions options_;
  const std::vector<std::unique_ptr<Executor>> executors_;
  std::mutex mu_;
  std::condition_variable work_or_stop_;
  std::deque<Job> queue_;  // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_ENGINE_H_
