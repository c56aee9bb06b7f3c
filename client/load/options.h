// What matserve-load is asked to do, as plain values (the flags live in
// load_main.cc), and the parsers of the flags that are more than a number.
#ifndef MATSERVE_CLIENT_LOAD_OPTIONS_H_
#define MATSERVE_CLIENT_LOAD_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace matserve::load {

// One load level: `concurrency` calls in flight (closed loop), or calls sent at
// `rate` per second whether or not earlier ones returned (open loop).
struct Level {
  int concurrency = 0;  // > 0: closed loop
  double rate = 0;      // > 0: open loop
};

// "concurrency 16" or "rate 1000/s".
std::string LevelName(const Level& level);

enum class Arrival { kConstant, kPoisson };
enum class OutputFormat { kText, kJson, kCsv };

// How one level runs.
struct RunOptions {
  absl::Duration warmup;    // calls that start in it are not counted
  absl::Duration duration;  // the measured time, unless `requests` > 0
  int64_t requests = 0;     // > 0: the level ends after this many counted calls
  absl::Duration deadline;  // of every call
  Arrival arrival = Arrival::kConstant;  // open loop: the gaps between calls
  int verify_every = 0;                  // check every Nth OK answer; 0: none
  bool progress = true;  // a progress line on stderr every second
  uint64_t seed = 1;     // of the Poisson arrivals
};

// "START:END[:FACTOR]" -> START, START*FACTOR, ... up to END (FACTOR 2 when
// left out): "1:512:2" is 1, 2, 4, ..., 512.
absl::StatusOr<std::vector<int>> ParseConcurrencyRange(absl::string_view range);

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view format);
absl::StatusOr<Arrival> ParseArrival(absl::string_view arrival);

}  // namespace matserve::load

#endif  // MATSERVE_CLIENT_LOAD_OPTIONS_H_
