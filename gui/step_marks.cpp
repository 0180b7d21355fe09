#include "gui/step_marks.h"

#include <algorithm>

#include "core/measured_steps.h"

namespace stowage::gui {
namespace {

constexpr int kMostSteps = 1'000'000;  // step numbers beyond this (not Stowage's) are not marked

// First forward start and first start of any op, per step.
std::vector<StepMarks::Step> step_starts(const TraceModel& model) {
  struct Starts {
    std::optional<SimTime> forward, any;
  };
  std::vector<Starts> by_step;
  for (const TraceOp& op : model.ops) {
    if (op.step < 0 || op.step >= kMostSteps) continue;
    if (static_cast<size_t>(op.step) >= by_step.size()) by_step.resize(static_cast<size_t>(op.step) + 1);
    Starts& s = by_step[static_cast<size_t>(op.step)];
    s.any = s.any ? std::min(*s.any, op.start) : op.start;
    if (op.kind == core::OpKind::kForward) s.forward = s.forward ? std::min(*s.forward, op.start) : op.start;
  }
  std::vector<StepMarks::Step> out;
  for (size_t step = 0; step < by_step.size(); ++step) {
    const Starts& s = by_step[step];
    if (s.any) out.push_back({.step = static_cast<int>(step), .start = s.forward.value_or(*s.any)});
  }
  std::ranges::sort(out, {}, &StepMarks::Step::start);
  return out;
}

// The steps after the first, as `stowage run` and `compare` take them.
std::optional<SteadyWindow> measured_window(const TraceModel& model) {
  core::StepEnds ends;
  for (const TraceOp& op : model.ops) {
    if (op.step >= 0 && op.step < kMostSteps) ends.add(op.step, op.end);
  }
  const std::vector<core::MeasuredStep> steps = ends.steps(model.begin_time());
  if (steps.size() < 2) return std::nullopt;
  std::vector<SimTime> lengths;
  for (const core::MeasuredStep& step : steps) lengths.push_back(step.length);
  return SteadyWindow{.begin = steps.front().end,
                      .end = steps.back().end,
                      .steps = static_cast<int>(steps.size()) - 1,
                      .step_time = core::steady_step_length(lengths),
                      .median = true};
}

// The last two step intervals, as `stowage simulate` takes them.
SteadyWindow simulated_window(const std::vector<StepMarks::Step>& steps) {
  const auto n = static_cast<int>(steps.size());
  const int window = n >= 3 ? 2 : 1;
  SteadyWindow w{.begin = steps[static_cast<size_t>(n - 1 - window)].start,
                 .end = steps[static_cast<size_t>(n - 1)].start,
                 .steps = window};
  w.step_time = (w.end - w.begin) / window;
  return w;
}

}  // namespace

StepMarks step_marks(const TraceModel& model, const LaneBusy& busy) {
  StepMarks out;
  out.steps = step_starts(model);
  if (out.steps.size() < 2) return out;
  std::optional<SteadyWindow> w =
      model.info.source == "measured" ? measured_window(model) : simulated_window(out.steps);
  if (!w) return out;
  for (const core::Lane lane : core::kAllLanes) {
    const double share = busy.by_lane[static_cast<size_t>(lane)].share_in(w->begin, w->end);
    if (share > w->bound_share) w->bound = lane, w->bound_share = share;
  }
  // The simulator's step, where a lane fell behind in the steps simulated.
  const TraceInfo& info = model.info;
  if (!w->median && info.steady_step && *info.steady_step > w->step_time) {
    w->step_time = *info.steady_step;
    w->falls_behind = info.falls_behind.has_value();
    if (info.falls_behind) {
      w->bound = *info.falls_behind;
      w->bound_share = busy.by_lane[static_cast<size_t>(w->bound)].share_in(w->begin, w->end);
    }
  }
  out.steady = w;
  return out;
}

}  // namespace stowage::gui
