// matserve-load's report of known results: the JSON keys and values, the CSV
// row, and the text table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "client/load/report.h"

namespace matserve::load {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;

LevelResult Measured() {
  LevelResult result;
  result.level = {.concurrency = 16};
  result.seconds = 2;
  result.requests = 1003;
  result.ok = 1000;
  result.errors = {{"DEADLINE_EXCEEDED", 2}, {"UNAVAILABLE", 1}};
  result.ok_by_peer = {{"ipv4:10.0.0.1:50051", 600},
                       {"ipv4:10.0.0.2:50051", 400}};
  result.throughput_rps = 500;
  result.gflops = 1.25;
  result.payload_gbps = 0.5;
  result.latency = LatencySummary{1, 2, 3, 4, 5, 6.5};
  result.verified = 10;
  result.mismatches = 1;
  result.verify_skipped = 2;
  result.resent = 4;
  result.floor_rps = 2000;
  return result;
}

TEST(FormatReport, JsonObjectWithEveryKey) {
  EXPECT_EQ(
      FormatReport({"multiply:64x64x64", {Measured()}, false},
                   OutputFormat::kJson),
      "{\"mode\": \"closed\", \"concurrency\": 16, \"rate\": null, \"mix\": "
      "\"multiply:64x64x64\", \"duration_s\": 2, \"requests\": 1003, \"ok\": "
      "1000, \"errors\": {\"DEADLINE_EXCEEDED\": 2, \"UNAVAILABLE\": 1}, "
      "\"ok_by_peer\": {\"ipv4:10.0.0.1:50051\": 600, "
      "\"ipv4:10.0.0.2:50051\": 400}, \"throughput_rps\": 500, \"gflops\": "
      "1.25, \"payload_gbps\": 0.5, "
      "\"latency_ms\": {\"p50\": 1, \"p90\": 2, \"p95\": 3, \"p99\": 4, "
      "\"p999\": 5, \"max\": 6.5}, \"verified\": 10, \"mismatches\": 1, "
      "\"verify_skipped\": 2, \"resent\": 4, \"floor_rps\": 2000, "
      "\"fraction_of_floor\": "
      "0.25}\n");
}

TEST(FormatReport, JsonNullsWhereNothingApplies) {
  LevelResult open;
  open.level = {.rate = 250};
  const std::string json =
      FormatReport({"transpose:8x8", {open}, false}, OutputFormat::kJson);
  EXPECT_THAT(json, HasSubstr("\"mode\": \"open\", \"concurrency\": null, "
                              "\"rate\": 250,"));
  EXPECT_THAT(json, HasSubstr("\"errors\": {}, \"ok_by_peer\": {},"));
  EXPECT_THAT(json, HasSubstr("\"latency_ms\": {\"p50\": null, \"p90\": null, "
                              "\"p95\": null, \"p99\": null, \"p999\": null, "
                              "\"max\": null}"));
  EXPECT_THAT(json,
              HasSubstr("\"floor_rps\": null, \"fraction_of_floor\": null}"));
}

TEST(FormatReport, SweepIsAJsonList) {
  LevelResult second = Measured();
  second.level.concurrency = 32;
  const std::string json = FormatReport(
      {"multiply:8x8x8", {Measured(), second}, true}, OutputFormat::kJson);
  EXPECT_EQ(json.front(), '[');
  EXPECT_THAT(json, HasSubstr("\"concurrency\": 16,"));
  EXPECT_THAT(json, HasSubstr("},\n  {\"mode\": \"closed\", \"concurrency\": "
                              "32,"));
  EXPECT_THAT(json, EndsWith("}\n]\n"));
  EXPECT_EQ(
      FormatReport({"multiply:8x8x8", {Measured()}, true}, OutputFormat::kJson)
          .front(),
      '[')
      << "a sweep of one level is still a list";
}

TEST(FormatReport, CsvHeaderAndRow) {
  EXPECT_EQ(
      FormatReport({"multiply:64x64x64,transpose:8x8:0.5", {Measured()}, false},
                   OutputFormat::kCsv),
      "mode,concurrency,rate,mix,duration_s,requests,ok,errors,ok_by_peer,"
      "throughput_rps,gflops,payload_gbps,p50_ms,p90_ms,p95_ms,p99_ms,p999_ms,"
      "max_ms,verified,mismatches,verify_skipped,resent,floor_rps,"
      "fraction_of_floor\n"
      "closed,16,,\"multiply:64x64x64,transpose:8x8:0.5\",2,1003,1000,"
      "DEADLINE_EXCEEDED:2;UNAVAILABLE:1,"
      "ipv4:10.0.0.1:50051=600;ipv4:10.0.0.2:50051=400,500,1.25,0.5,1,2,3,4,"
      "5,6.5,10,1,2,4,2000,0.25\n");
}

TEST(FormatReport, TextTableRowAndNotes) {
  const std::string text = FormatReport(
      {"multiply:64x64x64", {Measured()}, false}, OutputFormat::kText);
  EXPECT_THAT(text, HasSubstr("mix multiply:64x64x64\n"));
  EXPECT_THAT(text, HasSubstr("p99.9 ms"));
  EXPECT_THAT(text, HasSubstr("concurrency 16          1003      1000       3"
                              "      500.0      1.25    0.500     1.000"));
  EXPECT_THAT(text, HasSubstr("2000.0    0.250\n"));
  EXPECT_THAT(text, HasSubstr("concurrency 16: errors DEADLINE_EXCEEDED 2, "
                              "UNAVAILABLE 1\n"));
  EXPECT_THAT(text, HasSubstr("concurrency 16: 2 answers due for a check went "
                              "unchecked"));
  EXPECT_THAT(text, HasSubstr("concurrency 16: 4 calls sent again after their "
                              "server was lost\n"));
  EXPECT_THAT(text, HasSubstr("concurrency 16: ok by server "
                              "ipv4:10.0.0.1:50051 600, ipv4:10.0.0.2:50051 "
                              "400\n"));
}

}  // namespace
}  // namespace matserve::load
