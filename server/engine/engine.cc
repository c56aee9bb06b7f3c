// Engine: per-method queues under one mutex, and one worker per executor that
// takes what waits as a batch.
#include "server/engine/engine.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace matserve::engine {
namespace {

size_t Index(Method method) { return static_cast<size_t>(method); }

}  // namespace

Engine::Engine(std::vector<std::unique_ptr<Executor>> executors,
               EngineOptions options)
    : options_(options),
      observer_(options.observer != nullptr ? *options.observer : no_observer_),
      executors_(std::move(executors)),
      clock_(options.clock ? options.clock : [] { return absl::Now(); }) {
  if (options_.hold_rule == HoldRule::kAdaptive) {
    controller_.emplace(options_.hold_controller, clock_());
  }
  for (const std::unique_ptr<Executor>& executor : executors_) {
    const size_t device = executor->device();
    if (workers_.size() <= device) workers_.resize(device + 1, 0);
    ++workers_[device];
  }
  busy_workers_.assign(workers_.size(), 0);
  threads_.reserve(executors_.size());
  for (const std::unique_ptr<Executor>& executor : executors_) {
    threads_.emplace_back([this, &executor] { WorkerLoop(*executor); });
  }
}

Engine::~Engine() { Stop(); }

absl::Status Engine::Submit(Job job) {
  const uint64_t bytes = InputBytes(job.op) + OutputBytes(job.op);
  const absl::Time arrival =
      job.arrival == absl::InfinitePast() ? absl::Now() : job.arrival;
  std::string change;  // the adaptive rule's, logged without mu_
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return absl::UnavailableError("server is shutting down");
    if (queued_requests_ >= options_.max_queue_requests) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "server is overloaded: the queue holds ", queued_requests_,
          " requests, its bound (--max_queue_requests)"));
    }
    // An empty queue takes any one request, so a request larger than the
    // bound is not refused forever.
    const uint64_t queued_bytes = queued_bytes_[0] + queued_bytes_[1];
    if (queued_requests_ > 0 &&
        queued_bytes + bytes > options_.max_queue_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "server is overloaded: the queue holds ", queued_bytes,
          " bytes and this request needs ", bytes,
          " more than its bound (--max_queue_bytes=", options_.max_queue_bytes,
          ")"));
    }
    const size_t method = Index(MethodOf(job.op));
    queues_[method].push_back({std::move(job), bytes, arrival});
    queued_bytes_[method] += bytes;
    ++queued_requests_;
    if (controller_.has_value()) {
      controller_->Advance(clock_());
      change = controller_->TakeChange();
    }
  }
  if (!change.empty() && options_.log) options_.log("batcher: " + change);
  // A worker holding a batch open must see the new job as well as an idle
  // one, and they may be on different devices.
  if (options_.max_queue_delay > absl::ZeroDuration()) {
    work_or_stop_.notify_all();
  } else {
    work_or_stop_.notify_one();
  }
  return absl::OkStatus();
}

size_t Engine::QueuedRequests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queued_requests_;
}

void Engine::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_or_stop_.notify_all();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

std::optional<Method> Engine::ReadyQueue(int device, absl::Time now,
                                         bool while_device_busy,
                                         absl::Time& wake) const {
  std::optional<Method> ready;
  absl::Time ready_arrival = absl::InfiniteFuture();
  wake = absl::InfiniteFuture();
  for (Method method : kMethods) {
    const std::deque<Queued>& queue = queues_[Index(method)];
    if (queue.empty()) continue;
    const absl::Time hold = HoldUntil(method, device, while_device_busy);
    if (hold > now) {
      wake = std::min(wake, hold);
    } else if (queue.front().arrival < ready_arrival) {
      ready = method;
      ready_arrival = queue.front().arrival;
    }
  }
  return ready;
}

bool Engine::HoldWhileDeviceBusy() {
  switch (options_.hold_rule) {
    case HoldRule::kWhileOthersBusy:
      return false;
    case HoldRule::kWhileDeviceBusy:
      return true;
    case HoldRule::kAdaptive:
      break;
  }
  return controller_->Holding(clock_());
}

absl::Time Engine::HoldUntil(Method method, int device,
                             bool while_device_busy) const {
  // A lone request on an idle device never waits. Otherwise: while another
  // worker could take the jobs now, only if the rule holds while the device
  // is busy at all.
  const int busy = busy_workers_[device];
  if (stopping_ || options_.max_queue_delay <= absl::ZeroDuration() ||
      busy == 0 || (!while_device_busy && busy < workers_[device] - 1)) {
    return absl::InfinitePast();
  }
  const std::deque<Queued>& queue = queues_[Index(method)];
  if (queue.size() >= options_.max_batch_size ||
      queued_bytes_[Index(method)] >= options_.max_batch_bytes) {
    return absl::InfinitePast();
  }
  return queue.front().arrival + options_.max_queue_delay;
}

void Engine::TakeBatch(Method method, absl::Time now, Batch& batch,
                       std::vector<std::pair<Job, absl::Status>>& dropped) {
  std::deque<Queued>& queue = queues_[Index(method)];
  uint64_t bytes = 0;
  while (!queue.empty() && batch.jobs.size() < options_.max_batch_size) {
    Queued& front = queue.front();
    absl::Status drop;
    if (front.job.cancelled && front.job.cancelled()) {
      drop = absl::CancelledError("the call was cancelled before compute");
    } else if (now > front.job.deadline) {
      drop =
          absl::DeadlineExceededError("deadline passed before compute started");
    } else if (!batch.jobs.empty() &&
               bytes + front.bytes > options_.max_batch_bytes) {
      break;  // the batch is full; a job over the bound alone runs alone
    }
    if (drop.ok()) {
      bytes += front.bytes;
      batch.queue_waits.push_back(now - front.arrival);
      batch.ops.push_back(front.job.op);
      batch.jobs.push_back(std::move(front.job));
    } else {
      dropped.emplace_back(std::move(front.job), std::move(drop));
    }
    --queued_requests_;
    queued_bytes_[Index(method)] -= front.bytes;
    queue.pop_front();
  }
}

void Engine::WorkerLoop(Executor& executor) {
  const int device = executor.device();
  for (;;) {
    Batch batch;
    std::vector<std::pair<Job, absl::Status>> dropped;
    std::string change;  // the adaptive rule's, logged without mu_
    {
      std::unique_lock<std::mutex> lock(mu_);
      for (;;) {
        if (queued_requests_ == 0) {
          if (stopping_) return;  // everything accepted is done
          work_or_stop_.wait(lock);
          continue;
        }
        const absl::Time now = absl::Now();
        absl::Time wake;
        const std::optional<Method> method =
            ReadyQueue(device, now, HoldWhileDeviceBusy(), wake);
        if (!method.has_value()) {
          work_or_stop_.wait_until(lock, absl::ToChronoTime(wake));
          continue;
        }
        TakeBatch(*method, now, batch, dropped);
        break;
      }
      if (!batch.jobs.empty()) ++busy_workers_[device];
      if (controller_.has_value()) {
        controller_->Served(clock_(), batch.jobs.size());
        change = controller_->TakeChange();
      }
    }
    if (!change.empty() && options_.log) options_.log("batcher: " + change);
    for (auto& [job, status] : dropped) std::move(job.done)(std::move(status));
    if (batch.jobs.empty()) continue;
    RunBatch(executor, batch);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --busy_workers_[device];
    }
    // Workers holding batches open for company stop once the device idles.
    if (options_.max_queue_delay > absl::ZeroDuration()) {
      work_or_stop_.notify_all();
    }
  }
}

void Engine::RunBatch(Executor& executor, Batch& batch) {
  BatchRecord record;
  record.method = MethodOf(batch.ops.front());
  record.device = executor.device();
  record.queue_waits = batch.queue_waits;
  for (const Op& op : batch.ops) record.flops += Flops(op);
  const absl::Status status = executor.Run(batch.ops, record);
  record.ok = status.ok();
  for (Job& job : batch.jobs) std::move(job.done)(status);
  observer_.BatchFinished(record);
}

}  // namespace matserve::engine
