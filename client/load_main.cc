// matserve-load: flags -> options, then the load levels against the targets
// (and the transport floor), and the report on stdout.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "client/load/mix.h"
#include "client/load/options.h"
#include "client/load/report.h"
#include "client/load/runner.h"
#include "client/load/workload.h"

ABSL_FLAG(std::string, target, "localhost:50051",
          "host:port[,host:port...] or a gRPC target (dns:///name:port, "
          "ipv4:a:1,b:2): calls go round-robin over every address, and a call "
          "whose server goes away is retried on the next");
ABSL_FLAG(int, channels, 1,
          "channels, each with a connection of its own to every address of "
          "the target; calls take turns over them");
ABSL_FLAG(int, concurrency, 1, "closed loop: calls in flight");
ABSL_FLAG(std::string, concurrency_range, "",
          "closed loop sweep START:END[:FACTOR], e.g. 1:512:2 (one report row "
          "per level)");
ABSL_FLAG(double, rate, 0,
          "open loop: calls per second, sent on schedule whether or not "
          "earlier ones returned");
ABSL_FLAG(std::string, arrival, "constant",
          "open loop: constant or poisson gaps between calls");
ABSL_FLAG(absl::Duration, duration, absl::Seconds(10),
          "measured time of each level");
ABSL_FLAG(int64_t, requests, 0,
          "if > 0: measure this many calls per level instead of --duration");
ABSL_FLAG(absl::Duration, warmup, absl::Seconds(2),
          "time before the measurement of each level (calls not counted)");
ABSL_FLAG(absl::Duration, deadline, absl::Seconds(60), "deadline of each call");
ABSL_FLAG(std::string, mix, "multiply:256x256x256",
          "operations KIND:SHAPE[:WEIGHT], comma-separated: multiply:MxKxN, "
          "transpose:RxC; e.g. multiply:64x64x64,transpose:1024x1024:0.2");
ABSL_FLAG(int, verify_every, 0,
          "check every Nth OK answer against a local reference (0: none); any "
          "wrong answer makes the exit status 1");
ABSL_FLAG(std::string, output, "text", "report format: text, json or csv");
ABSL_FLAG(std::string, floor_target, "",
          "matserve-echo-server, as --target: runs every level there too and "
          "reports floor_rps and fraction_of_floor");
ABSL_FLAG(int64_t, max_message_bytes, int64_t{1} << 30,
          "largest request or response message, in bytes");
ABSL_FLAG(uint64_t, seed, 1, "seed of the random inputs and arrivals");
ABSL_FLAG(bool, progress, true, "a progress line on stderr every second");
ABSL_FLAG(absl::Duration, connect_timeout, absl::Seconds(10),
          "how long to wait for every channel to connect");
ABSL_FLAG(bool, check_config, false,
          "check the flags and exit 0 without connecting (2 and a message for "
          "a bad flag), e.g. to test a deployment's arguments");

namespace matserve::load {
namespace {

constexpr char kUsage[] =
    "matserve-load --target=host:port [--concurrency=N | "
    "--concurrency_range=1:256:4 | --rate=QPS] [--mix=multiply:64x64x64,...] "
    "[--duration=10s | --requests=N] [--verify_every=N] "
    "[--floor_target=host:port] [--output=text|json|csv]\n"
    "Load-tests matserve and reports throughput and latency per level.";

// Bytes a message may carry beyond its matrix data: protobuf tags, lengths,
// dimensions.
constexpr int64_t kMessageOverhead = 64;

struct Config {
  std::string target, floor_target;  // ChannelTarget()s; no floor: empty
  int channels = 1;
  int max_message_bytes = 0;
  std::vector<Operation> mix;
  std::vector<Level> levels;
  bool sweep = false;
  RunOptions run;
  OutputFormat output = OutputFormat::kText;
  absl::Duration connect_timeout;
};

// Whether `flag` was set to a value other than its default (the Abseil of
// 2022 does not tell whether a flag was given at all).
template <typename T>
bool Changed(const absl::Flag<T>& flag) {
  const absl::CommandLineFlag& reflection = absl::GetFlagReflectionHandle(flag);
  return reflection.CurrentValue() != reflection.DefaultValue();
}

absl::Status Invalid(absl::string_view message) {
  return absl::InvalidArgumentError(message);
}

// The gRPC target for the value of --`flag_name`; its error names the flag.
absl::StatusOr<std::string> TargetFlag(absl::string_view flag_name,
                                       absl::string_view value) {
  absl::StatusOr<std::string> target = ChannelTarget(value);
  if (!target.ok()) {
    return absl::Status(target.status().code(),
                        absl::StrCat("--", flag_name, "=", value, ": ",
                                     target.status().message()));
  }
  return target;
}

// The flags, checked, as a Config. INVALID_ARGUMENT for a bad flag, NOT_FOUND
// for a host name in a --target list that does not resolve.
absl::StatusOr<Config> ConfigFromFlags() {
  Config config;
  absl::StatusOr<std::string> target =
      TargetFlag("target", absl::GetFlag(FLAGS_target));
  if (!target.ok()) return target.status();
  config.target = *target;
  if (const std::string floor = absl::GetFlag(FLAGS_floor_target);
      !floor.empty()) {
    absl::StatusOr<std::string> floor_target =
        TargetFlag("floor_target", floor);
    if (!floor_target.ok()) return floor_target.status();
    config.floor_target = *floor_target;
  }
  config.channels = absl::GetFlag(FLAGS_channels);
  if (config.channels < 1) return Invalid("--channels must be at least 1");
  const int64_t max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  if (max_message_bytes < 1 ||
      max_message_bytes > std::numeric_limits<int>::max()) {
    return Invalid("--max_message_bytes must be in [1, 2^31 - 1]");
  }
  config.max_message_bytes = static_cast<int>(max_message_bytes);
  absl::StatusOr<std::vector<Operation>> mix =
      ParseMix(absl::GetFlag(FLAGS_mix));
  if (!mix.ok()) return mix.status();
  config.mix = *mix;
  for (const Operation& op : config.mix) {
    const uint64_t largest = std::max(op.RequestBytes(), op.ResponseBytes());
    if (largest + kMessageOverhead > uint64_t(max_message_bytes)) {
      return Invalid(
          absl::StrCat("--mix item ", op.Name(), ": a message of ", largest,
                       " bytes of matrix data is over --max_message_bytes=",
                       max_message_bytes));
    }
  }

  const double rate = absl::GetFlag(FLAGS_rate);
  const std::string range = absl::GetFlag(FLAGS_concurrency_range);
  if (!(rate >= 0) || !std::isfinite(rate)) {
    return Invalid("--rate must be a number >= 0");
  }
  if (rate > 0 && !range.empty()) {
    return Invalid(
        "--rate (open loop) and --concurrency_range (closed loop) exclude "
        "each other");
  }
  if (rate > 0 && Changed(FLAGS_concurrency)) {
    return Invalid(
        "--rate (open loop) and --concurrency (closed loop) exclude each "
        "other");
  }
  if (rate == 0 && Changed(FLAGS_arrival)) {
    return Invalid("--arrival applies to the open loop (--rate) only");
  }
  absl::StatusOr<Arrival> arrival = ParseArrival(absl::GetFlag(FLAGS_arrival));
  if (!arrival.ok()) return arrival.status();
  config.run.arrival = *arrival;
  if (rate > 0) {
    config.levels.push_back({.rate = rate});
  } else if (!range.empty()) {
    if (Changed(FLAGS_concurrency)) {
      return Invalid(
          "--concurrency and --concurrency_range exclude each other");
    }
    absl::StatusOr<std::vector<int>> levels = ParseConcurrencyRange(range);
    if (!levels.ok()) return levels.status();
    for (int concurrency : *levels) {
      config.levels.push_back({.concurrency = concurrency});
    }
    config.sweep = true;
  } else {
    const int concurrency = absl::GetFlag(FLAGS_concurrency);
    if (concurrency < 1) return Invalid("--concurrency must be at least 1");
    config.levels.push_back({.concurrency = concurrency});
  }

  config.run.duration = absl::GetFlag(FLAGS_duration);
  config.run.requests = absl::GetFlag(FLAGS_requests);
  config.run.warmup = absl::GetFlag(FLAGS_warmup);
  config.run.deadline = absl::GetFlag(FLAGS_deadline);
  config.run.verify_every = absl::GetFlag(FLAGS_verify_every);
  config.run.progress = absl::GetFlag(FLAGS_progress);
  config.run.seed = absl::GetFlag(FLAGS_seed);
  config.connect_timeout = absl::GetFlag(FLAGS_connect_timeout);
  if (config.run.duration <= absl::ZeroDuration()) {
    return Invalid("--duration must be positive");
  }
  if (config.run.requests < 0) return Invalid("--requests must be >= 0");
  if (config.run.requests > 0 && Changed(FLAGS_duration)) {
    return Invalid("--duration and --requests exclude each other");
  }
  if (config.run.warmup < absl::ZeroDuration()) {
    return Invalid("--warmup must not be negative");
  }
  if (config.run.deadline <= absl::ZeroDuration()) {
    return Invalid("--deadline must be positive");
  }
  if (config.connect_timeout <= absl::ZeroDuration()) {
    return Invalid("--connect_timeout must be positive");
  }
  if (config.run.verify_every < 0) {
    return Invalid("--verify_every must be >= 0 (0: no checks)");
  }
  absl::StatusOr<OutputFormat> output =
      ParseOutputFormat(absl::GetFlag(FLAGS_output));
  if (!output.ok()) return output.status();
  config.output = *output;
  return config;
}

absl::StatusOr<std::unique_ptr<LoadGenerator>> Connect(
    const Config& config, const std::string& target) {
  return LoadGenerator::Connect(target, config.channels,
                                config.max_message_bytes,
                                config.connect_timeout);
}

// Runs every level (and its floor) and prints the report; the exit status.
int Run(const Config& config) {
  const Workload workload = Workload::Prepare(
      config.mix, config.run.verify_every > 0, config.run.seed);
  absl::StatusOr<std::unique_ptr<LoadGenerator>> service =
      Connect(config, config.target);
  if (!service.ok()) {
    std::cerr << "matserve-load: " << service.status().message() << std::endl;
    return 1;
  }
  std::unique_ptr<LoadGenerator> floor;
  if (!config.floor_target.empty()) {
    absl::StatusOr<std::unique_ptr<LoadGenerator>> connected =
        Connect(config, config.floor_target);
    if (!connected.ok()) {
      std::cerr << "matserve-load: floor: " << connected.status().message()
                << std::endl;
      return 1;
    }
    floor = std::move(*connected);
  }
  // The floor server answers no products: nothing there is checked.
  RunOptions floor_options = config.run;
  floor_options.verify_every = 0;

  Report report{MixName(config.mix), {}, config.sweep};
  int exit_status = 0;
  for (const Level& level : config.levels) {
    const std::string name = LevelName(level);
    LevelResult result = (*service)->Run(workload, level, config.run, name);
    if (floor != nullptr) {
      result.floor_rps =
          floor->Run(workload, level, floor_options, "floor, " + name)
              .throughput_rps;
    }
    if (result.mismatches > 0) {
      std::cerr << "matserve-load: " << name << ": " << result.mismatches
                << " wrong answer(s) of " << result.verified
                << " checked; the first: " << result.first_mismatch
                << std::endl;
      exit_status = 1;
    }
    if (result.ok == 0) {
      std::cerr << "matserve-load: " << name << ": no call succeeded"
                << std::endl;
      exit_status = 1;
    }
    report.levels.push_back(std::move(result));
  }
  std::cout << FormatReport(report, config.output) << std::flush;
  return exit_status;
}

// Abseil's parser exits with status 1 on an unknown flag, a value of the
// wrong type, or --help. Here 1 means a wrong answer, so an exit while it
// parses leaves with 2 instead, the status of every other usage error.
bool parsing_flags = false;
void ExitTwoWhileParsingFlags() {
  if (!parsing_flags) return;
  std::cout.flush();
  std::cerr.flush();
  _exit(2);
}

}  // namespace
}  // namespace matserve::load

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(matserve::load::kUsage);
  std::atexit(matserve::load::ExitTwoWhileParsingFlags);
  matserve::load::parsing_flags = true;
  const std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  matserve::load::parsing_flags = false;
  if (args.size() > 1) {
    std::cerr << "matserve-load: unexpected argument \"" << args[1]
              << "\" (every setting is a --flag)\n"
              << matserve::load::kUsage << std::endl;
    return 2;
  }
  absl::StatusOr<matserve::load::Config> config =
      matserve::load::ConfigFromFlags();
  if (!config.ok()) {
    std::cerr << "matserve-load: " << config.status().message() << std::endl;
    // A host that does not resolve is a target that cannot be reached (1);
    // anything else is a bad flag.
    return config.status().code() == absl::StatusCode::kNotFound ? 1 : 2;
  }
  if (absl::GetFlag(FLAGS_check_config)) return 0;
  return matserve::load::Run(*config);
}
