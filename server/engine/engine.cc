// Engine: a bounded FIFO of jobs drained by one worker thread per executor.
#include "server/engine/engine.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace matserve::engine {

Engine::Engine(std::vector<std::unique_ptr<Executor>> executors,
               EngineOptions options)
    : options_(options), executors_(std::move(executors)) {
  workers_.reserve(executors_.size());
  for (const std::unique_ptr<Executor>& executor : executors_) {
    workers_.emplace_back([this, &executor] { WorkerLoop(*executor); });
  }
}

Engine::~Engine() { Stop(); }

absl::Status Engine::Submit(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return absl::UnavailableError("server is shutting down");
    if (queue_.size() >= options_.max_queued_jobs) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "server is overloaded: ", queue_.size(), " requests already queued"));
    }
    queue_.push_back(std::move(job));
  }
  work_or_stop_.notify_one();
  return absl::OkStatus();
}

void Engine::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_or_stop_.notify_all();
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

void Engine::WorkerLoop(Executor& executor) {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_or_stop_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything accepted is done
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    absl::Status status = absl::Now() > job.deadline
                              ? absl::DeadlineExceededError(
                                    "deadline passed before compute started")
                              : executor.Run(job.op);
    std::move(job.done)(std::move(status));
  }
}

}  // namespace matserve::engine
