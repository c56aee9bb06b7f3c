// Engine (dynamic batcher) tests on fake executors: how batches close (size,
// bytes, delay, a lone large job), no wait while the device idles, the hold
// rules and the adaptive rule's controller (on a clock stepped by hand),
// order, deadlines, cancellation, queue bounds, failures and draining on Stop.
#include "server/engine/engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
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
  Engine engine(Fakes(&recorder, 3), {.max_queue_delay = absl::Seconds(30),
                                      .hold_rule = HoldRule::kWhileOthersBusy});
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

TEST(Engine, TheDeviceBusyRuleHoldsWhileAnotherWorkerIsFree) {
  Recorder recorder;
  Engine engine(Fakes(&recorder, 3), {.max_queue_delay = absl::Seconds(30),
                                      .hold_rule = HoldRule::kWhileDeviceBusy});
  std::vector<Buffers> buffers(3);
  Results results;
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  for (int i : {1, 2}) {
    ASSERT_TRUE(
        engine.Submit(MakeJob(buffers[i].op(), results.Callback(i))).ok());
  }
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(recorder.sizes().size(), 1u);  // two workers idle, jobs held
  recorder.Release();
  ExpectAllOk(results.WaitFor(3), 3);
  EXPECT_THAT(recorder.sizes(), ElementsAre(1, 2));
}

// A clock that tests step by hand.
class ManualClock {
 public:
  absl::Time Now() const {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  void Set(absl::Time now) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ = now;
  }
  std::function<absl::Time()> AsFunction() {
    return [this] { return Now(); };
  }

 private:
  mutable std::mutex mu_;
  absl::Time now_ = absl::UnixEpoch();
};

TEST(Engine, TheAdaptiveRuleHoldsInTheControllersHoldingEpochsOnly) {
  Recorder recorder;
  ManualClock clock;
  const absl::Duration epoch = absl::Seconds(10);  // of the manual clock
  std::mutex log_mu;
  std::vector<std::string> log;
  Engine engine(Fakes(&recorder, 3),
                {.max_batch_size = 2,
                 .max_queue_delay = absl::Seconds(30),
                 .hold_rule = HoldRule::kAdaptive,
                 .hold_controller = {.epoch = epoch,
                                     .settle = absl::ZeroDuration(),
                                     .probe_every_unsure = 2,
                                     .min_served = 1},
                 .clock = clock.AsFunction(),
                 .log = [&](const std::string& line) {
                   std::lock_guard<std::mutex> lock(log_mu);
                   log.push_back(line);
                 }});
  std::vector<Buffers> buffers(7);
  Results results;
  const auto submit = [&](int job) {
    ASSERT_TRUE(
        engine.Submit(MakeJob(buffers[job].op(), results.Callback(job))).ok());
  };
  // Epoch 0, not holding yet: job 1 takes a free worker beside held job 0.
  SubmitAndHold(engine, recorder, buffers[0].op(), results);
  submit(1);
  ASSERT_EQ(results.WaitFor(1).count(1), 1u);
  // Epoch 1: the same; one request served.
  clock.Set(absl::UnixEpoch() + epoch);
  submit(2);
  ASSERT_EQ(results.WaitFor(2).count(2), 1u);
  // Epoch 2 probes holding: job 3 waits for company though two workers idle,
  // and goes when job 4 fills the batch: two requests served.
  clock.Set(absl::UnixEpoch() + 2 * epoch);
  submit(3);
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(results.WaitFor(0).count(3), 0u);  // held
  submit(4);
  std::map<int, absl::Status> statuses = results.WaitFor(4);
  EXPECT_EQ(statuses.count(3) + statuses.count(4), 2u);
  EXPECT_EQ(statuses.count(0), 0u);  // still on the device
  // Epoch 3 does not hold: job 5 starts at once; one request served.
  clock.Set(absl::UnixEpoch() + 3 * epoch);
  submit(5);
  statuses = results.WaitFor(5);
  EXPECT_EQ(statuses.count(5), 1u);
  EXPECT_EQ(statuses.count(0), 0u);
  // The probe served twice the mean of the epochs around it: from epoch 4 on
  // the rule holds, and says so once.
  clock.Set(absl::UnixEpoch() + 4 * epoch);
  submit(6);
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(results.WaitFor(0).count(6), 0u);  // held
  {
    std::lock_guard<std::mutex> lock(log_mu);
    ASSERT_EQ(log.size(), 1u);
    EXPECT_THAT(log[0],
                HasSubstr("batcher: holding batches for company while the "
                          "device is busy: requests served at 2.00x"));
  }
  recorder.Release();
  ExpectAllOk(results.WaitFor(7), 7);
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

// The controller alone, on made-up service: each epoch serves `base` requests
// when it does not hold and `base * holding_factor` when it does (a closed
// loop whose callers the holds slow has a factor under 1), evenly spread, one
// at a time.
class ControllerRun {
 public:
  explicit ControllerRun(HoldControllerOptions options)
      : options_(options), controller_(options, absl::UnixEpoch()) {}

  // Runs `epochs` more epochs; returns whether each held.
  std::vector<bool> Epochs(int epochs, int64_t base, double holding_factor) {
    std::vector<bool> held;
    for (int e = 0; e < epochs; ++e, ++epoch_) {
      const absl::Time start = absl::UnixEpoch() + epoch_ * options_.epoch;
      const bool holding = controller_.Holding(start);
      held.push_back(holding);
      const int64_t served =
          holding ? static_cast<int64_t>(base * holding_factor + 0.5) : base;
      for (int64_t i = 0; i < served; ++i) {
        controller_.Served(start + (i + 0.5) / served * options_.epoch, 1);
      }
      // The mode may not change within an epoch.
      EXPECT_EQ(controller_.Holding(start + options_.epoch * 0.999), holding);
    }
    return held;
  }
  HoldController& controller() { return controller_; }

 private:
  const HoldControllerOptions options_;
  HoldController controller_;
  int64_t epoch_ = 0;
};

const HoldControllerOptions kControllerOptions = {
    .epoch = absl::Milliseconds(50),
    .settle = absl::Milliseconds(5),
    .probe_every_unsure = 4,
    .probe_every_sure = 16,
    .margin = 0.05,
    .sure_distance = 0.04,
    .weight = 0.5,
    .min_served = 20};

// Epochs [from, to) of `held` that held.
int Held(const std::vector<bool>& held, int from, int to) {
  int count = 0;
  for (int e = from; e < to; ++e) count += held[e];
  return count;
}

TEST(HoldController, HoldsOnlyInProbesUntilItHasMeasured) {
  ControllerRun run(kControllerOptions);
  // Too few served to measure anything: every fifth epoch probes holding.
  const std::vector<bool> held = run.Epochs(20, 5, 1.0);
  for (int e = 0; e < 20; ++e) EXPECT_EQ(held[e], e % 5 == 4) << e;
  EXPECT_FALSE(run.controller().Measured());
  EXPECT_EQ(run.controller().TakeChange(), "");
}

TEST(HoldController, HoldsWhenHoldsCostNoServiceAndProbesRarely) {
  ControllerRun run(kControllerOptions);
  const std::vector<bool> held = run.Epochs(6 + 17 * 4, 400, 1.0);
  // Epochs 0-3 do not hold, 4 probes holding, 5 (its "after") does not; the
  // sample (r = 1) settles it: from 6 on it holds but for one probe in 17.
  EXPECT_EQ(Held(held, 0, 6), 1);
  EXPECT_TRUE(held[4]);
  EXPECT_EQ(Held(held, 6, 6 + 17 * 4), 16 * 4);
  EXPECT_DOUBLE_EQ(run.controller().HoldingToNotRatio(), 1.0);
  EXPECT_THAT(run.controller().TakeChange(),
              HasSubstr("holding batches for company while the device is "
                        "busy: requests served at 1.00x the rate with holds as "
                        "without (holding while >= 0.95x)"));
  EXPECT_EQ(run.controller().TakeChange(), "");  // said once
}

TEST(HoldController, DoesNotHoldWhenHoldsSlowTheService) {
  ControllerRun run(kControllerOptions);
  const std::vector<bool> held = run.Epochs(6 + 17 * 4, 400, 0.8);
  // One probe in five until the first sample (r = 0.8), then one in 17.
  EXPECT_EQ(Held(held, 0, 6), 1);
  EXPECT_EQ(Held(held, 6, 6 + 17 * 4), 4);
  EXPECT_NEAR(run.controller().HoldingToNotRatio(), 0.8, 1e-9);
  EXPECT_EQ(run.controller().TakeChange(), "");  // it never held
}

TEST(HoldController, AFewPercentIsWithinTheMargin) {
  for (const auto& [factor, holds] :
       {std::pair{0.97, true}, {0.93, false}, {1.10, true}}) {
    SCOPED_TRACE(factor);
    ControllerRun run(kControllerOptions);
    const std::vector<bool> held = run.Epochs(200, 1000, factor);
    EXPECT_EQ(Held(held, 100, 200) > 50, holds);
  }
}

TEST(HoldController, FollowsTheLoadBothWays) {
  ControllerRun run(kControllerOptions);
  // Moderate load (holds cost 20%), then heavy (holds gain 5%), then moderate.
  const std::vector<bool> moderate = run.Epochs(100, 400, 0.8);
  const std::vector<bool> heavy = run.Epochs(100, 400, 1.05);
  const std::vector<bool> again = run.Epochs(100, 400, 0.8);
  EXPECT_LE(Held(moderate, 20, 100), 6);  // probes only
  // Within a few probes (about a second of 50 ms epochs) it holds...
  EXPECT_GE(Held(heavy, 40, 100), 55);
  // ...and stops again as soon as the next probe shows the cost.
  EXPECT_LE(Held(again, 20, 100), 6);
  int switched = 0;
  while (switched < 100 && !(heavy[switched] && heavy[switched + 1])) {
    ++switched;
  }
  EXPECT_LT(switched, 40);
}

TEST(HoldController, NoisyServiceStillSettlesOnTheCheaperMode) {
  // Every epoch's count off by up to 10% (a fixed pseudo-random pattern).
  for (const auto& [factor, want] : {std::pair{0.8, false}, {1.05, true}}) {
    SCOPED_TRACE(factor);
    HoldController controller(kControllerOptions, absl::UnixEpoch());
    uint32_t state = 12345;
    int held = 0;
    for (int e = 0; e < 400; ++e) {
      const absl::Time start = absl::UnixEpoch() + e * kControllerOptions.epoch;
      const bool holding = controller.Holding(start);
      state = state * 1103515245 + 12345;
      const double noise = 0.9 + 0.2 * ((state >> 8) % 1000) / 1000.0;
      const int64_t served =
          static_cast<int64_t>(400 * noise * (holding ? factor : 1.0));
      for (int64_t i = 0; i < served; ++i) {
        controller.Served(start + (i + 0.5) / served * kControllerOptions.epoch,
                          1);
      }
      if (e >= 100) held += holding;
    }
    if (want) {
      EXPECT_GE(held, 300 * 3 / 4);
    } else {
      EXPECT_LE(held, 300 / 4);
    }
  }
}

TEST(HoldController, AnIdleStretchEndsNoPairAndTakesNoTime) {
  ControllerRun run(kControllerOptions);
  run.Epochs(5, 400, 1.0);  // epoch 4 probes: its "after" would be epoch 5
  HoldController& controller = run.controller();
  // Hours later: the probe's sample is dropped, and nothing loops per epoch.
  const absl::Time later = absl::UnixEpoch() + absl::Hours(5);
  EXPECT_FALSE(controller.Holding(later));
  EXPECT_FALSE(controller.Measured());
}

}  // namespace
}  // namespace matserve::engine
