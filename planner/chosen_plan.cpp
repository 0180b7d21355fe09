#include "planner/chosen_plan.h"

#include <algorithm>
#include <cmath>

#include "planner/pinned_memory.h"

namespace stowage::planner {

using core::Tier;

namespace {

// pinned_memory_warning at the simulated host peak, for the whole machine
// (the summary's peak is per rank).
void add_pinned_warning(const ProfileInputs& in, const sim::Summary& summary, const core::Policy& policy,
                        std::vector<std::string>& out) {
  const core::Bytes cpu_peak = summary.peak_memory[static_cast<size_t>(Tier::kCpu)] *
                               core::ranks_in_scope(Tier::kCpu, in.machine.gpu_count);
  if (auto w = pinned_memory_warning(cpu_peak, in.machine, policy)) out.push_back(*w);
}

}  // namespace

std::vector<std::string> plan_warnings(const ProfileInputs& in, const PlanResult& r) {
  // The zero-infinity baseline writes to NVMe wherever there are drives, so
  // the assumed write rate is behind a figure shown whenever one was assumed.
  std::vector<std::string> out;
  if (in.assumed_nvme_write) out.push_back(*in.assumed_nvme_write);
  if (r.best) add_pinned_warning(in, *r.best->summary, r.best->candidate.policy, out);
  return out;
}

std::vector<std::string> simulation_warnings(const ProfileInputs& in, const core::Policy& policy,
                                             const core::Schedule& schedule, const sim::Summary& summary) {
  std::vector<std::string> out;
  if (auto w = write_rate_warning(in.assumed_nvme_write, schedule)) out.push_back(*w);
  add_pinned_warning(in, summary, policy, out);
  return out;
}

std::optional<std::string> recorded_step_note(const std::optional<core::PredictedFigures>& recorded,
                                              const sim::Summary& now) {
  if (!recorded) return std::nullopt;
  const double was = recorded->step_time.value(), is = now.step_time.value();
  if (std::abs(was - is) <= 1e-9 * std::max(std::abs(is), 1e-12)) return std::nullopt;
  return "the plan records " + core::format_seconds(recorded->step_time) + " a step (bound by " +
         recorded->bounding_lane + "); this Stowage predicts " + core::format_seconds(now.step_time) +
         " (bound by " + std::string(core::to_string(now.bounding_lane)) +
         "): its cost model changed since the plan was written";
}

std::vector<std::string> predicted_trace_warnings(const ProfileInputs& in, const core::Policy& policy,
                                                  const core::Schedule& schedule, const sim::Summary& summary,
                                                  const std::optional<core::PredictedFigures>& recorded) {
  std::vector<std::string> out = simulation_warnings(in, policy, schedule, summary);
  if (auto note = recorded_step_note(recorded, summary)) out.push_back(std::move(*note));
  return out;
}

std::vector<std::string> evaluation_warnings(const ProfileInputs& in, const Evaluation& e) {
  std::vector<std::string> out;
  if (in.assumed_nvme_write && e.nvme_bytes_written.count() > 0) out.push_back(*in.assumed_nvme_write);
  if (e.summary) add_pinned_warning(in, *e.summary, e.candidate.policy, out);
  return out;
}

std::optional<std::string> write_rate_warning(const std::optional<std::string>& assumed_nvme_write,
                                              const core::Schedule& schedule) {
  const bool writes_nvme =
      std::ranges::any_of(schedule.ops, [](const core::Op& op) { return op.lane == core::Lane::kNvmeWrite; });
  return writes_nvme ? assumed_nvme_write : std::nullopt;
}

core::PredictedFigures predicted_figures(const sim::Summary& s, int ranks) {
  core::PredictedFigures f{.step_time = s.step_time, .tokens_per_second = s.tokens_per_second,
                           .model_tflops_per_gpu = s.model_flops_per_second_per_gpu / 1e12,
                           .bounding_lane = std::string(core::to_string(s.bounding_lane))};
  for (Tier t : core::kAllTiers) {
    f.peak_memory[static_cast<size_t>(t)] = s.peak_memory[static_cast<size_t>(t)] * core::ranks_in_scope(t, ranks);
  }
  return f;
}

core::PlanFile to_plan_file(const ProfileInputs& in, const Evaluation& chosen) {
  // The plan may have changed the micro-batch or checkpointing: the policy
  // records checkpointing; the training shape goes with the profile name.
  return {.machine = in.machine_name, .model = in.model_name, .training = in.training_name,
          .policy = chosen.candidate.policy, .predicted = predicted_figures(*chosen.summary, in.machine.gpu_count)};
}

}  // namespace stowage::planner
