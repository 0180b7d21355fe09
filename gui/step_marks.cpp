#include "gui/step_marks.h"

#include <algorithm>
#include <map>

namespace stowage::gui {
namespace {

// First forward start and first start of any op, per step.
std::vector<StepMarks::Step> step_starts(const TraceModel& model) {
  std::map<int, std::pair<std::optional<SimTime>, SimTime>> by_step;  // step -> (forward, any)
  for (const TraceOp& op : model.ops) {
    auto [it, fresh] = by_step.try_emplace(op.step, std::nullopt, op.start);
    auto& [forward, any] = it->second;
    if (!fresh) any = std::min(any, op.start);
    if (op.kind == core::OpKind::kForward) forward = forward ? std::min(*forward, op.start) : op.start;
  }
  std::vector<StepMarks::Step> out;
  for (const auto& [step, starts] : by_step)
    out.push_back({.step = step, .start = starts.first.value_or(starts.second)});
  std::ranges::sort(out, {}, &StepMarks::Step::start);
  return out;
}

}  // namespace

StepMarks step_marks(const TraceModel& model, const LaneBusy& busy) {
  StepMarks out;
  out.steps = step_starts(model);
  const auto n = static_cast<int>(out.steps.size());
  if (n < 2) return out;
  const int window = n >= 3 ? 2 : 1;
  SteadyWindow w{.begin = out.steps[static_cast<size_t>(n - 1 - window)].start,
                 .end = out.steps[static_cast<size_t>(n - 1)].start,
                 .steps = window};
  w.step_time = (w.end - w.begin) / window;
  for (const core::Lane lane : core::kAllLanes) {
    const double share = busy.by_lane[static_cast<size_t>(lane)].share_in(w.begin, w.end);
    if (share > w.bound_share) w.bound = lane, w.bound_share = share;
  }
  out.steady = w;
  return out;
}

}  // namespace stowage::gui
