// FormatReport: the text table, JSON and CSV.
#include "client/load/report.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace matserve::load {
namespace {

std::optional<double> FractionOfFloor(const LevelResult& level) {
  if (!level.floor_rps || *level.floor_rps <= 0) return std::nullopt;
  return level.throughput_rps / *level.floor_rps;
}

// A JSON number, or null for nothing (or a value JSON cannot hold).
std::string JsonNumber(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return "null";
  return absl::StrFormat("%.6g", *value);
}

// The JSON string of `text`, which holds no character that needs escaping
// beyond a quote or a backslash (mix names, status code names).
std::string JsonString(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::optional<double> Latency(const LevelResult& level,
                              double LatencySummary::*field) {
  if (!level.latency) return std::nullopt;
  return (*level.latency).*field;
}

struct LatencyField {
  const char* key;    // JSON; CSV with "_ms"
  const char* title;  // text
  double LatencySummary::*value;
};
constexpr LatencyField kLatencies[] = {{"p50", "p50", &LatencySummary::p50},
                                       {"p90", "p90", &LatencySummary::p90},
                                       {"p95", "p95", &LatencySummary::p95},
                                       {"p99", "p99", &LatencySummary::p99},
                                       {"p999", "p99.9", &LatencySummary::p999},
                                       {"max", "max", &LatencySummary::max}};

std::string JsonObject(const std::string& mix, const LevelResult& level) {
  const bool closed = level.level.concurrency > 0;
  std::string errors = absl::StrJoin(
      level.errors, ", ", [](std::string* out, const auto& error) {
        absl::StrAppend(out, JsonString(error.first), ": ", error.second);
      });
  std::string ok_by_peer = absl::StrJoin(
      level.ok_by_peer, ", ", [](std::string* out, const auto& peer) {
        absl::StrAppend(out, JsonString(peer.first), ": ", peer.second);
      });
  std::string latency = absl::StrJoin(
      kLatencies, ", ", [&](std::string* out, const LatencyField& field) {
        absl::StrAppend(out, JsonString(field.key), ": ",
                        JsonNumber(Latency(level, field.value)));
      });
  return absl::StrCat(
      "{\"mode\": ", JsonString(closed ? "closed" : "open"),
      ", \"concurrency\": ",
      closed ? absl::StrCat(level.level.concurrency) : "null", ", \"rate\": ",
      JsonNumber(closed ? std::nullopt : std::optional(level.level.rate)),
      ", \"mix\": ", JsonString(mix),
      ", \"duration_s\": ", JsonNumber(level.seconds),
      ", \"requests\": ", level.requests, ", \"ok\": ", level.ok,
      ", \"errors\": {", errors, "}", ", \"ok_by_peer\": {", ok_by_peer, "}",
      ", \"throughput_rps\": ", JsonNumber(level.throughput_rps),
      ", \"gflops\": ", JsonNumber(level.gflops),
      ", \"payload_gbps\": ", JsonNumber(level.payload_gbps),
      ", \"latency_ms\": {", latency, "}", ", \"verified\": ", level.verified,
      ", \"mismatches\": ", level.mismatches,
      ", \"verify_skipped\": ", level.verify_skipped,
      ", \"resent\": ", level.resent,
      ", \"floor_rps\": ", JsonNumber(level.floor_rps),
      ", \"fraction_of_floor\": ", JsonNumber(FractionOfFloor(level)), "}");
}

std::string Json(const Report& report) {
  if (!report.sweep && report.levels.size() == 1) {
    return JsonObject(report.mix, report.levels[0]) + "\n";
  }
  return absl::StrCat(
      "[\n  ",
      absl::StrJoin(report.levels, ",\n  ",
                    [&](std::string* out, const LevelResult& level) {
                      absl::StrAppend(out, JsonObject(report.mix, level));
                    }),
      "\n]\n");
}

std::string CsvNumber(std::optional<double> value) {
  if (!value || !std::isfinite(*value)) return "";
  return absl::StrFormat("%.6g", *value);
}

// RFC 4180: a field with a comma or a quote is quoted, its quotes doubled.
std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string Csv(const Report& report) {
  std::string csv =
      "mode,concurrency,rate,mix,duration_s,requests,ok,errors,ok_by_peer,"
      "throughput_rps,"
      "gflops,payload_gbps,p50_ms,p90_ms,p95_ms,p99_ms,p999_ms,max_ms,verified,"
      "mismatches,verify_skipped,resent,floor_rps,fraction_of_floor\n";
  for (const LevelResult& level : report.levels) {
    const bool closed = level.level.concurrency > 0;
    std::vector<std::string> fields = {
        closed ? "closed" : "open",
        closed ? absl::StrCat(level.level.concurrency) : "",
        closed ? "" : CsvNumber(level.level.rate),
        CsvField(report.mix),
        CsvNumber(level.seconds),
        absl::StrCat(level.requests),
        absl::StrCat(level.ok),
        absl::StrJoin(level.errors, ";", absl::PairFormatter(":")),
        absl::StrJoin(level.ok_by_peer, ";", absl::PairFormatter("=")),
        CsvNumber(level.throughput_rps),
        CsvNumber(level.gflops),
        CsvNumber(level.payload_gbps)};
    for (const LatencyField& field : kLatencies) {
      fields.push_back(CsvNumber(Latency(level, field.value)));
    }
    fields.insert(
        fields.end(),
        {absl::StrCat(level.verified), absl::StrCat(level.mismatches),
         absl::StrCat(level.verify_skipped), absl::StrCat(level.resent),
         CsvNumber(level.floor_rps), CsvNumber(FractionOfFloor(level))});
    absl::StrAppend(&csv, absl::StrJoin(fields, ","), "\n");
  }
  return csv;
}

// `value` right-aligned in `width` with `precision` decimals, or "-".
std::string Cell(std::optional<double> value, int width, int precision) {
  if (!value) return absl::StrFormat("%*s", width, "-");
  return absl::StrFormat("%*.*f", width, precision, *value);
}

std::string Text(const Report& report) {
  std::string text = absl::StrCat(
      "mix ", report.mix, "\n",
      absl::StrFormat("%-18s %9s %9s %7s %10s %9s %8s", "level", "requests",
                      "ok", "errors", "req/s", "GFLOP/s", "GB/s"));
  for (const LatencyField& field : kLatencies) {
    absl::StrAppend(&text,
                    absl::StrFormat(" %9s", absl::StrCat(field.title, " ms")));
  }
  absl::StrAppend(&text, absl::StrFormat(" %8s %6s %11s %8s\n", "verified",
                                         "wrong", "floor req/s", "of floor"));
  std::string notes;
  for (const LevelResult& level : report.levels) {
    const std::string name = LevelName(level.level);
    int64_t errors = 0;
    for (const auto& [code, calls] : level.errors) errors += calls;
    absl::StrAppend(&text,
                    absl::StrFormat("%-18s %9d %9d %7d", name, level.requests,
                                    level.ok, errors),
                    " ", Cell(level.throughput_rps, 10, 1), " ",
                    Cell(level.gflops, 9, 2), " ",
                    Cell(level.payload_gbps, 8, 3));
    for (const LatencyField& field : kLatencies) {
      absl::StrAppend(&text, " ", Cell(Latency(level, field.value), 9, 3));
    }
    absl::StrAppend(
        &text, absl::StrFormat(" %8d %6d", level.verified, level.mismatches),
        " ", Cell(level.floor_rps, 11, 1), " ",
        Cell(FractionOfFloor(level), 8, 3), "\n");
    if (errors > 0) {
      absl::StrAppend(
          &notes, name, ": errors ",
          absl::StrJoin(level.errors, ", ", absl::PairFormatter(" ")), "\n");
    }
    if (level.ok_by_peer.size() > 1) {
      absl::StrAppend(
          &notes, name, ": ok by server ",
          absl::StrJoin(level.ok_by_peer, ", ", absl::PairFormatter(" ")),
          "\n");
    }
    if (level.resent > 0) {
      absl::StrAppend(&notes, name, ": ", level.resent,
                      " calls sent again after their server was lost\n");
    }
    if (level.verify_skipped > 0) {
      absl::StrAppend(&notes, name, ": ", level.verify_skipped,
                      " answers due for a check went unchecked: the checkers "
                      "were busy\n");
    }
  }
  return text + notes;
}

}  // namespace

std::string FormatReport(const Report& report, OutputFormat format) {
  switch (format) {
    case OutputFormat::kJson:
      return Json(report);
    case OutputFormat::kCsv:
      return Csv(report);
    case OutputFormat::kText:
      break;
  }
  return Text(report);
}

}  // namespace matserve::load
