// The level runs. Calls go out on the gRPC callback API through generic stubs
// (the requests are serialized once, in the Workload); their completions run
// on gRPC's threads, which record them, hand every --verify_every-th answer to
// the Verifier's threads, and in the closed loop send the next call.
#include "client/load/runner.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "client/client.h"
#include "client/load/verifier.h"

namespace matserve::load {
namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Answers waiting for the Verifier's threads, at most (but one at least).
constexpr size_t kMaxWaitingAnswerBytes = size_t{256} << 20;

// One run of one level. Start() may be called on any thread; Finish() runs on
// gRPC's callback threads.
class LevelRun {
 public:
  LevelRun(const std::vector<std::unique_ptr<grpc::GenericStub>>& stubs,
           const Workload& workload, const Level& level,
           const RunOptions& options, absl::string_view label)
      : stubs_(stubs),
        workload_(workload),
        level_(level),
        options_(options),
        label_(label),
        closed_(level.concurrency > 0),
        by_duration_(options.requests == 0) {
    if (options.verify_every > 0) {
      const int threads =
          std::clamp<int>(std::thread::hardware_concurrency() / 4, 1, 4);
      verifier_.emplace(threads, kMaxWaitingAnswerBytes);
    }
  }

  LevelResult Run();

 private:
  struct Call {
    const PreparedOp* op = nullptr;
    int64_t start_ns = 0;  // sent, or in the open loop scheduled to be sent
    bool counted = false;  // see Counts()
    size_t channel = 0;    // the index of its stub
    int resends = 0;       // times it was sent again (kMaxResends)
    std::chrono::system_clock::time_point deadline;
    grpc::ClientContext context;
    grpc::ByteBuffer response;
  };

  // Completed calls, recorded by many threads: each takes the shard of its
  // thread, so that they seldom wait for one another.
  struct Shard {
    absl::Mutex mu;
    std::vector<int64_t> latencies_ns ABSL_GUARDED_BY(mu);  // of the OK calls
    std::map<grpc::StatusCode, int64_t> errors ABSL_GUARDED_BY(mu);
    double flops ABSL_GUARDED_BY(mu) = 0;
    double payload_bytes ABSL_GUARDED_BY(mu) = 0;
    int64_t last_completion_ns ABSL_GUARDED_BY(mu) = 0;
    std::map<std::string, int64_t> ok_by_peer ABSL_GUARDED_BY(mu);
  };
  static constexpr int kShards = 16;

  void Start(int64_t start_ns, bool counted);
  void Send(Call* call);  // on its channel, with its deadline
  // Whether `call`, which ended with `status`, was sent again (as a new call
  // that goes on in its place).
  bool MaybeResend(const Call& call, const grpc::Status& status);
  void Finish(Call* call, const grpc::Status& status);
  // Closed loop: whether another call may start at `now_ns`, and if so whether
  // it counts (with --requests).
  bool MayStartClosed(int64_t now_ns, bool* counted);
  void ScheduleOpenLoop();
  bool Counts(const Call& call, int64_t completion_ns) const;
  void Record(const Call& call, const grpc::Status& status,
              int64_t completion_ns);
  void Release();  // one reference to the run fewer; the last one ends it
  void PrintProgress(bool final);
  LevelResult Collect();

  const std::vector<std::unique_ptr<grpc::GenericStub>>& stubs_;
  const Workload& workload_;
  const Level level_;
  const RunOptions options_;
  const std::string label_;
  const bool closed_;
  const bool by_duration_;
  int64_t level_start_ns_ = 0, measure_start_ns_ = 0, end_ns_ = 0;

  std::atomic<uint64_t> sequence_{0};  // calls started: picks op and channel
  std::atomic<int64_t> counted_started_{0};  // with --requests
  // Calls in flight, plus one held by whoever still starts calls.
  std::atomic<int64_t> outstanding_{1};
  absl::Notification done_;
  std::atomic<int64_t> ok_answers_{0}, errors_{0};  // warmup included
  std::atomic<int64_t> verify_skipped_{0};
  std::atomic<int64_t> resent_{0};
  std::optional<Verifier> verifier_;
  std::array<Shard, kShards> shards_;
  int64_t progress_last_ns_ = 0, progress_last_calls_ = 0;
};

LevelResult LevelRun::Run() {
  level_start_ns_ = NowNs();
  measure_start_ns_ =
      level_start_ns_ + absl::ToInt64Nanoseconds(options_.warmup);
  end_ns_ = measure_start_ns_ + absl::ToInt64Nanoseconds(options_.duration);
  progress_last_ns_ = level_start_ns_;
  std::thread scheduler;
  if (closed_) {
    bool counted = false;
    for (int i = 0; i < level_.concurrency && MayStartClosed(NowNs(), &counted);
         ++i) {
      Start(NowNs(), counted);
    }
    Release();
  } else {
    scheduler = std::thread([this] {
      ScheduleOpenLoop();
      Release();
    });
  }
  while (!done_.WaitForNotificationWithTimeout(absl::Seconds(1))) {
    if (options_.progress) PrintProgress(/*final=*/false);
  }
  if (options_.progress) PrintProgress(/*final=*/true);
  if (scheduler.joinable()) scheduler.join();
  if (verifier_) verifier_->Drain();
  return Collect();
}

void LevelRun::Start(int64_t start_ns, bool counted) {
  outstanding_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t sequence = sequence_.fetch_add(1, std::memory_order_relaxed);
  Call* call = new Call;
  call->op = &workload_.Pick(sequence);
  call->start_ns = start_ns;
  call->counted = counted;
  call->channel = sequence % stubs_.size();
  call->deadline = std::chrono::system_clock::now() +
                   absl::ToChronoNanoseconds(options_.deadline);
  Send(call);
}

void LevelRun::Send(Call* call) {
  call->context.set_deadline(call->deadline);
  stubs_[call->channel]->UnaryCall(
      &call->context, call->op->method, grpc::StubOptions(), &call->op->request,
      &call->response,
      [this, call](grpc::Status status) { Finish(call, status); });
}

// gRPC retried the call on other replicas until its answer started to arrive;
// a replica lost after that point leaves it to us (client.h, kMaxResends).
// The new call keeps the first one's start (its latency includes the loss)
// and deadline, on the next channel.
bool LevelRun::MaybeResend(const Call& call, const grpc::Status& status) {
  if (status.ok() || !Resendable(status.error_code()) ||
      call.resends == kMaxResends ||
      std::chrono::system_clock::now() >= call.deadline) {
    return false;
  }
  resent_.fetch_add(1, std::memory_order_relaxed);
  Call* again = new Call;
  again->op = call.op;
  again->start_ns = call.start_ns;
  again->counted = call.counted;
  again->channel = (call.channel + 1) % stubs_.size();
  again->resends = call.resends + 1;
  again->deadline = call.deadline;
  Send(again);
  return true;
}

// Runs on a gRPC callback thread: no waiting here but on a shard's mutex.
void LevelRun::Finish(Call* call, const grpc::Status& status) {
  if (MaybeResend(*call, status)) {
    delete call;  // the call goes on as the new one: no Release()
    return;
  }
  const int64_t now_ns = NowNs();
  if (status.ok()) {
    const int64_t answer = ok_answers_.fetch_add(1, std::memory_order_relaxed);
    if (verifier_ && (answer + 1) % options_.verify_every == 0 &&
        !verifier_->Submit(*call->op, &call->response)) {
      verify_skipped_.fetch_add(1, std::memory_order_relaxed);
    }
  } else {
    errors_.fetch_add(1, std::memory_order_relaxed);
  }
  if (Counts(*call, now_ns)) Record(*call, status, now_ns);
  bool counted = false;
  if (closed_ && MayStartClosed(NowNs(), &counted)) Start(NowNs(), counted);
  delete call;
  Release();
}

bool LevelRun::MayStartClosed(int64_t now_ns, bool* counted) {
  if (by_duration_) return now_ns < end_ns_;  // Counts() decides at the end
  *counted = now_ns >= measure_start_ns_;
  return !*counted || counted_started_.fetch_add(1) < options_.requests;
}

// Sends at the scheduled times whether or not earlier calls returned; a call
// sent late (this thread overslept, or sends a burst after a long gap) still
// counts its latency from its scheduled time, so a slow server cannot hide its
// delays by delaying the sender (no coordinated omission).
void LevelRun::ScheduleOpenLoop() {
  std::mt19937_64 rng(options_.seed);
  std::exponential_distribution<double> poisson_gap_s(level_.rate);
  double offset_ns = 0;  // from the level's start: small enough to be exact
  int64_t counted_started = 0;
  while (true) {
    const int64_t start_ns = level_start_ns_ + static_cast<int64_t>(offset_ns);
    const bool counted = start_ns >= measure_start_ns_;
    if (by_duration_ ? start_ns >= end_ns_
                     : counted && counted_started == options_.requests) {
      return;
    }
    counted_started += counted;
    std::this_thread::sleep_until(std::chrono::steady_clock::time_point(
        std::chrono::nanoseconds(start_ns)));
    Start(start_ns, counted);
    offset_ns +=
        1e9 * (options_.arrival == Arrival::kPoisson ? poisson_gap_s(rng)
                                                     : 1.0 / level_.rate);
  }
}

// A closed loop for a --duration counts what completes inside the window, so
// that the window holds the steady state alone; otherwise what started in it.
bool LevelRun::Counts(const Call& call, int64_t completion_ns) const {
  if (closed_ && by_duration_) {
    return completion_ns >= measure_start_ns_ && completion_ns <= end_ns_;
  }
  return call.counted;
}

void LevelRun::Record(const Call& call, const grpc::Status& status,
                      int64_t completion_ns) {
  Shard& shard =
      shards_[std::hash<std::thread::id>()(std::this_thread::get_id()) %
              kShards];
  absl::MutexLock lock(&shard.mu);
  if (status.ok()) {
    shard.latencies_ns.push_back(completion_ns - call.start_ns);
    shard.flops += call.op->op.Flops();
    shard.payload_bytes +=
        call.op->op.RequestBytes() + call.op->op.ResponseBytes();
    ++shard.ok_by_peer[call.context.peer()];
  } else {
    ++shard.errors[status.error_code()];
  }
  shard.last_completion_ns = std::max(shard.last_completion_ns, completion_ns);
}

void LevelRun::Release() {
  if (outstanding_.fetch_sub(1) == 1) done_.Notify();
}

void LevelRun::PrintProgress(bool final) {
  const int64_t now_ns = NowNs();
  const int64_t ok = ok_answers_.load(), errors = errors_.load();
  const double rate = PerSecond(ok + errors - progress_last_calls_,
                                (now_ns - progress_last_ns_) * 1e-9);
  progress_last_ns_ = now_ns;
  progress_last_calls_ = ok + errors;
  // On a terminal the line is rewritten in place; in a log, one per second.
  static const bool terminal = isatty(STDERR_FILENO);
  if (final && !terminal) return;
  const std::string line = absl::StrFormat(
      "matserve-load: %s: %.0f s, %d ok, %d errors, %.0f calls/s", label_,
      (now_ns - level_start_ns_) * 1e-9, ok, errors, rate);
  if (terminal) {
    std::fprintf(stderr, "\r%-79s%s", line.c_str(), final ? "\n" : "");
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

LevelResult LevelRun::Collect() {
  LevelResult result;
  result.level = level_;
  std::vector<int64_t> latencies_ns;
  double flops = 0, payload_bytes = 0;
  int64_t last_completion_ns = 0;
  for (Shard& shard : shards_) {
    absl::MutexLock lock(&shard.mu);
    latencies_ns.insert(latencies_ns.end(), shard.latencies_ns.begin(),
                        shard.latencies_ns.end());
    for (const auto& [code, calls] : shard.errors) {
      result.errors[absl::StatusCodeToString(
          static_cast<absl::StatusCode>(code))] += calls;
      result.requests += calls;
    }
    for (const auto& [peer, calls] : shard.ok_by_peer) {
      result.ok_by_peer[peer] += calls;
    }
    flops += shard.flops;
    payload_bytes += shard.payload_bytes;
    last_completion_ns = std::max(last_completion_ns, shard.last_completion_ns);
  }
  result.ok = latencies_ns.size();
  result.requests += result.ok;
  // The closed loop for a --duration ends at end_ns_; otherwise the window
  // runs until the last counted call completed, so that a backlog the server
  // works off after the schedule ended lowers the rate it is credited with.
  const int64_t window_end_ns =
      closed_ && by_duration_
          ? end_ns_
          : std::max(by_duration_ ? end_ns_ : 0, last_completion_ns);
  result.seconds =
      std::max<int64_t>(window_end_ns - measure_start_ns_, 0) * 1e-9;
  result.throughput_rps = PerSecond(result.ok, result.seconds);
  result.gflops = PerSecond(flops, result.seconds) * 1e-9;
  result.payload_gbps = PerSecond(payload_bytes, result.seconds) * 1e-9;
  result.latency = SummarizeLatencies(std::move(latencies_ns));
  if (verifier_) {
    const Verifier::Counts counts = verifier_->counts();
    result.verified = counts.checked;
    result.mismatches = counts.wrong;
    result.first_mismatch = counts.first_wrong;
  }
  result.verify_skipped = verify_skipped_.load();
  result.resent = resent_.load();
  return result;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LoadGenerator>> LoadGenerator::Connect(
    const std::string& target, int channels, int max_message_bytes,
    absl::Duration connect_timeout) {
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  const auto deadline = absl::ToChronoTime(absl::Now() + connect_timeout);
  for (int i = 0; i < channels; ++i) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        MakeChannel(target, max_message_bytes, /*own_connection=*/true);
    if (!channel.ok()) return channel.status();
    if (!(*channel)->WaitForConnected(deadline)) {
      return absl::UnavailableError(
          absl::StrCat("cannot connect to ", target, " within ",
                       absl::FormatDuration(connect_timeout)));
    }
    stubs.push_back(std::make_unique<grpc::GenericStub>(*std::move(channel)));
  }
  return std::unique_ptr<LoadGenerator>(new LoadGenerator(std::move(stubs)));
}

LevelResult LoadGenerator::Run(const Workload& workload, const Level& level,
                               const RunOptions& options,
                               absl::string_view label) const {
  return LevelRun(stubs_, workload, level, options, label).Run();
}

}  // namespace matserve::load
