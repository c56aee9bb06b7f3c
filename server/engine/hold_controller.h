// HoldController: decides, epoch by epoch, whether free workers hold batches
// open for company while their device is busy, by measuring what holding does
// to the rate at which the engine serves requests.
#ifndef MATSERVE_SERVER_ENGINE_HOLD_CONTROLLER_H_
#define MATSERVE_SERVER_ENGINE_HOLD_CONTROLLER_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace matserve::engine {

// Why: holding a batch for company delays its answers. Where the callers are
// few and wait for their answers (concurrency 16 against a 0.4 ms round trip),
// the delay slows every caller, and with them the rate at which the engine
// serves requests (by 15-27% on the H200). Where many calls wait in the
// transport anyway (concurrency >= 128 at 64^3), the same delay costs nothing
// and the larger batches save device and server time. Holding can also slow
// the engine itself: while one worker stages, computes and answers a large
// batch, the workers that hold theirs for it do nothing (256^3 at concurrency
// 256). The engine cannot see the callers or the transport's queues; what it
// can measure, and what tells these cases apart, is its own rate of service
// with holds against without.
//
// How: time is cut into epochs of equal length. Most run the preferred mode;
// every `probe_every` epochs one runs the other mode (a probe). The requests
// that workers take into batches during a probe, over the mean of those of the
// preferred epochs just before and after it, give one sample of r = (rate
// served holding) / (rate served not holding); the controller keeps an
// exponentially weighted mean of log r and prefers holding while
// r >= 1 - `margin`. The first `settle` of every epoch is not counted: a
// change of mode first fills or empties the held batches. Samples from epochs
// with fewer than `min_served` requests (an idle or nearly idle server) are
// skipped. Until the first sample it does not hold.
struct HoldControllerOptions {
  absl::Duration epoch = absl::Milliseconds(50);
  absl::Duration settle = absl::Milliseconds(5);
  // Probe every this many preferred epochs while the estimate lies within
  // `sure_distance` of the threshold (or there is none yet), else every
  // `probe_every_sure`: a probe costs what the worse mode costs, so clear
  // cases probe rarely.
  int probe_every_unsure = 4;
  int probe_every_sure = 16;
  // Holding is preferred while r >= 1 - margin: batches are worth a few
  // percent of the rate of service, not more.
  double margin = 0.05;
  // In log r: how far from the threshold the estimate is taken as settled.
  double sure_distance = 0.04;
  // Weight of each new sample in the mean of log r.
  double weight = 0.5;
  int64_t min_served = 20;
};

// Not thread-safe: the engine calls it under its mutex. Times must not go
// backwards.
class HoldController {
 public:
  HoldController(HoldControllerOptions options, absl::Time start);

  // Moves to the epoch that holds `now`.
  void Advance(absl::Time now);

  // Counts `requests` taken into a batch at `now`.
  void Served(absl::Time now, int64_t requests);

  // Whether the epoch that holds `now` is one in which free workers hold
  // batches for company.
  bool Holding(absl::Time now);

  // Set when the preferred mode changed (and only then): a line for the
  // server's log that says how and why. Clears it.
  std::string TakeChange();

  // The current estimate of r (1 until the first sample), and whether there
  // has been one.
  double HoldingToNotRatio() const;
  bool Measured() const { return measured_; }

 private:
  void FinishEpoch();
  void Sample(double log_ratio);
  int ProbeEvery() const;
  bool PrefersHolding() const;

  const HoldControllerOptions options_;
  absl::Time epoch_start_;
  int64_t served_ = 0;        // in the current epoch, after `settle`
  bool probing_ = false;      // the current epoch runs the other mode
  bool probe_holds_ = false;  // ... which is holding
  int since_probe_ = 0;       // preferred epochs since the last probe
  int64_t before_ = -1;       // served in the preferred epoch before a probe
  int64_t probe_ = -1;        // served in the last probe, awaiting "after"
  bool measured_ = false;
  double log_ratio_ = 0;  // mean of log r, once measured_
  std::string change_;
};

}  // namespace matserve::engine

#endif  // MATSERVE_SERVER_ENGINE_HOLD_CONTROLLER_H_
