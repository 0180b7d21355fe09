// A small schedule with every lane kind in use (tiny-gpt, ZeRO-Infinity's
// placement: parameters in host RAM, optimizer states on NVMe, the CPU
// optimizer), simulated on a bundled machine, for the calibration tests.
#pragma once

#include "core/lower.h"
#include "sim/simulator.h"
#include "tests/core/test_profiles.h"

namespace stowage::calibration::testing {

struct Simulated {
  core::MachineSpec machine;
  core::Schedule schedule;
  core::Timeline timeline;
};

inline Simulated simulated(const core::CostParameters& params, int steps = 3,
                           core::StandardPlacement which = core::StandardPlacement::kZeroInfinity,
                           bool delayed_update = false) {
  using core::testing::bundled;
  using core::testing::must;
  Simulated s{.machine = must(bundled().machine("workstation-24gb-1nvme")), .schedule = {}, .timeline = {}};
  const core::TrainingSpec training = must(bundled().training("tiny"));
  const core::Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  core::Policy policy = core::policy_for(core::standard_placement(which, 1), w, training);
  policy.delayed_update = delayed_update;
  s.schedule = must(core::lower(policy, s.machine, w, training, {.steps = steps}));
  s.timeline = sim::simulate(s.schedule, s.machine, {.params = params}).timeline;
  return s;
}

}  // namespace stowage::calibration::testing
