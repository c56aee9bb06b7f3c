// The parsers of --concurrency_range, --output and --arrival.
#include "client/load/options.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace matserve::load {

std::string LevelName(const Level& level) {
  return level.concurrency > 0 ? absl::StrCat("concurrency ", level.concurrency)
                               : absl::StrCat("rate ", level.rate, "/s");
}

absl::StatusOr<std::vector<int>> ParseConcurrencyRange(
    absl::string_view range) {
  const std::vector<absl::string_view> fields = absl::StrSplit(range, ':');
  int start = 0, end = 0, factor = 2;
  const auto bad = [&](absl::string_view problem) {
    return absl::InvalidArgumentError(
        absl::StrCat("--concurrency_range=", range, ": ", problem));
  };
  if (fields.size() < 2 || fields.size() > 3) {
    return bad("expected START:END[:FACTOR], e.g. 1:512:2");
  }
  if (!absl::SimpleAtoi(fields[0], &start) || start < 1) {
    return bad("START must be a whole number >= 1");
  }
  if (!absl::SimpleAtoi(fields[1], &end) || end < start) {
    return bad("END must be a whole number >= START");
  }
  if (fields.size() == 3 &&
      (!absl::SimpleAtoi(fields[2], &factor) || factor < 2)) {
    return bad("FACTOR must be a whole number >= 2");
  }
  std::vector<int> levels;
  for (int64_t level = start; level <= end; level *= factor) {
    levels.push_back(static_cast<int>(level));
  }
  return levels;
}

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view format) {
  if (format == "text") return OutputFormat::kText;
  if (format == "json") return OutputFormat::kJson;
  if (format == "csv") return OutputFormat::kCsv;
  return absl::InvalidArgumentError(
      absl::StrCat("--output=", format, ": expected text, json or csv"));
}

absl::StatusOr<Arrival> ParseArrival(absl::string_view arrival) {
  if (arrival == "constant") return Arrival::kConstant;
  if (arrival == "poisson") return Arrival::kPoisson;
  return absl::InvalidArgumentError(
      absl::StrCat("--arrival=", arrival, ": expected constant or poisson"));
}

}  // namespace matserve::load
