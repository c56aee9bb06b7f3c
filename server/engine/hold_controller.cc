// HoldController: epochs, probes and the running estimate of what holding does
// to the rate of service.
#include "server/engine/hold_controller.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_format.h"

namespace matserve::engine {
namespace {

// An idle server serves nothing for long stretches; past this many empty
// epochs the controller starts afresh instead of counting through them.
constexpr int64_t kMostEpochsToCatchUp = 64;

}  // namespace

HoldController::HoldController(HoldControllerOptions options, absl::Time start)
    : options_(options), epoch_start_(start) {}

void HoldController::Served(absl::Time now, int64_t requests) {
  Advance(now);
  if (now - epoch_start_ >= options_.settle) served_ += requests;
}

bool HoldController::Holding(absl::Time now) {
  Advance(now);
  return probing_ ? probe_holds_ : PrefersHolding();
}

std::string HoldController::TakeChange() { return std::exchange(change_, ""); }

double HoldController::HoldingToNotRatio() const {
  return measured_ ? std::exp(log_ratio_) : 1.0;
}

void HoldController::Advance(absl::Time now) {
  if (now < epoch_start_ + options_.epoch) return;
  if (now - epoch_start_ >= kMostEpochsToCatchUp * options_.epoch) {
    FinishEpoch();
    before_ = -1;  // no pair spans the gap
    probe_ = -1;
    epoch_start_ = now;
    return;
  }
  while (now >= epoch_start_ + options_.epoch) {
    FinishEpoch();
    epoch_start_ += options_.epoch;
  }
}

void HoldController::FinishEpoch() {
  const int64_t count = std::exchange(served_, 0);
  if (probing_) {
    probing_ = false;
    probe_ = count;
    return;  // the next epoch is a preferred one: the probe's "after"
  }
  if (probe_ >= 0 && before_ >= 0 &&
      std::min({before_, probe_, count}) >= options_.min_served) {
    // Equal epochs: counts stand for rates.
    const double log_ratio = std::log(probe_ / ((before_ + count) / 2.0));
    Sample(probe_holds_ ? log_ratio : -log_ratio);
  }
  probe_ = -1;
  before_ = count;
  if (++since_probe_ >= ProbeEvery()) {
    since_probe_ = 0;
    probing_ = true;
    probe_holds_ = !PrefersHolding();
  }
}

void HoldController::Sample(double log_ratio) {
  const bool held = PrefersHolding();
  if (measured_) {
    log_ratio_ += options_.weight * (log_ratio - log_ratio_);
  } else {
    log_ratio_ = log_ratio;
    measured_ = true;
  }
  if (PrefersHolding() != held) {
    change_ = absl::StrFormat(
        "%s: requests served at %.2fx the rate with holds as without "
        "(holding while >= %.2fx)",
        PrefersHolding() ? "holding batches for company while the device is "
                           "busy"
                         : "holding batches only while every other worker is "
                           "busy",
        HoldingToNotRatio(), 1 - options_.margin);
  }
}

int HoldController::ProbeEvery() const {
  const double threshold = std::log(1 - options_.margin);
  const bool sure =
      measured_ && std::abs(log_ratio_ - threshold) >= options_.sure_distance;
  return sure ? options_.probe_every_sure : options_.probe_every_unsure;
}

bool HoldController::PrefersHolding() const {
  return measured_ && log_ratio_ >= std::log(1 - options_.margin);
}

}  // namespace matserve::engine
