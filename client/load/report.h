// The report of a run, one row per level: a text table, JSON or CSV.
#ifndef MATSERVE_CLIENT_LOAD_REPORT_H_
#define MATSERVE_CLIENT_LOAD_REPORT_H_

#include <string>
#include <vector>

#include "client/load/options.h"
#include "client/load/runner.h"

namespace matserve::load {

struct Report {
  std::string mix;  // MixName of the workload
  std::vector<LevelResult> levels;
  bool sweep = false;  // JSON: a list of objects, else the one object
};

// JSON keys (CSV columns alike, with the latencies as p50_ms, ...): mode
// ("closed" or "open"), concurrency, rate, mix, duration_s (the measured
// window), requests, ok, errors (status name -> calls), ok_by_peer (server
// address -> OK calls; CSV: address=calls;...), throughput_rps,
// gflops, payload_gbps, latency_ms (p50, p90, p95, p99, p999, max), verified,
// mismatches, verify_skipped, resent, floor_rps, fraction_of_floor. null (CSV:
// empty) where a value does not apply: no floor, no OK call to take latencies
// of.
std::string FormatReport(const Report& report, OutputFormat format);

}  // namespace matserve::load

#endif  // MATSERVE_CLIENT_LOAD_REPORT_H_
