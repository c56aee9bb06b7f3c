// matserve-metrics-bench: the cost of one observation on the serving path, for
// 1, 4 and 16 threads observing the same series, with matserve's sharded
// histograms and counters against prometheus-cpp's own (a mutex per histogram
// observation, a compare-and-swap on one shared double per counter add).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/metrics/server_metrics.h"
#include "server/metrics/sharded.h"

namespace matserve::metrics {
namespace {

// matserve's duration buckets (server_metrics.cc), in seconds and in ns.
constexpr double kBoundsSeconds[] = {
    10e-6,  25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3,
    2.5e-3, 5e-3,  10e-3, 25e-3,  50e-3,  100e-3, 250e-3,
    500e-3, 1,     2.5,   5,      10,     25,     50};

// Observed values spread over the buckets: 1 us to about 1 s.
uint64_t NextNanoseconds(uint64_t& state) {
  state = state * 6364136223846793005u + 1442695040888963407u;
  return uint64_t{1000} << ((state >> 59) % 20);
}

void BM_PrometheusCppHistogram(benchmark::State& state) {
  static prometheus::Histogram histogram(
      prometheus::Histogram::BucketBoundaries(std::begin(kBoundsSeconds),
                                              std::end(kBoundsSeconds)));
  uint64_t rng = state.thread_index();
  for (auto _ : state) {
    histogram.Observe(static_cast<double>(NextNanoseconds(rng)) * 1e-9);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ShardedHistogram(benchmark::State& state) {
  static ShardedHistogram histogram([] {
    std::vector<uint64_t> bounds;
    for (double seconds : kBoundsSeconds) bounds.push_back(seconds * 1e9);
    return bounds;
  }());
  uint64_t rng = state.thread_index();
  for (auto _ : state) histogram.Observe(NextNanoseconds(rng));
  state.SetItemsProcessed(state.iterations());
}

void BM_PrometheusCppCounter(benchmark::State& state) {
  static prometheus::Counter counter;
  for (auto _ : state) counter.Increment();
  state.SetItemsProcessed(state.iterations());
}

void BM_ShardedCounter(benchmark::State& state) {
  static ShardedCells counter(1);
  for (auto _ : state) counter.Add(0, 1);
  state.SetItemsProcessed(state.iterations());
}

// What the RPC layer records per request: in-flight up and down, the count by
// (method, code), the duration, the payload both ways.
void BM_PrometheusCppRequest(benchmark::State& state) {
  struct Families {
    std::shared_ptr<prometheus::Registry> registry =
        std::make_shared<prometheus::Registry>();
    prometheus::Gauge& inflight =
        prometheus::BuildGauge().Name("inflight").Register(*registry).Add({});
    prometheus::Counter& requests =
        prometheus::BuildCounter()
            .Name("requests_total")
            .Register(*registry)
            .Add({{"method", "Multiply"}, {"code", "OK"}});
    prometheus::Histogram& duration =
        prometheus::BuildHistogram()
            .Name("duration_seconds")
            .Register(*registry)
            .Add({{"method", "Multiply"}},
                 prometheus::Histogram::BucketBoundaries(
                     std::begin(kBoundsSeconds), std::end(kBoundsSeconds)));
    prometheus::Family<prometheus::Counter>& payload =
        prometheus::BuildCounter()
            .Name("payload_bytes_total")
            .Register(*registry);
    prometheus::Counter& request_bytes =
        payload.Add({{"direction", "request"}});
    prometheus::Counter& response_bytes =
        payload.Add({{"direction", "response"}});
  };
  static Families families;
  uint64_t rng = state.thread_index();
  for (auto _ : state) {
    families.inflight.Increment();
    families.inflight.Decrement();
    families.requests.Increment();
    families.duration.Observe(static_cast<double>(NextNanoseconds(rng)) * 1e-9);
    families.request_bytes.Increment(8192);
    families.response_bytes.Increment(4096);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ServerMetricsRequest(benchmark::State& state) {
  static ServerMetrics metrics({.version = "bench",
                                .backend = "cpu",
                                .devices = {"cpu"},
                                .max_batch_size = 64,
                                .queued_requests = [] { return size_t{0}; }});
  uint64_t rng = state.thread_index();
  for (auto _ : state) {
    metrics.RequestStarted(engine::Method::kMultiply);
    metrics.RequestFinished(engine::Method::kMultiply, absl::StatusCode::kOk,
                            absl::Nanoseconds(NextNanoseconds(rng)), 8192,
                            4096);
  }
  state.SetItemsProcessed(state.iterations());
}

#define MATSERVE_THREADS(bench) \
  BENCHMARK(bench)->Threads(1)->Threads(4)->Threads(16)->UseRealTime()
MATSERVE_THREADS(BM_PrometheusCppHistogram);
MATSERVE_THREADS(BM_ShardedHistogram);
MATSERVE_THREADS(BM_PrometheusCppCounter);
MATSERVE_THREADS(BM_ShardedCounter);
MATSERVE_THREADS(BM_PrometheusCppRequest);
MATSERVE_THREADS(BM_ServerMetricsRequest);

}  // namespace
}  // namespace matserve::metrics

BENCHMARK_MAIN();
