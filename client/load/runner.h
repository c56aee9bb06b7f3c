// LoadGenerator: channels to the targets, and one load level at a time run on
// them, closed loop or open loop, measured into a LevelResult.
#ifndef MATSERVE_CLIENT_LOAD_RUNNER_H_
#define MATSERVE_CLIENT_LOAD_RUNNER_H_

#include <grpcpp/generic/generic_stub.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "client/load/options.h"
#include "client/load/stats.h"
#include "client/load/workload.h"

namespace matserve::load {

// What one level measured. A call counts when it completes inside the window
// (closed loop for a --duration), or when it was sent (scheduled, open loop)
// after the warmup, the first --requests of them with --requests.
struct LevelResult {
  Level level;
  double seconds = 0;  // the measured window
  int64_t requests = 0;
  int64_t ok = 0;
  std::map<std::string, int64_t> errors;  // status code name -> calls
  // The OK calls by the server that answered them (gRPC's peer address,
  // "ipv4:10.0.0.1:50051"), as round_robin spread them.
  std::map<std::string, int64_t> ok_by_peer;
  double throughput_rps = 0;  // OK answers per second
  double gflops = 0;          // of the OK multiplies
  double payload_gbps = 0;    // matrix data of the OK calls, both ways, 1e9 B/s
  std::optional<LatencySummary> latency;  // of the OK calls
  // Every --verify_every-th OK answer of the level, the warmup's included, is
  // checked.
  int64_t verified = 0;
  int64_t mismatches = 0;
  int64_t verify_skipped = 0;  // due for a check while the checkers were busy
  // Calls sent again after gRPC gave up on them with UNAVAILABLE or CANCELLED
  // (a replica lost while it sent the answer; client.h, kMaxResends), the
  // warmup's included. A call counts once, however often it was sent.
  int64_t resent = 0;
  std::string first_mismatch;  // what was wrong with the first wrong answer
  std::optional<double> floor_rps;  // the same level on the transport floor
};

class LoadGenerator {
 public:
  // `channels` channels (MakeChannel) to `target`, each with connections of
  // its own to every address the target has; waits up to `connect_timeout`
  // for every channel to connect (to one address at least). Calls take turns
  // over the channels, and each channel sends them round-robin over the
  // addresses, retrying UNAVAILABLE on the next one.
  static absl::StatusOr<std::unique_ptr<LoadGenerator>> Connect(
      const std::string& target, int channels, int max_message_bytes,
      absl::Duration connect_timeout);

  // Runs `level` of `workload` (prepared verifiable if options.verify_every >
  // 0) and returns what it measured. Progress lines on stderr start with
  // `label`.
  LevelResult Run(const Workload& workload, const Level& level,
                  const RunOptions& options, absl::string_view label) const;

 private:
  explicit LoadGenerator(std::vector<std::unique_ptr<grpc::GenericStub>> stubs)
      : stubs_(std::move(stubs)) {}

  std::vector<std::unique_ptr<grpc::GenericStub>> stubs_;  // one per channel
};

}  // namespace matserve::load

#endif  // MATSERVE_CLIENT_LOAD_RUNNER_H_
