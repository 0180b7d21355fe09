// Inputs for the GUI tests, made in-process: a small schedule lowered and
// simulated on the bundled profiles (as the golden traces are), its trace
// text, and synthetic models of any size.
#pragma once

#include <sstream>
#include <string>

#include "core/chrome_trace.h"
#include "core/lower.h"
#include "gui/trace_model.h"
#include "sim/simulator.h"
#include "tests/core/test_profiles.h"

namespace stowage::gui::testing {

struct Simulated {
  core::Schedule schedule;
  core::Timeline timeline;
  sim::Summary summary;
  core::MachineSpec machine;
};

// tiny-gpt, ZeRO-Offload, on the workstation, two steps: the scenario of
// tests/data/golden/tiny_gpt_zero_offload.json.
inline Simulated tiny_simulated(core::StandardPlacement which = core::StandardPlacement::kZeroOffload,
                                const std::string& machine_name = "workstation-24gb-1nvme") {
  using core::testing::bundled;
  using core::testing::must;
  const core::MachineSpec machine = must(bundled().machine(machine_name));
  const core::TrainingSpec training = must(bundled().training("tiny"));
  const core::Workload w(must(bundled().model("tiny-gpt")), training.sequence_length);
  const core::Policy policy =
      core::policy_for(core::standard_placement(which, machine.gpu_count), w, training);
  core::Schedule s = must(core::lower(policy, machine, w, training, {.steps = 2}));
  sim::Prediction p = sim::simulate(s, machine);
  return {.schedule = std::move(s),
          .timeline = std::move(p.timeline),
          .summary = std::move(p.summary),
          .machine = machine};
}

inline std::string trace_text(const Simulated& s, const std::string& source = "predicted") {
  std::ostringstream out;
  core::write_chrome_trace(s.schedule, s.timeline, {.title = "tiny-gpt", .source = source}, out);
  return out.str();
}

// `n` ops on `tracks` tracks, each `width` ns long with `gap` ns between,
// op i depending on op i - tracks (the previous op of its track).
inline TraceModel synthetic_model(int n, int tracks, SimTime width, SimTime gap) {
  TraceModel m;
  for (int t = 0; t < tracks; ++t) {
    m.tracks.push_back({.name = "track " + std::to_string(t),
                        .lane = core::kAllLanes[static_cast<size_t>(t) % core::kLaneCount]});
  }
  m.ops.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const int t = i % tracks;
    const SimTime start = static_cast<SimTime>(i / tracks) * (width + gap);
    const core::Lane lane = m.tracks[static_cast<size_t>(t)].lane;
    m.ops.push_back({.id = i,
                     .track = t,
                     .category = category_of(core::OpKind::kForward, lane),
                     .lane = lane,
                     .start = start,
                     .end = start + width,
                     .name = m.add_text("op " + std::to_string(i))});
    m.tracks[static_cast<size_t>(t)].ops.push_back(i);
    if (i >= tracks) m.set_deps(i, {i - tracks});
  }
  m.memory[0] = {{.time = 0, .bytes = core::Bytes(1000)}, {.time = width, .bytes = core::Bytes(3000)}};
  m.finish();
  return m;
}

}  // namespace stowage::gui::testing
