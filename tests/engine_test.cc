// Engine (dynamic batcher) tests on fake executors: how batches close (size,
// bytes, delay, a lone large job), no wait while the device idles, order,
// deadlines, cancellation, queue bounds, failures and draining on Stop.
#include "server/engine/engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace matserve::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A 2 x 3 transpose with its own buffers: 24 bytes in, 24 out.
struct Buffers {
  float input[6] = {1, 2, 3, 4, 5, 6};
  float output[6] = {};
  Op op() { return TransposeOp{2, 3, input, output}; }
  Op multiply() { return MultiplyOp{2, 3, 2, input, input, output}; }
};

// What the fake executors ran: each batch as the input pointers of its ops,
// and when it started.
class Recorder {
 public:
  struct Batch {
    std::vector<const float*> inputs;
    Method method;
    absl::Time start;
    int executor;
  };

  void Add(Batch batch) {
    std::lock_guard<std::mutex> lock(mu_);
    batches_.push_back(std::move(batch));
  }
  std::vector<Batch> batches() const {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  // The batches' sizes, in the order they started.
  std::vector<size_t> sizes() const {
    std::vector<size_t> sizes;
    for (const Batch& batch : batches()) sizes.push_back(batch.inputs.size());
    return sizes;
  }

  // A batch holding `input` blocks until Release; Run calls it.
  void HoldBatchesWith(const float* input) { held_input_ = input; }
  void WaitWhileHeld(absl::Span<const Op> batch) {
    for (const Op& op : batch) {
      if (Input(op) == held_input_) {
        holding_.Notify();
        release_.WaitForNotification();
      }
    }
  }
  void WaitUntilHolding() { holding_.WaitForNotification(); }
  void Release() { release_.Notify(); }

  // A batch holding `input` fails with INTERNAL.
  void FailBatchesWith(const float* input) { failing_input_ = input; }
  bool ShouldFail(absl::Span<const Op> batch) const {
    for (const Op& op : batch) {
      if (Input(op) == failing_input_) return true;
    }
    return false;
  }

  static const float* Input(const Op& op) {
    if (const auto* m = std::get_if<MultiplyOp>(&op)) return m->a;
    return std::get<TransposeOp>(op).input;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Batch> batches_;
  const float* held_input_ = nullptr;
  const float* failing_input_ = nullptr;
  absl::Notification holding_;
  absl::Notification release_;
};

// Computes by hand and tells the recorder what it ran.
class FakeExecutor final : public Executor {
 public:
  FakeExecutor(Recorder* recorder, int id, int device = 0)
      : recorder_(recorder), id_(id), device_(device) {}

  absl::Status Run(absl::Span<const Op> batch, BatchRecord& record) override {
    Recorder::Batch seen{{}, MethodOf(batch[0]), absl::Now(), id_};
    for (const Op& op : batch) seen.inputs.push_back(Recorder::Input(op));
    recorder_->Add(seen);
    recorder_->WaitWhileHeld(batch);
    if (recorder_->ShouldFail(batch)) {
      return absl::InternalError("fake device error");
    }
    for (const Op& op : batch) {
      if (const auto* m = std::get_if<MultiplyOp>(&op)) {
        for (uint32_t i = 0; i < m->m; ++i) {
          for (uint32_t j = 0; j < m->n; ++j) {
            float sum = 0;
            for (uint32_t p = 0; p < m->k; ++p) {
              sum += m->a[i * m->k + p] * m->b[p * m->n + j];
            }
            m->c[i * m->n + j] = sum;
          }
        }
      } else {
        const auto& t = std::get<TransposeOp>(op);
        for (uint32_t r = 0; r < t.rows; ++r) {
          for (uint32_t c = 0; c < t.cols; ++c) {
            t.output[c * t.rows + r] = t.input[r * t.cols + c];
          }
        }
      }
    }
    record.compute = absl::Microseconds(batch.size());
    return absl::OkStatus();
  }
  int device() const override { return device_; }
  std::string Describe() const override { return "fake"; }

 private:
  Recorder* const recorder_;
  const int id_;
  const int device_;
};

std::vector<std::unique_ptr<Executor>> Fakes(Recorder* recorder, int count) {
  std::vector<std::unique_ptr<Executor>> executors;
  for (int i = 0; i < count; ++i) {
    executors.push_back(std::make_unique<FakeExecutor>(recorder, i));
  }
  return executors;
}

// Collects the statuses that done callbacks report, by job.
class Results {
 public:
  absl::AnyInvocable<void(absl::Status) &&> Callback(int job) {
    return [this, job](absl::Status status) {
      std::lock_guard<std::mutex> lock(mu_);
      statuses_.emplace_back(job, std::move(status));
      changed_.notify_all();
    };
  }
  // The statuses once `count` have come (or after 10 s), in job order.
  std::map<int, absl::Status> WaitFor(size_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, std::chrono::seconds(10),
                      [&] { return statuses_.size() >= count; });
    std::map<int, absl::Status> by_job;
    for (const auto& [job, status] : statuses_) {
      EXPECT_TRUE(by_job.emplace(job, status).second)
          << "job " << job << " answered twice";
    }
    return by_job;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::pair<int, absl::Status>> statuses_;
};

Job MakeJob(Op op, absl::AnyInvocable<void(absl::Status) &&> done) {
  Job job;
  job.op = op;
  job.done = std::move(done);
  return job;
}

// Submits `op` as job 0 and returns once a worker holds it (until
// recorder.Release()).
void SubmitAndHold(Engine& engine, Recorder& recorder, Op op,
                   Results& results) {
  recorder.HoldBatchesWith(Recorder::Input(op));
  ASSERT_TRUE(engine.Submit(MakeJob(op, results.Callback(0))).ok());
  recorder.WaitUntilHolding();
}

// Submits buffers[0], waits until a worker holds it, then submits the rest:
// they wait together.
void SubmitBehindAHeldJob(Engine& engine, Recorder& recorder,
                          std::vector<Buffers>& buffers, Results& results) {
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  for (size_t i = 1; i < buffers.size(); ++i) {
    ASSERT_TRUE(
        engine.Submit(MakeJob(buffers[i].op(), results.Callback(i))).ok());
  }
}

void ExpectAllOk(const std::map<int, absl::Status>& statuses, size_t count) {
  ASSERT_EQ(statuses.size(), count);
  for (const auto& [job, status] : statuses) {
    EXPECT_TRUE(status.ok()) << "job " << job << ": " << status;
  }
}

TEST(Engine, RunsASubmittedJobAndReportsOk) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 1), {});
  Buffers buffers;
  Results results;
  ASSERT_TRUE(engine.Submit(MakeJob(buffers.op(), results.Callback(0))).ok());
  ExpectAllOk(results.WaitFor(1), 1);
  const float want[6] = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(buffers.output[i], want[i]) << i;
}

TEST(Engine, JobsThatWaitTogetherRunAsOneBatchInArrivalOrder) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 1), {});
  std::vector<Buffers> buffers(6);
  Results results;
  SubmitBehindAHeldJob(engine, recorder, buffers, results);
  EXPECT_EQ(engine.QueuedRequests(), 5u);
  recorder.Release();
  ExpectAllOk(results.WaitFor(6), 6);
  const std::vector<Recorder::Batch> batches = recorder.batches();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_THAT(batches[1].inputs,
              ElementsAre(buffers[1].input, buffers[2].input, buffers[3].input,
                          buffers[4].input, buffers[5].input));
  for (const Buffers& b : buffers) EXPECT_EQ(b.output[1], 4.0f);
  EXPECT_EQ(engine.QueuedRequests(), 0u);
}

// Jobs queue behind a held one, then run in batches of these sizes: 48 bytes
// a job (24 in, 24 out).
struct BoundCase {
  const char* name;
  EngineOptions options;
  size_t jobs;
  std::vector<size_t> sizes;
};

TEST(Engine, BatchesCloseAtTheirBounds) {
  const BoundCase cases[] = {
      {"max_batch_size 3", {.max_batch_size = 3}, 8, {1, 3, 3, 1}},
      {"two jobs fit in 100 bytes", {.max_batch_bytes = 100}, 6, {1, 2, 2, 1}},
      {"each job over 40 bytes runs alone",
       {.max_batch_bytes = 40},
       4,
       {1, 1, 1, 1}},
  };
  for (const BoundCase& c : cases) {
    SCOPED_TRACE(c.name);
    Recorder recorder;
    Engine engine(Fakes(&recorder, 1), c.options);
    std::vector<Buffers> buffers(c.jobs);
    Results results;
    SubmitBehindAHeldJob(engine, recorder, buffers, results);
    recorder.Release();
    ExpectAllOk(results.WaitFor(c.jobs), c.jobs);
    EXPECT_EQ(recorder.sizes(), c.sizes);
  }
}

TEST(Engine, BatchesNeverMixMethodsAndTheOldestQueueGoesFirst) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 1), {});
  std::vector<Buffers> buffers(5);
  Results results;
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  // Multiply first, then transposes and multiplies alternating.
  for (int i = 1; i < 5; ++i) {
    const Op op = i % 2 == 1 ? buffers[i].multiply() : buffers[i].op();
    ASSERT_TRUE(engine.Submit(MakeJob(op, results.Callback(i))).ok());
  }
  recorder.Release();
  ExpectAllOk(results.WaitFor(5), 5);
  const std::vector<Recorder::Batch> batches = recorder.batches();
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[1].method, Method::kMultiply);
  EXPECT_THAT(batches[1].inputs,
              ElementsAre(buffers[1].input, buffers[3].input));
  EXPECT_EQ(batches[2].method, Method::kTranspose);
  EXPECT_THAT(batches[2].inputs,
              ElementsAre(buffers[2].input, buffers[4].input));
  // 2x3 times 3x2 on the same six values: [[22, 28], [49, 64]].
  EXPECT_THAT(buffers[1].output, ::testing::ElementsAre(22, 28, 49, 64, 0, 0));
}

TEST(Engine, AnIdleDeviceNeverHoldsAJobForCompany) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 2), {.max_queue_delay = absl::Seconds(30)});
  Buffers buffers;
  Results results;
  const absl::Time submitted = absl::Now();
  ASSERT_TRUE(engine.Submit(MakeJob(buffers.op(), results.Callback(0))).ok());
  ExpectAllOk(results.WaitFor(1), 1);
  EXPECT_LT(absl::Now() - submitted, absl::Seconds(5));
}

TEST(Engine, WhileTheDeviceIsBusyAFreeWorkerHoldsTheBatchForItsDelay) {
  Recorder recorder;
  const absl::Duration delay = absl::Milliseconds(300);
  Engine engine(Fakes(&recorder, 2), {.max_queue_delay = delay});
  std::vector<Buffers> buffers(3);
  Results results;
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  const absl::Time first = absl::Now();
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[1].op(), results.Callback(1))).ok());
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[2].op(), results.Callback(2))).ok());
  const std::map<int, absl::Status> statuses = results.WaitFor(2);
  ASSERT_EQ(statuses.size(), 2u);  // jobs 1 and 2, while job 0 is held
  const std::vector<Recorder::Batch> batches = recorder.batches();
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_THAT(batches[1].inputs,
              ElementsAre(buffers[1].input, buffers[2].input));
  EXPECT_GE(batches[1].start - first, delay - absl::Milliseconds(5));
  recorder.Release();
  ExpectAllOk(results.WaitFor(3), 3);
}

TEST(Engine, NoJobIsHeldWhileAnotherWorkerOnItsDeviceIsFree) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 3), {.max_queue_delay = absl::Seconds(30)});
  std::vector<Buffers> buffers(2);
  Results results;
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  const absl::Time submitted = absl::Now();
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[1].op(), results.Callback(1))).ok());
  ASSERT_EQ(results.WaitFor(1).size(), 1u);  // job 1, while job 0 is held
  EXPECT_LT(absl::Now() - submitted, absl::Seconds(5));
  recorder.Release();
  ExpectAllOk(results.WaitFor(2), 2);
}

TEST(Engine, AHeldQueueDoesNotDelayAFullOneOfTheOtherMethod) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 2),
                {.max_batch_size = 2, .max_queue_delay = absl::Seconds(30)});
  std::vector<Buffers> buffers(4);
  Results results;
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  // A multiply waits for company; two transposes behind it fill a batch.
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[1].multiply(), results.Callback(1))).ok());
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[2].op(), results.Callback(2))).ok());
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[3].op(), results.Callback(3))).ok());
  const std::map<int, absl::Status> early = results.WaitFor(2);
  EXPECT_EQ(early.count(2) + early.count(3), 2u);
  EXPECT_EQ(early.count(1), 0u);  // still held
  recorder.Release();
  ExpectAllOk(results.WaitFor(4), 4);
}

TEST(Engine, AHeldBatchStartsAsSoonAsTheDeviceIdles) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 2), {.max_queue_delay = absl::Seconds(30)});
  std::vector<Buffers> buffers(2);
  Results results;
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[1].op(), results.Callback(1))).ok());
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(recorder.sizes().size(), 1u);  // job 1 is held for company
  const absl::Time released = absl::Now();
  recorder.Release();
  ExpectAllOk(results.WaitFor(2), 2);
  EXPECT_LT(absl::Now() - released, absl::Seconds(5));
}

TEST(Engine, AHeldBatchClosesAsSoonAsItIsFull) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 2),
                {.max_batch_size = 2, .max_queue_delay = absl::Seconds(30)});
  std::vector<Buffers> buffers(3);
  Results results;
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  const absl::Time first = absl::Now();
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[1].op(), results.Callback(1))).ok());
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[2].op(), results.Callback(2))).ok());
  ASSERT_EQ(results.WaitFor(2).size(), 2u);
  EXPECT_LT(absl::Now() - first, absl::Seconds(5));
  EXPECT_THAT(recorder.sizes(), ElementsAre(1, 2));
  recorder.Release();
  ExpectAllOk(results.WaitFor(3), 3);
}

TEST(Engine, JobWhoseDeadlinePassedInTheQueueIsNotComputed) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 1), {});
  std::vector<Buffers> buffers(3);
  Results results;
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  Job expired = MakeJob(buffers[1].op(), results.Callback(1));
  expired.deadline = absl::Now() + absl::Milliseconds(1);
  ASSERT_TRUE(engine.Submit(std::move(expired)).ok());
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[2].op(), results.Callback(2))).ok());
  absl::SleepFor(absl::Milliseconds(20));  // past job 1's deadline
  recorder.Release();
  const std::map<int, absl::Status> statuses = results.WaitFor(3);
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_EQ(statuses.at(1).code(), absl::StatusCode::kDeadlineExceeded)
      << statuses.at(1);
  EXPECT_TRUE(statuses.at(2).ok()) << statuses.at(2);
  EXPECT_THAT(recorder.batches()[1].inputs, ElementsAre(buffers[2].input));
  EXPECT_EQ(buffers[1].output[1], 0.0f);  // never computed
}

TEST(Engine, CancelledJobIsDroppedBeforeCompute) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 1), {});
  std::vector<Buffers> buffers(3);
  Results results;
  std::atomic<bool> cancelled{false};
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  Job job = MakeJob(buffers[1].op(), results.Callback(1));
  job.cancelled = [&cancelled] { return cancelled.load(); };
  ASSERT_TRUE(engine.Submit(std::move(job)).ok());
  ASSERT_TRUE(
      engine.Submit(MakeJob(buffers[2].op(), results.Callback(2))).ok());
  cancelled = true;  // the client gives up while the job waits
  recorder.Release();
  const std::map<int, absl::Status> statuses = results.WaitFor(3);
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_EQ(statuses.at(1).code(), absl::StatusCode::kCancelled)
      << statuses.at(1);
  EXPECT_TRUE(statuses.at(2).ok()) << statuses.at(2);
  EXPECT_THAT(recorder.batches()[1].inputs, ElementsAre(buffers[2].input));
}

TEST(Engine, FullQueueRefusesWithResourceExhaustedAndStopDrainsTheRest) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 1), {.max_queue_requests = 2});
  std::vector<Buffers> buffers(3);
  Results results;
  // The first job occupies the worker; two more fill the queue; the fourth is
  // refused.
  SubmitBehindAHeldJob(engine, recorder, buffers, results);
  Buffers refused_buffers;
  const absl::Status refused =
      engine.Submit(MakeJob(refused_buffers.op(), results.Callback(3)));
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("--max_queue_requests"));

  recorder.Release();
  engine.Stop();  // returns only once the three accepted jobs are done
  ExpectAllOk(results.WaitFor(3), 3);
  EXPECT_EQ(buffers[2].output[1], 4.0f);
  EXPECT_EQ(refused_buffers.output[1], 0.0f);  // the refused job never ran
}

TEST(Engine, QueueBytesBoundRefusesButAnEmptyQueueTakesAnyJob) {
  Recorder recorder;
  // 48 bytes a job: the held one is out of the queue, one more fits in 60.
  Engine engine(Fakes(&recorder, 1), {.max_queue_bytes = 60});
  std::vector<Buffers> buffers(2);
  Results results;
  SubmitBehindAHeldJob(engine, recorder, buffers, results);
  Buffers refused_buffers;
  const absl::Status refused =
      engine.Submit(MakeJob(refused_buffers.op(), results.Callback(2)));
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("--max_queue_bytes"));
  recorder.Release();
  ExpectAllOk(results.WaitFor(2), 2);

  Engine small(Fakes(&recorder, 1), {.max_queue_bytes = 1});
  Buffers alone;
  ASSERT_TRUE(small.Submit(MakeJob(alone.op(), results.Callback(3))).ok());
  ExpectAllOk(results.WaitFor(3), 3);
}

TEST(Engine, SubmitAfterStopIsUnavailable) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 1), {});
  engine.Stop();
  Buffers buffers;
  Results results;
  const absl::Status status =
      engine.Submit(MakeJob(buffers.op(), results.Callback(0)));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
}

TEST(Engine, AFailedBatchFailsItsJobsAndTheEngineKeepsServing) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 1), {});
  std::vector<Buffers> buffers(3);
  Results results;
  recorder.FailBatchesWith(buffers[1].input);
  SubmitBehindAHeldJob(engine, recorder, buffers, results);
  recorder.Release();
  std::map<int, absl::Status> statuses = results.WaitFor(3);
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_TRUE(statuses.at(0).ok());
  for (int job : {1, 2}) {  // one batch: both fail
    EXPECT_EQ(statuses.at(job).code(), absl::StatusCode::kInternal);
    EXPECT_THAT(statuses.at(job).message(), HasSubstr("fake device error"));
  }
  Buffers after;
  ASSERT_TRUE(engine.Submit(MakeJob(after.op(), results.Callback(3))).ok());
  statuses = results.WaitFor(4);
  ASSERT_EQ(statuses.size(), 4u);
  EXPECT_TRUE(statuses.at(3).ok()) << statuses.at(3);
}

// Counts what BatchFinished reports.
class CountingObserver final : public Observer {
 public:
  void RequestStarted(Method) override {}
  void RequestFinished(Method, absl::StatusCode, absl::Duration, uint64_t,
                       uint64_t) override {}
  void BatchFinished(const BatchRecord& record) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++batches;
    requests += record.queue_waits.size();
    flops += record.flops;
    for (absl::Duration wait : record.queue_waits) {
      EXPECT_GE(wait, absl::ZeroDuration());
    }
    EXPECT_EQ(record.compute, absl::Microseconds(record.queue_waits.size()));
  }
  std::mutex mu_;
  int batches = 0;
  size_t requests = 0;
  double flops = 0;
};

TEST(Engine, ObserverHearsOfEveryBatchWithItsQueueWaitsAndFlops) {
  Recorder recorder;
  CountingObserver observer;
  std::vector<Buffers> buffers(5);
  {
    Engine engine(Fakes(&recorder, 1), {.observer = &observer});
    Results results;
    SubmitAndHold(engine, recorder, buffers[0].multiply(), results);
    for (int i = 1; i < 5; ++i) {
      ASSERT_TRUE(
          engine.Submit(MakeJob(buffers[i].multiply(), results.Callback(i)))
              .ok());
    }
    recorder.Release();
    ExpectAllOk(results.WaitFor(5), 5);
  }  // Stop: every BatchFinished has returned
  EXPECT_EQ(observer.batches, 2);
  EXPECT_EQ(observer.requests, 5u);
  EXPECT_EQ(observer.flops, 5 * 2.0 * 2 * 2 * 3);
}

TEST(Engine, ManyThreadsManyWorkersEveryJobCompletesOnceInBoundedBatches) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 4),
                {.max_queue_requests = 100000, .max_batch_size = 16});
  constexpr int kThreads = 8, kJobsPerThread = 500;
  std::vector<Buffers> buffers(kThreads * kJobsPerThread);
  std::atomic<int> done{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int j = 0; j < kJobsPerThread; ++j) {
        Buffers& b = buffers[t * kJobsPerThread + j];
        ASSERT_TRUE(engine
                        .Submit(MakeJob(b.op(),
                                        [&done](absl::Status s) {
                                          EXPECT_TRUE(s.ok()) << s;
                                          done.fetch_add(1);
                                        }))
                        .ok());
      }
    });
  }
  for (std::thread& t : submitters) t.join();
  engine.Stop();
  EXPECT_EQ(done.load(), kThreads * kJobsPerThread);
  size_t computed = 0;
  for (size_t size : recorder.sizes()) {
    EXPECT_LE(size, 16u);
    computed += size;
  }
  EXPECT_EQ(computed, buffers.size());
  for (const Buffers& b : buffers) ASSERT_EQ(b.output[5], 6.0f);
}

}  // namespace
}  // namespace matserve::engine
