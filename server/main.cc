// matserve-server: flags -> options, backend selection, the gRPC server, and
// graceful shutdown.
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "server/engine/cpu_executor.h"
#include "server/engine/cuda_executor.h"
#include "server/engine/engine.h"
#include "server/metrics/server_metrics.h"
#include "server/rpc/matrix_service.h"
#include "server/serving.h"

ABSL_FLAG(std::string, address, "0.0.0.0:50051",
          "host:port to listen on; port 0 picks a free port (the log line says "
          "which)");
ABSL_FLAG(std::string, backend, "auto",
          "auto | cuda | cpu. auto: CUDA when a GPU is visible, else the CPU "
          "(Eigen)");
ABSL_FLAG(int64_t, max_message_bytes, int64_t{1} << 30,
          "largest request or response message, in bytes (gRPC's own default "
          "is 4 MiB)");
ABSL_FLAG(uint64_t, max_elements, uint64_t{1} << 27,
          "largest matrix, in elements, that a request may send or get back");
ABSL_FLAG(int, streams, 4, "CUDA streams (one worker each) per GPU");
ABSL_FLAG(std::vector<std::string>, devices, {},
          "CUDA device ordinals to serve on, comma-separated; empty: every "
          "visible GPU");
ABSL_FLAG(
    std::string, sgemm_variant, "auto",
    "CUDA backend, for experiments: force one SGEMM kernel (naive | tiled "
    "| register_blocked | warp_tiled); auto picks by shape");
ABSL_FLAG(std::string, transpose_variant, "auto",
          "CUDA backend, for experiments: force one transpose kernel (tiled | "
          "wide | large_tile | packed); auto picks by shape");
ABSL_FLAG(uint64_t, max_queue_requests, 1024,
          "requests waiting for a worker before new ones get "
          "RESOURCE_EXHAUSTED");
ABSL_FLAG(uint64_t, max_queue_bytes, uint64_t{4} << 30,
          "bytes (inputs and outputs) of the requests waiting for a worker "
          "before new ones get RESOURCE_EXHAUSTED");
ABSL_FLAG(uint64_t, max_batch_size, 64,
          "most requests in one batch; 1 turns batching off");
ABSL_FLAG(uint64_t, max_batch_bytes, uint64_t{64} << 20,
          "most bytes (inputs and outputs) in one batch; a larger request "
          "runs alone, copied without staging");
ABSL_FLAG(int64_t, max_queue_delay_us, 1000,
          "how long a free worker may hold a batch open for more requests "
          "while its GPU is busy (see --hold_rule); it stops holding once "
          "the GPU idles, so a lone request never waits");
ABSL_FLAG(std::string, hold_rule, "adaptive",
          "when a free worker holds a batch for company: others_busy (only "
          "while every other worker on its GPU is busy), device_busy (while "
          "any is), or adaptive (device_busy while the server measures that "
          "holds do not slow the rate at which it serves requests, else "
          "others_busy)");
ABSL_FLAG(std::string, metrics_address, "0.0.0.0:9464",
          "host:port of the Prometheus endpoint /metrics; port 0 picks a free "
          "port (logged); empty: no metrics");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(30),
          "on SIGTERM/SIGINT, how long calls in flight may take to finish "
          "before they are "
          "cancelled");
ABSL_FLAG(bool, check_config, false,
          "check every flag, then exit 0 without starting anything (2 and a "
          "message for a bad one); for testing a deployment's arguments");

namespace matserve {
namespace {

void Log(const std::string& line) {
  std::cerr << "matserve-server: " << line << std::endl;
}

// The executors for --backend (checked), and a line that says what was chosen
// and why.
absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> MakeExecutors(
    const std::string& backend, const engine::CudaExecutorOptions& cuda) {
  bool use_cuda = backend == "cuda";
  if (backend == "auto") {
    absl::StatusOr<int> devices = engine::CudaDeviceCount();
    use_cuda = devices.ok() && *devices > 0;
    if (!use_cuda) {
      Log(absl::StrCat(
          "backend auto: no GPU (",
          devices.ok() ? "no CUDA device visible" : devices.status().message(),
          "), using the CPU"));
    }
  }
  if (use_cuda) return engine::MakeCudaExecutors(cuda);
  std::vector<std::unique_ptr<engine::Executor>> executors;
  executors.push_back(std::make_unique<engine::CpuExecutor>());
  return executors;
}

// The batcher's flags, checked.
absl::StatusOr<engine::EngineOptions> BatcherOptions() {
  engine::EngineOptions options{
      .max_queue_requests = absl::GetFlag(FLAGS_max_queue_requests),
      .max_queue_bytes = absl::GetFlag(FLAGS_max_queue_bytes),
      .max_batch_size = absl::GetFlag(FLAGS_max_batch_size),
      .max_batch_bytes = absl::GetFlag(FLAGS_max_batch_bytes),
      .max_queue_delay =
          absl::Microseconds(absl::GetFlag(FLAGS_max_queue_delay_us))};
  for (const auto& [name, value] :
       {std::pair<const char*, uint64_t>{"max_queue_requests",
                                         options.max_queue_requests},
        {"max_queue_bytes", options.max_queue_bytes},
        {"max_batch_size", options.max_batch_size},
        {"max_batch_bytes", options.max_batch_bytes}}) {
    if (value < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " must be at least 1"));
    }
  }
  if (options.max_queue_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--max_queue_delay_us must be >= 0");
  }
  const std::string hold_rule = absl::GetFlag(FLAGS_hold_rule);
  if (hold_rule == "adaptive") {
    options.hold_rule = engine::HoldRule::kAdaptive;
  } else if (hold_rule == "device_busy") {
    options.hold_rule = engine::HoldRule::kWhileDeviceBusy;
  } else if (hold_rule == "others_busy") {
    options.hold_rule = engine::HoldRule::kWhileOthersBusy;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--hold_rule=", hold_rule,
                     ": expected adaptive, device_busy or others_busy"));
  }
  return options;
}

// What the metrics need to know of the server. The device labels are the
// executors' devices: the CUDA ordinals served on (--devices, or every visible
// GPU), or "cpu".
metrics::MetricsOptions ServerMetricsOptions(
    const std::vector<std::unique_ptr<engine::Executor>>& executors,
    const std::vector<int>& ordinals,
    const engine::EngineOptions& engine_options,
    std::function<size_t()> queued_requests) {
  metrics::MetricsOptions options{
      .address = absl::GetFlag(FLAGS_metrics_address),
      .version = MATSERVE_VERSION,
      .max_batch_size = engine_options.max_batch_size,
      .queue_capacity = engine_options.max_queue_requests,
      .queued_requests = std::move(queued_requests)};
  if (dynamic_cast<const engine::CpuExecutor*>(executors.front().get())) {
    options.backend = "cpu";
    options.devices = {"cpu"};
    return options;
  }
  options.backend = "cuda";
  int device_count = 0;
  for (const auto& executor : executors) {
    device_count = std::max(device_count, executor->device() + 1);
  }
  std::vector<int> device_ordinals;
  for (int device = 0; device < device_count; ++device) {
    device_ordinals.push_back(ordinals.empty() ? device : ordinals[device]);
    options.devices.push_back(absl::StrCat(device_ordinals.back()));
  }
  options.device_memory = [device_ordinals](int device) {
    return engine::CudaDeviceMemory(device_ordinals[device]);
  };
  return options;
}

// --devices as ordinals.
absl::StatusOr<std::vector<int>> DeviceOrdinals() {
  std::vector<int> devices;
  for (const std::string& device : absl::GetFlag(FLAGS_devices)) {
    int ordinal;
    if (!absl::SimpleAtoi(device, &ordinal) || ordinal < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--devices: \"", device, "\" is not a device ordinal (0, 1, ...)"));
    }
    devices.push_back(ordinal);
  }
  return devices;
}

// `value` of --`flag` as a listening address: "host:port" with a port in
// [0, 65535] (0 picks one), or for gRPC (`unix_ok`) "unix:PATH".
absl::Status CheckListenAddress(absl::string_view flag, absl::string_view value,
                                bool unix_ok) {
  if (unix_ok && absl::StartsWith(value, "unix:")) return absl::OkStatus();
  const size_t colon = value.rfind(':');
  int port = -1;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(value.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, "=", value,
                     ": expected host:port with a port in [0, 65535]",
                     unix_ok ? " or unix:PATH" : ""));
  }
  return absl::OkStatus();
}

// Every check of the flags that needs no device, no port and no thread: what
// --check_config runs, and what Serve() runs before it starts anything.
// INVALID_ARGUMENT naming the flag.
absl::Status CheckFlags() {
  if (absl::Status address = CheckListenAddress(
          "address", absl::GetFlag(FLAGS_address), /*unix_ok=*/true);
      !address.ok()) {
    return address;
  }
  if (const std::string metrics = absl::GetFlag(FLAGS_metrics_address);
      !metrics.empty()) {
    if (absl::Status address =
            CheckListenAddress("metrics_address", metrics, /*unix_ok=*/false);
        !address.ok()) {
      return address;
    }
  }
  const std::string backend = absl::GetFlag(FLAGS_backend);
  if (backend != "auto" && backend != "cuda" && backend != "cpu") {
    return absl::InvalidArgumentError(
        absl::StrCat("--backend=", backend, ": expected auto, cuda or cpu"));
  }
  if (absl::GetFlag(FLAGS_streams) < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--streams=", absl::GetFlag(FLAGS_streams), ": must be >= 1"));
  }
  // The names kernels/kernels.h gives its variants (main cannot include it:
  // it is CUDA's); the CUDA backend checks them again when it starts.
  for (const auto& [flag, value, names] :
       {std::tuple<const char*, std::string, std::vector<absl::string_view>>{
            "sgemm_variant",
            absl::GetFlag(FLAGS_sgemm_variant),
            {"auto", "naive", "tiled", "register_blocked", "warp_tiled"}},
        {"transpose_variant",
         absl::GetFlag(FLAGS_transpose_variant),
         {"auto", "tiled", "wide", "large_tile", "packed"}}}) {
    if (std::find(names.begin(), names.end(), value) == names.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, "=", value, ": expected ", absl::StrJoin(names, ", ")));
    }
  }
  if (absl::StatusOr<int> limit =
          MessageLimit(absl::GetFlag(FLAGS_max_message_bytes));
      !limit.ok()) {
    return limit.status();
  }
  if (absl::GetFlag(FLAGS_max_elements) < 1) {
    return absl::InvalidArgumentError("--max_elements must be at least 1");
  }
  if (absl::StatusOr<engine::EngineOptions> batcher = BatcherOptions();
      !batcher.ok()) {
    return batcher.status();
  }
  if (absl::StatusOr<std::vector<int>> devices = DeviceOrdinals();
      !devices.ok()) {
    return devices.status();
  }
  if (absl::GetFlag(FLAGS_shutdown_grace) < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--shutdown_grace must not be negative");
  }
  return absl::OkStatus();
}

int Serve() {
  StopSignals stop_signals;  // before any thread starts
  if (absl::Status flags = CheckFlags(); !flags.ok()) {
    Log(std::string(flags.message()));
    return 2;
  }
  const absl::StatusOr<int> max_message_bytes =
      MessageLimit(absl::GetFlag(FLAGS_max_message_bytes));
  const absl::StatusOr<engine::EngineOptions> engine_options = BatcherOptions();
  const absl::StatusOr<std::vector<int>> devices = DeviceOrdinals();
  absl::StatusOr<std::vector<std::unique_ptr<engine::Executor>>> executors =
      MakeExecutors(
          absl::GetFlag(FLAGS_backend),
          {.devices = *devices,
           .streams_per_device = absl::GetFlag(FLAGS_streams),
           .max_staged_bytes = engine_options->max_batch_bytes,
           .sgemm_variant = absl::GetFlag(FLAGS_sgemm_variant),
           .transpose_variant = absl::GetFlag(FLAGS_transpose_variant)});
  if (!executors.ok()) {
    Log(absl::StrCat("cannot start the backend: ",
                     executors.status().ToString()));
    return 1;
  }
  const std::string backend_description = (*executors)[0]->Describe();
  const size_t workers = executors->size();
  // The metrics hear from the engine and the service, so they are built
  // first; their queue gauge reads the engine, so /metrics is served only
  // once the engine exists and stops before it goes.
  const engine::Engine* queue_source = nullptr;
  std::unique_ptr<metrics::ServerMetrics> server_metrics;
  if (!absl::GetFlag(FLAGS_metrics_address).empty()) {
    server_metrics =
        std::make_unique<metrics::ServerMetrics>(ServerMetricsOptions(
            *executors, *devices, *engine_options,
            [&queue_source] { return queue_source->QueuedRequests(); }));
  }
  engine::NoObserver no_observer;
  engine::Observer* const observer =
      server_metrics ? static_cast<engine::Observer*>(server_metrics.get())
                     : &no_observer;
  engine::EngineOptions options = *engine_options;
  options.observer = observer;
  options.log = Log;
  engine::Engine engine(std::move(*executors), options);
  queue_source = &engine;
  // On every way out: the workers stop reporting before the metrics go, and
  // no scrape reads the engine once it is gone.
  const absl::Cleanup stop_engine_then_metrics = [&engine, &server_metrics] {
    engine.Stop();
    server_metrics.reset();
  };
  if (server_metrics != nullptr) {
    const absl::Status listening = server_metrics->Listen();
    if (!listening.ok()) {
      Log(std::string(listening.message()));
      return 1;
    }
    Log(absl::StrCat("metrics on http://", server_metrics->BoundAddress(),
                     "/metrics"));
  }
  rpc::MatrixService service(
      &engine, {.max_elements = absl::GetFlag(FLAGS_max_elements)}, observer);

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.RegisterService(&service);
  std::string bound;
  std::unique_ptr<grpc::Server> server = StartListening(
      builder, absl::GetFlag(FLAGS_address), *max_message_bytes, &bound);
  if (server == nullptr) {
    Log(absl::StrCat("cannot listen on ", absl::GetFlag(FLAGS_address)));
    return 1;
  }
  grpc::HealthCheckServiceInterface* health = server->GetHealthCheckService();
  health->SetServingStatus(true);
  health->SetServingStatus(v1::MatrixService::service_full_name(), true);

  Log(absl::StrCat("serving on ", bound, " with ", workers,
                   " worker(s), the first on ", backend_description));

  const int signal_number = stop_signals.Wait();
  Log(absl::StrCat("signal ", signal_number, ": draining calls in flight"));
  health->Shutdown();  // NOT_SERVING from now on, so load balancers look
                       // elsewhere
  server->Shutdown(
      absl::ToChronoTime(absl::Now() + absl::GetFlag(FLAGS_shutdown_grace)));
  engine.Stop();
  Log("stopped");
  return 0;
}

// Abseil's parser exits with status 1 on an unknown flag or a value of the
// wrong type; an exit while it parses leaves with 2 instead, the status of
// every other bad flag, so that a deployment's arguments fail one way.
bool parsing_flags = false;
void ExitTwoWhileParsingFlags() {
  if (!parsing_flags) return;
  std::cerr.flush();
  _exit(2);
}

}  // namespace
}  // namespace matserve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "matserve-server: the matserve gRPC matrix service");
  std::atexit(matserve::ExitTwoWhileParsingFlags);
  matserve::parsing_flags = true;
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  matserve::parsing_flags = false;
  if (args.size() > 1) {
    std::cerr << "matserve-server: unexpected argument \"" << args[1]
              << "\" (every setting is a --flag)" << std::endl;
    return 2;
  }
  if (absl::GetFlag(FLAGS_check_config)) {
    const absl::Status flags = matserve::CheckFlags();
    if (!flags.ok()) {
      std::cerr << "matserve-server: " << flags.message() << std::endl;
      return 2;
    }
    return 0;
  }
  return matserve::Serve();
}
