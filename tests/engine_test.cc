// Engine tests on a fake executor: every accepted job completes exactly once,
// deadlines, the queue bound, and draining on Stop.
#include "server/engine/engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace matserve::engine {
namespace {

// Runs a transpose by hand; each Run can be held until the test releases it.
class FakeExecutor final : public Executor {
 public:
  explicit FakeExecutor(absl::Notification* release = nullptr)
      : release_(release) {}

  absl::Status Run(const Op& op) override {
    started_.fetch_add(1);
    if (release_ != nullptr) release_->WaitForNotification();
    const auto& t = std::get<TransposeOp>(op);
    for (uint32_t r = 0; r < t.rows; ++r) {
      for (uint32_t c = 0; c < t.cols; ++c)
        t.output[c * t.rows + r] = t.input[r * t.cols + c];
    }
    return absl::OkStatus();
  }
  std::string Describe() const override { return "fake"; }

  std::atomic<int> started_{0};

 private:
  absl::Notification* release_;
};

// Collects the statuses that done callbacks report.
class Results {
 public:
  absl::AnyInvocable<void(absl::Status) &&> Callback() {
    return [this](absl::Status status) {
      std::lock_guard<std::mutex> lock(mu_);
      statuses_.push_back(status);
      changed_.notify_all();
    };
  }
  std::vector<absl::Status> WaitFor(size_t count) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, std::chrono::seconds(10),
                      [&] { return statuses_.size() >= count; });
    return statuses_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<absl::Status> statuses_;
};

struct Buffers {
  float input[6] = {1, 2, 3, 4, 5, 6};
  float output[6] = {};
  Op op() { return TransposeOp{2, 3, input, output}; }
};

std::vector<std::unique_ptr<Executor>> One(std::unique_ptr<Executor> executor) {
  std::vector<std::unique_ptr<Executor>> executors;
  executors.push_back(std::move(executor));
  return executors;
}

TEST(Engine, RunsASubmittedJobAndReportsOk) {
  Engine engine(One(std::make_unique<FakeExecutor>()), {});
  Buffers buffers;
  Results results;
  ASSERT_TRUE(
      engine.Submit({buffers.op(), absl::InfiniteFuture(), results.Callback()})
          .ok());
  const std::vector<absl::Status> statuses = results.WaitFor(1);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_TRUE(statuses[0].ok()) << statuses[0];
  const float want[6] = {1, 4, 2, 5, 3, 6};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(buffers.output[i], want[i]) << i;
}

TEST(Engine, JobWhoseDeadlinePassedInTheQueueIsNotComputed) {
  auto executor = std::make_unique<FakeExecutor>();
  FakeExecutor* fake = executor.get();
  Engine engine(One(std::move(executor)), {});
  Buffers buffers;
  Results results;
  ASSERT_TRUE(engine
                  .Submit({buffers.op(), absl::Now() - absl::Seconds(1),
                           results.Callback()})
                  .ok());
  const std::vector<absl::Status> statuses = results.WaitFor(1);
  ASSERT_EQ(statuses.size(), 1u);
  EXPECT_EQ(statuses[0].code(), absl::StatusCode::kDeadlineExceeded)
      << statuses[0];
  EXPECT_EQ(fake->started_.load(), 0);
}

TEST(Engine, FullQueueRefusesWithResourceExhaustedAndStopDrainsTheRest) {
  absl::Notification release;
  auto executor = std::make_unique<FakeExecutor>(&release);
  FakeExecutor* fake = executor.get();
  Engine engine(One(std::move(executor)), {.max_queued_jobs = 2});
  std::vector<Buffers> buffers(4);
  Results results;
  // The first job occupies the worker; two more fill the queue; the fourth is
  // refused.
  ASSERT_TRUE(
      engine
          .Submit({buffers[0].op(), absl::InfiniteFuture(), results.Callback()})
          .ok());
  while (fake->started_.load() == 0) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_TRUE(
      engine
          .Submit({buffers[1].op(), absl::InfiniteFuture(), results.Callback()})
          .ok());
  ASSERT_TRUE(
      engine
          .Submit({buffers[2].op(), absl::InfiniteFuture(), results.Callback()})
          .ok());
  const absl::Status refused = engine.Submit(
      {buffers[3].op(), absl::InfiniteFuture(), results.Callback()});
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;

  release.Notify();
  engine.Stop();  // returns only once the three accepted jobs are done
  const std::vector<absl::Status> statuses = results.WaitFor(3);
  ASSERT_EQ(statuses.size(), 3u);
  for (const absl::Status& status : statuses)
    EXPECT_TRUE(status.ok()) << status;
  EXPECT_EQ(buffers[2].output[1], 4.0f);
  EXPECT_EQ(buffers[3].output[1], 0.0f);  // the refused job never ran
}

TEST(Engine, SubmitAfterStopIsUnavailable) {
  Engine engine(One(std::make_unique<FakeExecutor>()), {});
  engine.Stop();
  Buffers buffers;
  Results results;
  const absl::Status status =
      engine.Submit({buffers.op(), absl::InfiniteFuture(), results.Callback()});
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
}

TEST(Engine, ManyThreadsManyWorkersEveryJobCompletesOnce) {
  std::vector<std::unique_ptr<Executor>> executors;
  for (int i = 0; i < 4; ++i)
    executors.push_back(std::make_unique<FakeExecutor>());
  Engine engine(std::move(executors), {.max_queued_jobs = 100000});
  constexpr int kThreads = 8, kJobsPerThread = 500;
  std::vector<Buffers> buffers(kThreads * kJobsPerThread);
  std::atomic<int> done{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int j = 0; j < kJobsPerThread; ++j) {
        Buffers& b = buffers[t * kJobsPerThread + j];
        ASSERT_TRUE(engine
                        .Submit({b.op(), absl::InfiniteFuture(),
                                 [&done](absl::Status s) {
                                   EXPECT_TRUE(s.ok()) << s;
                                   done.fetch_add(1);
                                 }})
                        .ok());
      }
    });
  }
  for (std::thread& t : submitters) t.join();
  engine.Stop();
  EXPECT_EQ(done.load(), kThreads * kJobsPerThread);
  for (const Buffers& b : buffers) ASSERT_EQ(b.output[5], 6.0f);
}

}  // namespace
}  // namespace matserve::engine
