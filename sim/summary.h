// What a user reads from a simulated (or measured) step: step time,
// throughput, how busy each lane was, how long the GPU waited on data, the
// critical path and the lane that bounds the step.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule.h"
#include "core/chrome_trace.h"
#include "core/timeline.h"
#include "sim/step_floor.h"

namespace stowage::sim {

struct Summary {
  // Steady-state step time: with three or more steps, the mean of the last
  // two intervals between first forward ops of consecutive steps (a pipeline
  // may alternate between two periods); with two, the one interval; with one
  // step, its makespan. Work a step leaves running (NVMe writes, a delayed
  // optimizer) shows in the next steps' waits, so a few steps are needed for
  // a steady state (core::steady_state_steps). Lane busy shares and exposed
  // transfer time are measured over the same window. The step is never
  // shorter than the step's work on its busiest resource or lane
  // (sim/step_floor.h): a window shorter than that is work falling behind.
  core::Seconds step_time;
  core::Seconds window_step_time;  // what the window alone measured
  // Set when the window read shorter than the floor (by more than 0.1 %,
  // past rounding), so that the step time is the floor: the lane whose
  // work per step falls behind in the steps simulated and would hold up a
  // longer run.
  std::optional<core::Lane> falls_behind;
  core::SimTime window_start = 0;  // the last step of the window: [window_start, window_start + step_time)
  double tokens_per_second = 0;
  // Model FLOP/s per GPU with the 6·N·T convention (Kaplan et al. 2020):
  // 6 x parameters x tokens per step / step time / GPUs.
  double model_flops_per_second_per_gpu = 0;
  std::array<double, core::kLaneCount> lane_busy{};  // share of the step each lane was busy
  // Time within the step the GPU compute lane sat idle while its next op
  // waited for a transfer, an NVMe read or the optimizer.
  core::Seconds exposed_transfer_time;
  std::vector<core::OpId> critical_path;  // from the first op to the last
  // The busiest lane within the step: the resource that, made faster, would
  // shorten it first (ties go to the lane with more time on the critical path).
  core::Lane bounding_lane = core::Lane::kGpuCompute;
  std::array<core::Bytes, 3> peak_memory;  // per rank, by Tier
};

// How a predicted trace of this summary is labelled: source "predicted",
// and its step time and any lane falling behind in otherData, so that the
// GUI's ruler shows the step `stowage simulate` prints; and the machine it
// was simulated on, so that a comparison can tell another machine's run.
[[nodiscard]] core::TraceOptions predicted_trace_options(const Summary& summary, std::string title,
                                                         const core::MachineSpec& machine);

// `peak` is the engine's per-rank peak memory by tier; `floor` the step's
// least length on the machine simulated (none: no floor).
Summary summarize(const core::Schedule& schedule, const core::Timeline& timeline,
                  const std::array<core::Bytes, 3>& peak, const StepFloor& floor = {});

}  // namespace stowage::sim
