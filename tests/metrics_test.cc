// ServerMetrics over HTTP: known observations scraped from /metrics and checked
// count for count (requests by method and code, histogram buckets and sums,
// batches, gauges from callbacks, device busy time), bind failures, many
// threads at once; and the sharded histogram and busy-interval union alone.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/metrics/busy_tracker.h"
#include "server/metrics/server_metrics.h"
#include "server/metrics/sharded.h"

namespace matserve::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// GET http://`address``path` (address "127.0.0.1:PORT"); returns the whole
// response, status line and headers included.
std::string HttpGet(const std::string& address, const std::string& path) {
  const std::vector<std::string> host_port = absl::StrSplit(address, ':');
  int port = 0;
  EXPECT_TRUE(absl::SimpleAtoi(host_port.at(1), &port)) << address;
  sockaddr_in server = {};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host_port.at(0).c_str(), &server.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof server) != 0) {
    close(fd);
    ADD_FAILURE() << "cannot connect to " << address;
    return "";
  }
  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: ", address,
                   "\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(write(fd, request.data(), request.size()),
            static_cast<ssize_t>(request.size()));
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) {
    response.append(buffer, n);
  }
  close(fd);
  return response;
}

// One scrape: the samples by their line's name and labels as written
// (`name{a="x",b="y"}`), and the whole body.
struct Scrape {
  std::string body;
  std::map<std::string, double> samples;

  double at(const std::string& series) const {
    auto it = samples.find(series);
    if (it == samples.end()) {
      ADD_FAILURE() << "no series " << series << " in:\n" << body;
      return -1;
    }
    return it->second;
  }
  bool has(const std::string& series) const {
    return samples.count(series) > 0;
  }
  // The series whose line starts with `prefix`.
  size_t count(const std::string& prefix) const {
    size_t n = 0;
    for (const auto& [series, value] : samples) {
      n += absl::StartsWith(series, prefix);
    }
    return n;
  }
};

Scrape ScrapeMetrics(const ServerMetrics& metrics) {
  const std::string response = HttpGet(metrics.BoundAddress(), "/metrics");
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK\r\n"));
  Scrape scrape;
  const size_t body_start = response.find("\r\n\r\n");
  scrape.body = response.substr(body_start + 4);
  for (absl::string_view line : absl::StrSplit(scrape.body, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    double value = 0;
    EXPECT_TRUE(absl::SimpleAtod(line.substr(space + 1), &value)) << line;
    scrape.samples[std::string(line.substr(0, space))] = value;
  }
  return scrape;
}

MetricsOptions TestOptions() {
  return {.address = "127.0.0.1:0",
          .version = "1.2.3",
          .backend = "cpu",
          .devices = {"cpu"},
          .max_batch_size = 8,
          .queue_capacity = 1024,
          .queued_requests = [] { return size_t{7}; }};
}

TEST(ServerMetrics, ExportsEveryFamilyAtZeroWithItsType) {
  ServerMetrics metrics(TestOptions());
  ASSERT_TRUE(metrics.Listen().ok());
  const Scrape scrape = ScrapeMetrics(metrics);
  for (const char* type_line : {
           "# TYPE matserve_build_info gauge",
           "# TYPE matserve_requests_total counter",
           "# TYPE matserve_request_duration_seconds histogram",
           "# TYPE matserve_queue_duration_seconds histogram",
           "# TYPE matserve_compute_duration_seconds histogram",
           "# TYPE matserve_copy_duration_seconds histogram",
           "# TYPE matserve_batch_size histogram",
           "# TYPE matserve_queue_requests gauge",
           "# TYPE matserve_queue_capacity_requests gauge",
           "# TYPE matserve_inflight_requests gauge",
           "# TYPE matserve_flops_total counter",
           "# TYPE matserve_payload_bytes_total counter",
           "# TYPE matserve_copy_bytes_total counter",
           "# TYPE matserve_device_busy_seconds_total counter",
       }) {
    EXPECT_THAT(scrape.body, HasSubstr(std::string(type_line) + "\n"));
  }
  EXPECT_EQ(scrape.at(R"(matserve_build_info{version="1.2.3",backend="cpu"})"),
            1);
  // Every method and code from the start, so rate() sees each series.
  EXPECT_EQ(scrape.count("matserve_requests_total{"), 2 * 17);
  EXPECT_EQ(
      scrape.at(
          R"(matserve_requests_total{method="Transpose",code="DEADLINE_EXCEEDED"})"),
      0);
  EXPECT_EQ(scrape.at(R"(matserve_queue_requests)"), 7);
  EXPECT_EQ(scrape.at(R"(matserve_queue_capacity_requests)"), 1024);
  EXPECT_EQ(scrape.at(R"(matserve_inflight_requests)"), 0);
  EXPECT_EQ(scrape.at(R"(matserve_device_busy_seconds_total{device="cpu"})"),
            0);
  // Batch sizes 1, 2, 4, 8 (the largest batch), then +Inf.
  EXPECT_EQ(scrape.count(R"(matserve_batch_size_bucket{method="Multiply",)"),
            5);
  EXPECT_TRUE(
      scrape.has(R"(matserve_batch_size_bucket{method="Multiply",le="8"})"));
  // Durations 10 us to 50 s, three steps per decade, then +Inf.
  EXPECT_EQ(
      scrape.count(
          R"(matserve_request_duration_seconds_bucket{method="Multiply",)"),
      22);
  EXPECT_TRUE(scrape.has(
      R"(matserve_request_duration_seconds_bucket{method="Multiply",le="1e-05"})"));
  EXPECT_TRUE(scrape.has(
      R"(matserve_request_duration_seconds_bucket{method="Multiply",le="50"})"));
  // No memory callback (the CPU backend): no memory gauges.
  EXPECT_THAT(scrape.body, Not(HasSubstr("matserve_device_memory")));
}

TEST(ServerMetrics, CountsRequestsByMethodAndCodeWithDurationsAndPayload) {
  ServerMetrics metrics(TestOptions());
  ASSERT_TRUE(metrics.Listen().ok());
  for (int i = 0; i < 4; ++i) metrics.RequestStarted(engine::Method::kMultiply);
  metrics.RequestStarted(engine::Method::kTranspose);
  metrics.RequestFinished(engine::Method::kMultiply, absl::StatusCode::kOk,
                          absl::Milliseconds(1), 100, 40);
  metrics.RequestFinished(engine::Method::kMultiply, absl::StatusCode::kOk,
                          absl::Milliseconds(3), 100, 40);
  metrics.RequestFinished(engine::Method::kMultiply,
                          absl::StatusCode::kResourceExhausted,
                          absl::Microseconds(30), 100, 0);
  metrics.RequestFinished(engine::Method::kTranspose,
                          absl::StatusCode::kInvalidArgument,
                          absl::Microseconds(10), 24, 0);
  const Scrape scrape = ScrapeMetrics(metrics);

  EXPECT_EQ(
      scrape.at(R"(matserve_requests_total{method="Multiply",code="OK"})"), 2);
  EXPECT_EQ(
      scrape.at(
          R"(matserve_requests_total{method="Multiply",code="RESOURCE_EXHAUSTED"})"),
      1);
  EXPECT_EQ(
      scrape.at(
          R"(matserve_requests_total{method="Transpose",code="INVALID_ARGUMENT"})"),
      1);
  EXPECT_EQ(
      scrape.at(R"(matserve_requests_total{method="Transpose",code="OK"})"), 0);
  double total = 0;
  for (const auto& [series, value] : scrape.samples) {
    if (absl::StartsWith(series, "matserve_requests_total{")) total += value;
  }
  EXPECT_EQ(total, 4);
  EXPECT_EQ(scrape.at("matserve_inflight_requests"), 1);  // one Multiply left

  // Multiply: 30 us, 1 ms, 3 ms. A bound is inclusive (le): 1 ms is in
  // le="0.001".
  const std::string multiply =
      R"(matserve_request_duration_seconds_bucket{method="Multiply",le=")";
  EXPECT_EQ(scrape.at(multiply + R"(2.5e-05"})"), 0);
  EXPECT_EQ(scrape.at(multiply + R"(5e-05"})"), 1);
  EXPECT_EQ(scrape.at(multiply + R"(0.0005"})"), 1);
  EXPECT_EQ(scrape.at(multiply + R"(0.001"})"), 2);
  EXPECT_EQ(scrape.at(multiply + R"(0.0025"})"), 2);
  EXPECT_EQ(scrape.at(multiply + R"(0.005"})"), 3);
  EXPECT_EQ(scrape.at(multiply + R"(+Inf"})"), 3);
  EXPECT_EQ(
      scrape.at(
          R"(matserve_request_duration_seconds_count{method="Multiply"})"),
      3);
  EXPECT_DOUBLE_EQ(
      scrape.at(R"(matserve_request_duration_seconds_sum{method="Multiply"})"),
      0.00403);
  EXPECT_EQ(
      scrape.at(
          R"(matserve_request_duration_seconds_bucket{method="Transpose",le="1e-05"})"),
      1);
  EXPECT_DOUBLE_EQ(
      scrape.at(R"(matserve_request_duration_seconds_sum{method="Transpose"})"),
      1e-05);

  EXPECT_EQ(scrape.at(R"(matserve_payload_bytes_total{direction="request"})"),
            324);
  EXPECT_EQ(scrape.at(R"(matserve_payload_bytes_total{direction="response"})"),
            80);
  // Batches are the engine's: nothing yet.
  EXPECT_EQ(scrape.at(R"(matserve_batch_size_count{method="Multiply"})"), 0);
}

TEST(ServerMetrics, RecordsBatches) {
  MetricsOptions options = TestOptions();
  options.devices = {"0", "1"};
  ServerMetrics metrics(options);
  ASSERT_TRUE(metrics.Listen().ok());
  const absl::Duration waits[] = {absl::Microseconds(200),
                                  absl::Microseconds(700), absl::Seconds(2)};
  engine::BatchRecord multiply;
  multiply.method = engine::Method::kMultiply;
  multiply.device = 1;
  multiply.queue_waits = waits;
  multiply.compute = absl::Milliseconds(4);
  multiply.host_to_device = absl::Microseconds(300);
  multiply.device_to_host = absl::Microseconds(100);
  multiply.host_to_device_bytes = 3000;
  multiply.device_to_host_bytes = 1000;
  multiply.busy = absl::Milliseconds(5);
  multiply.flops = 6e9;
  metrics.BatchFinished(multiply);
  // A failed batch: its requests waited and it held the device, but no
  // compute, copies or flops count.
  const absl::Duration one_wait[] = {absl::Milliseconds(1)};
  engine::BatchRecord failed;
  failed.method = engine::Method::kTranspose;
  failed.device = 0;
  failed.queue_waits = one_wait;
  failed.compute = absl::Milliseconds(1);
  failed.host_to_device = absl::Microseconds(1);
  failed.host_to_device_bytes = 8;
  failed.busy = absl::Milliseconds(2);
  failed.ok = false;
  metrics.BatchFinished(failed);
  // A device the metrics were not told of changes no device series.
  engine::BatchRecord unknown_device;
  unknown_device.method = engine::Method::kTranspose;
  unknown_device.device = 2;
  unknown_device.busy = absl::Seconds(1);
  metrics.BatchFinished(unknown_device);
  const Scrape scrape = ScrapeMetrics(metrics);

  const std::string queue =
      R"(matserve_queue_duration_seconds_bucket{method="Multiply",le=")";
  EXPECT_EQ(scrape.at(queue + R"(0.0001"})"), 0);
  EXPECT_EQ(scrape.at(queue + R"(0.00025"})"), 1);
  EXPECT_EQ(scrape.at(queue + R"(0.001"})"), 2);
  EXPECT_EQ(scrape.at(queue + R"(1"})"), 2);
  EXPECT_EQ(scrape.at(queue + R"(2.5"})"), 3);
  EXPECT_DOUBLE_EQ(
      scrape.at(R"(matserve_queue_duration_seconds_sum{method="Multiply"})"),
      2.0009);
  EXPECT_EQ(
      scrape.at(R"(matserve_queue_duration_seconds_count{method="Transpose"})"),
      1);

  // One batch of 3 (in le="4", not le="2") and one of 1.
  EXPECT_EQ(
      scrape.at(R"(matserve_batch_size_bucket{method="Multiply",le="2"})"), 0);
  EXPECT_EQ(
      scrape.at(R"(matserve_batch_size_bucket{method="Multiply",le="4"})"), 1);
  EXPECT_EQ(scrape.at(R"(matserve_batch_size_sum{method="Multiply"})"), 3);
  EXPECT_EQ(
      scrape.at(R"(matserve_batch_size_bucket{method="Transpose",le="1"})"), 1);

  EXPECT_EQ(
      scrape.at(
          R"(matserve_compute_duration_seconds_count{method="Multiply"})"),
      1);
  EXPECT_DOUBLE_EQ(
      scrape.at(R"(matserve_compute_duration_seconds_sum{method="Multiply"})"),
      0.004);
  // The failed batch's compute time is left out, the third batch's (zero)
  // counts.
  EXPECT_EQ(
      scrape.at(
          R"(matserve_compute_duration_seconds_count{method="Transpose"})"),
      1);
  EXPECT_EQ(
      scrape.at(R"(matserve_compute_duration_seconds_sum{method="Transpose"})"),
      0);
  EXPECT_EQ(
      scrape.at(
          R"(matserve_copy_duration_seconds_bucket{direction="host_to_device",le="0.0005"})"),
      1);
  EXPECT_EQ(
      scrape.at(
          R"(matserve_copy_duration_seconds_bucket{direction="host_to_device",le="0.00025"})"),
      0);
  EXPECT_EQ(
      scrape.at(
          R"(matserve_copy_duration_seconds_count{direction="device_to_host"})"),
      1);
  EXPECT_EQ(
      scrape.at(R"(matserve_copy_bytes_total{direction="host_to_device"})"),
      3000);
  EXPECT_EQ(
      scrape.at(R"(matserve_copy_bytes_total{direction="device_to_host"})"),
      1000);
  EXPECT_EQ(scrape.at("matserve_flops_total"), 6e9);

  EXPECT_DOUBLE_EQ(
      scrape.at(R"(matserve_device_busy_seconds_total{device="1"})"), 0.005);
  EXPECT_DOUBLE_EQ(
      scrape.at(R"(matserve_device_busy_seconds_total{device="0"})"), 0.002);
  EXPECT_EQ(scrape.count("matserve_device_busy_seconds_total{"), 2);
}

TEST(ServerMetrics, ReadsDeviceMemoryAtScrapeTime) {
  MetricsOptions options = TestOptions();
  options.devices = {"0", "1"};
  uint64_t used = 1000;
  options.device_memory =
      [&used](int device) -> absl::StatusOr<engine::DeviceMemory> {
    if (device == 1) return absl::InternalError("device lost");
    return engine::DeviceMemory{.used_bytes = used, .total_bytes = 80000};
  };
  ServerMetrics metrics(options);
  ASSERT_TRUE(metrics.Listen().ok());
  EXPECT_EQ(ScrapeMetrics(metrics).at(
                R"(matserve_device_memory_used_bytes{device="0"})"),
            1000);
  used = 5000;
  const Scrape scrape = ScrapeMetrics(metrics);
  EXPECT_EQ(scrape.at(R"(matserve_device_memory_used_bytes{device="0"})"),
            5000);
  EXPECT_EQ(scrape.at(R"(matserve_device_memory_total_bytes{device="0"})"),
            80000);
  // The device whose read failed is left out of this scrape.
  EXPECT_FALSE(scrape.has(R"(matserve_device_memory_used_bytes{device="1"})"));
  EXPECT_FALSE(scrape.has(R"(matserve_device_memory_total_bytes{device="1"})"));
}

TEST(ServerMetrics, ObservationsFromManyThreadsAllCount) {
  ServerMetrics metrics(TestOptions());
  ASSERT_TRUE(metrics.Listen().ok());
  constexpr int kThreads = 24;  // more than the shards: some share one
  constexpr int kRequestsPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&metrics, t] {
      const absl::Duration wait[] = {absl::Microseconds(t)};
      engine::BatchRecord batch;
      batch.method = engine::Method::kTranspose;
      batch.queue_waits = wait;
      batch.flops = 0.5;
      for (int i = 0; i < kRequestsPerThread; ++i) {
        metrics.RequestStarted(engine::Method::kTranspose);
        metrics.RequestFinished(engine::Method::kTranspose,
                                absl::StatusCode::kOk, absl::Microseconds(t), 3,
                                1);
        metrics.BatchFinished(batch);
      }
    });
  }
  // Scrapes while they run see counts that only grow.
  double previous = 0;
  for (int i = 0; i < 5; ++i) {
    const double now = ScrapeMetrics(metrics).at(
        R"(matserve_requests_total{method="Transpose",code="OK"})");
    EXPECT_GE(now, previous);
    previous = now;
  }
  for (std::thread& thread : threads) thread.join();
  const Scrape scrape = ScrapeMetrics(metrics);
  constexpr double kTotal = double{kThreads} * kRequestsPerThread;
  EXPECT_EQ(
      scrape.at(R"(matserve_requests_total{method="Transpose",code="OK"})"),
      kTotal);
  EXPECT_EQ(scrape.at("matserve_inflight_requests"), 0);
  EXPECT_EQ(
      scrape.at(
          R"(matserve_request_duration_seconds_count{method="Transpose"})"),
      kTotal);
  // Sum over t of t microseconds, kRequestsPerThread times.
  EXPECT_DOUBLE_EQ(
      scrape.at(R"(matserve_request_duration_seconds_sum{method="Transpose"})"),
      kRequestsPerThread * (kThreads * (kThreads - 1) / 2) * 1e-6);
  EXPECT_EQ(scrape.at(R"(matserve_payload_bytes_total{direction="request"})"),
            3 * kTotal);
  EXPECT_EQ(scrape.at(R"(matserve_batch_size_count{method="Transpose"})"),
            kTotal);
  EXPECT_EQ(scrape.at("matserve_flops_total"), 0.5 * kTotal);
}

TEST(ServerMetrics, AnAddressInUseIsAnErrorNotACrash) {
  ServerMetrics first(TestOptions());
  ASSERT_TRUE(first.Listen().ok());
  MetricsOptions options = TestOptions();
  options.address = first.BoundAddress();
  ServerMetrics second(options);
  const absl::Status status = second.Listen();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(),
              HasSubstr("cannot serve metrics on " + first.BoundAddress()));
}

TEST(ShardedHistogram, BoundsAreInclusiveAndTheCountIsTheInfBucket) {
  ShardedHistogram histogram({10, 20});
  for (uint64_t value : {0, 10, 11, 20, 21, 1000}) histogram.Observe(value);
  const prometheus::ClientMetric::Histogram collected = histogram.Collect(10);
  ASSERT_EQ(collected.bucket.size(), 3u);
  EXPECT_EQ(collected.bucket[0].upper_bound, 1);
  EXPECT_EQ(collected.bucket[0].cumulative_count, 2u);
  EXPECT_EQ(collected.bucket[1].upper_bound, 2);
  EXPECT_EQ(collected.bucket[1].cumulative_count, 4u);
  EXPECT_EQ(collected.bucket[2].upper_bound,
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(collected.bucket[2].cumulative_count, 6u);
  EXPECT_EQ(collected.sample_count, 6u);
  EXPECT_EQ(collected.sample_sum, 106.2);
}

TEST(ShardedCells, SignedDeltasAndDoublesSumAcrossThreads) {
  ShardedCells cells(10);  // two cache lines per shard
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cells] {
      for (int i = 0; i < 1000; ++i) {
        cells.Add(9, 3);
        cells.Add(9, ~uint64_t{0});  // -1
        cells.AddDouble(0, 0.25);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(cells.Sum(9), 8000u);
  EXPECT_EQ(cells.SumDouble(0), 1000.0);
  EXPECT_EQ(cells.Sum(5), 0u);
}

// BusyTracker: intervals [end - busy, end] in nanoseconds.
TEST(BusyTracker, OverlappingBatchesCountOnce) {
  BusyTracker busy;
  EXPECT_EQ(busy.Add(/*end_ns=*/100, /*busy_ns=*/50), 50u);  // [50, 100]
  EXPECT_EQ(busy.Add(120, 40), 20u);                         // [80, 120]
  EXPECT_EQ(busy.Add(110, 20), 0u);                          // inside
  EXPECT_EQ(busy.Add(200, 30), 30u);                         // [170, 200]
  EXPECT_EQ(busy.Add(200, 30), 0u);                          // again
  // A long batch that started first and ends last: only the gaps count.
  EXPECT_EQ(busy.Add(300, 280), (50 - 20) + (170 - 120) + (300 - 200));
  EXPECT_EQ(busy.TotalNanoseconds(), 280u);
  EXPECT_EQ(busy.Add(400, 0), 0u);
  EXPECT_EQ(busy.Add(300, 400), 120u);  // [-100, 20]: before what is covered
  EXPECT_EQ(busy.TotalNanoseconds(), 400u);
}

TEST(BusyTracker, ForgottenIntervalsCountAsCovered) {
  BusyTracker busy(/*max_intervals=*/2);
  EXPECT_EQ(busy.Add(10, 10), 10u);  // [0, 10]
  EXPECT_EQ(busy.Add(30, 10), 10u);  // [20, 30]
  EXPECT_EQ(busy.Add(50, 10), 10u);  // [40, 50]; [0, 10] is forgotten
  // [0, 60]: before 10 is taken as covered; the gaps 10-20 and 30-40 and the
  // new 50-60 count.
  EXPECT_EQ(busy.Add(60, 60), 30u);
  EXPECT_EQ(busy.TotalNanoseconds(), 60u);
}

}  // namespace
}  // namespace matserve::metrics
