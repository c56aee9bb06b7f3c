// matserve-cli: sends one random Multiply or Transpose, checks the answer
// locally, prints the time; or checks the server's health (grpc.health.v1).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/client.h"
#include "client/matrix.h"
#include "client/reference.h"

ABSL_FLAG(std::string, target, "localhost:50051",
          "server address: host:port, a list host:port,host:port (calls go "
          "round-robin), or a gRPC target such as dns:///name:port");
ABSL_FLAG(uint32_t, m, 512, "multiply: rows of A and C");
ABSL_FLAG(uint32_t, k, 512, "multiply: cols of A, rows of B");
ABSL_FLAG(uint32_t, n, 512, "multiply: cols of B and C");
ABSL_FLAG(uint32_t, rows, 1024, "transpose: rows of the input");
ABSL_FLAG(uint32_t, cols, 1024, "transpose: cols of the input");
ABSL_FLAG(absl::Duration, timeout, absl::Seconds(60), "deadline of the call");
ABSL_FLAG(uint64_t, seed, 1, "seed of the random inputs");
ABSL_FLAG(bool, verify, true,
          "check the answer against a local float64 reference");
ABSL_FLAG(std::string, service, "",
          "health: the service to ask about (\"\" for the server as a whole, "
          "or matserve.v1.MatrixService)");

namespace matserve {
namespace {

constexpr char kUsage[] =
    "matserve-cli multiply [--m M --k K --n N] | transpose [--rows R --cols C] "
    "| health [--service=NAME] [--target=host:port]\n"
    "multiply, transpose: sends random matrices, checks the answer locally "
    "and prints the time.\n"
    "health: exits 0 when the server (or --service) reports SERVING, 1 "
    "otherwise.";

int Fail(const absl::Status& status) {
  std::cerr << "matserve-cli: " << absl::StatusCodeToString(status.code())
            << ": " << status.message() << std::endl;
  return 1;
}

int Multiply(const Client& client, std::mt19937_64& rng) {
  const uint32_t m = absl::GetFlag(FLAGS_m), k = absl::GetFlag(FLAGS_k),
                 n = absl::GetFlag(FLAGS_n);
  const Matrix a = RandomMatrix(m, k, rng);
  const Matrix b = RandomMatrix(k, n, rng);
  const absl::Time start = absl::Now();
  absl::StatusOr<Matrix> c =
      client.Multiply(a, b, absl::GetFlag(FLAGS_timeout));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!c.ok()) return Fail(c.status());
  std::cout << absl::StrFormat(
      "multiply %ux%ux%u on %s: %.3f ms, %.2f GFLOP/s end to end", m, k, n,
      absl::GetFlag(FLAGS_target), seconds * 1e3,
      2.0 * m * k * n / seconds * 1e-9);
  if (!absl::GetFlag(FLAGS_verify)) {
    std::cout << std::endl;
    return 0;
  }
  const double error = RelativeError(c->values, ReferenceMultiply(a, b));
  const bool ok = error <= kMultiplyTolerance;
  std::cout << absl::StrFormat("; relative error %.3g (limit %.0e): %s", error,
                               kMultiplyTolerance, ok ? "OK" : "WRONG")
            << std::endl;
  return ok ? 0 : 1;
}

int Transpose(const Client& client, std::mt19937_64& rng) {
  const uint32_t rows = absl::GetFlag(FLAGS_rows),
                 cols = absl::GetFlag(FLAGS_cols);
  const Matrix input = RandomMatrix(rows, cols, rng);
  const absl::Time start = absl::Now();
  absl::StatusOr<Matrix> output =
      client.Transpose(input, absl::GetFlag(FLAGS_timeout));
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!output.ok()) return Fail(output.status());
  std::cout << absl::StrFormat("transpose %ux%u on %s: %.3f ms", rows, cols,
                               absl::GetFlag(FLAGS_target), seconds * 1e3);
  if (!absl::GetFlag(FLAGS_verify)) {
    std::cout << std::endl;
    return 0;
  }
  bool exact = output->rows == cols && output->cols == rows;
  for (uint32_t r = 0; exact && r < rows; ++r) {
    for (uint32_t c = 0; exact && c < cols; ++c) {
      const float want = input.at(r, c), got = output->at(c, r);
      exact = std::memcmp(&want, &got, sizeof(float)) == 0;
    }
  }
  std::cout << (exact ? "; bit-exact: OK" : "; not the exact transpose: WRONG")
            << std::endl;
  return exact ? 0 : 1;
}

int Health(const Client& client) {
  const std::string service = absl::GetFlag(FLAGS_service);
  if (absl::Status health =
          client.CheckHealth(service, absl::GetFlag(FLAGS_timeout));
      !health.ok()) {
    return Fail(health);
  }
  std::cout << absl::GetFlag(FLAGS_target) << ": "
            << (service.empty() ? "the server" : service) << " is SERVING"
            << std::endl;
  return 0;
}

}  // namespace
}  // namespace matserve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(matserve::kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  const std::string command = args.size() == 2 ? args[1] : "";
  if (command != "multiply" && command != "transpose" && command != "health") {
    std::cerr << matserve::kUsage << std::endl;
    return 2;
  }
  absl::StatusOr<matserve::Client> client =
      matserve::Client::Connect(absl::GetFlag(FLAGS_target));
  if (!client.ok()) {
    std::cerr << "matserve-cli: --target=" << absl::GetFlag(FLAGS_target)
              << ": " << client.status().message() << std::endl;
    // A malformed target is a usage error; a name that does not resolve is
    // a server that cannot be reached.
    return client.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (command == "health") return matserve::Health(*client);
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  return command == "multiply" ? matserve::Multiply(*client, rng)
                               : matserve::Transpose(*client, rng);
}
