// Issue 11's check: every hand-written plan that the simulator says fits is
// matched or beaten by what `stowage plan` finds on the same inputs. The
// hand plans mix tiers layer by layer, put parameters on NVMe, split the
// optimizer states over all three tiers, and turn the knobs the search
// turns (delayed update, prefetch depth, checkpointing).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "planner/candidate.h"
#include "planner/search.h"
#include "tests/core/test_profiles.h"

namespace stowage::planner {
namespace {

using core::OptimizerDevice;
using core::PartitionPolicy;
using core::Tier;
using core::testing::bundled;
using core::testing::must;

// The search skips candidates that could beat its best by less than its
// resolution (planner/search.h: the plan is within 0.5 % of the best in the
// space searched), so "matched" allows that much.
constexpr double kResolution = 0.005;

struct HandPlan {
  std::string name;
  // Partition j of n (in model order, the embedding first) placed by hand.
  std::function<PartitionPolicy(size_t j, size_t n)> place;
  core::ZeroStage stage = core::ZeroStage::k0;
  bool delayed_update = false;
  int prefetch = 2;
  bool checkpointing = true;
};

PartitionPolicy gpu_all() { return {Tier::kGpu, Tier::kGpu, OptimizerDevice::kGpu, Tier::kGpu}; }
PartitionPolicy offloaded(Tier params, Tier states) { return {params, states, OptimizerDevice::kCpu, Tier::kCpu}; }

const std::vector<HandPlan>& hand_plans() {
  static const std::vector<HandPlan> plans = {
      {"states on cpu, parameters on the gpu", [](size_t, size_t) { return offloaded(Tier::kGpu, Tier::kCpu); }},
      {"states on cpu, delayed update", [](size_t, size_t) { return offloaded(Tier::kGpu, Tier::kCpu); },
       core::ZeroStage::k0, true},
      {"lowest quarter all on the gpu, the rest offloaded to cpu",
       [](size_t j, size_t n) { return j < n / 4 ? gpu_all() : offloaded(Tier::kGpu, Tier::kCpu); }},
      {"states split cpu / nvme by halves",
       [](size_t j, size_t n) { return offloaded(Tier::kGpu, j < n / 2 ? Tier::kCpu : Tier::kNvme); }},
      {"parameters in cpu ram, states on nvme", [](size_t, size_t) { return offloaded(Tier::kCpu, Tier::kNvme); },
       core::ZeroStage::k3},
      {"parameters and states on nvme, prefetch 4", [](size_t, size_t) { return offloaded(Tier::kNvme, Tier::kNvme); },
       core::ZeroStage::k3, false, 4},
      {"parameters on nvme, states in cpu ram", [](size_t, size_t) { return offloaded(Tier::kNvme, Tier::kCpu); },
       core::ZeroStage::k3},
      {"three tiers of states under cpu parameters",
       [](size_t j, size_t n) {
         return offloaded(Tier::kCpu, j < n / 3 ? Tier::kGpu : j < 2 * n / 3 ? Tier::kCpu : Tier::kNvme);
       },
       core::ZeroStage::k3},
      {"parameters of the lower half on the gpu, of the upper half in cpu ram, states on cpu",
       [](size_t j, size_t n) { return offloaded(j < n / 2 ? Tier::kGpu : Tier::kCpu, Tier::kCpu); },
       core::ZeroStage::k3},
      {"parameters of the lower half in cpu ram, of the upper half on nvme, states on nvme",
       [](size_t j, size_t n) { return offloaded(j < n / 2 ? Tier::kCpu : Tier::kNvme, Tier::kNvme); },
       core::ZeroStage::k3},
      {"states on cpu, no checkpointing", [](size_t, size_t) { return offloaded(Tier::kGpu, Tier::kCpu); },
       core::ZeroStage::k0, false, 2, false},
  };
  return plans;
}

// A hand plan's GPU-resident optimizer needs its states there: a partition
// with states on the GPU runs Adam there too.
PartitionPolicy consistent(PartitionPolicy p) {
  if (p.optimizer_states == Tier::kGpu) return {p.param16, Tier::kGpu, OptimizerDevice::kGpu, Tier::kGpu};
  return p;
}

Candidate candidate_of(const HandPlan& h, const core::Workload& w, const core::TrainingSpec& training,
                       const core::MachineSpec& machine) {
  core::TrainingSpec t = training;
  t.activation_checkpointing = h.checkpointing;
  const size_t n = core::partitions_of(w, 0).size();
  Candidate c{.name = h.name,
              .policy = {.stage = machine.gpu_count > 1 ? h.stage : core::ZeroStage::k0,
                         .nvme_prefetch_depth = h.prefetch, .h2d_prefetch_depth = h.prefetch,
                         .delayed_update = h.delayed_update, .activation_checkpointing = h.checkpointing,
                         .micro_batch = t.micro_batch, .gradient_accumulation = t.gradient_accumulation},
              .training = t};
  for (size_t j = 0; j < n; ++j) c.policy.partitions.push_back(consistent(h.place(j, n)));
  return c;
}

void expect_plan_matches_every_fitting_hand_plan(const std::string& machine_name, const std::string& model_name,
                                                 const std::string& training_name) {
  const core::MachineSpec machine = must(bundled().machine(machine_name));
  const core::ModelSpec model = must(bundled().model(model_name));
  const core::TrainingSpec training = must(bundled().training(training_name));
  const core::Workload w(model, training.sequence_length);
  const PlanResult planned = search(machine, model, training);
  int fitting = 0;
  for (const HandPlan& h : hand_plans()) {
    const Evaluation hand = evaluate(candidate_of(h, w, training, machine), machine, model);
    if (!hand.fits()) continue;
    ++fitting;
    ASSERT_TRUE(planned.best.has_value()) << "the hand plan '" << h.name << "' fits but the planner found nothing";
    EXPECT_LE(planned.best->step_seconds(), hand.step_seconds() * (1 + kResolution))
        << model_name << " on " << machine_name << ": the hand plan '" << h.name << "' takes "
        << hand.step_seconds() << " s, the planner's '" << planned.best->candidate.name << "' "
        << planned.best->step_seconds() << " s";
  }
  // The check means something only if some hand plans fit.
  EXPECT_GE(fitting, 3) << model_name << " on " << machine_name;
}

TEST(HandPlans, MatchedOrBeatenOnTheOneDriveWorkstation) {
  expect_plan_matches_every_fitting_hand_plan("workstation-24gb-1nvme", "llama-2-7b", "default");
}

TEST(HandPlans, MatchedOrBeatenOnTheFourDriveWorkstation) {
  expect_plan_matches_every_fitting_hand_plan("workstation-24gb-4nvme", "opt-6.7b", "default");
}

TEST(HandPlans, MatchedOrBeatenOnTheCloudT4) {
  expect_plan_matches_every_fitting_hand_plan("cloud-t4-vm", "opt-6.7b", "fp16-adam");
}

TEST(HandPlans, MatchedOrBeatenOnTheDgxA100) {
  expect_plan_matches_every_fitting_hand_plan("dgx-a100", "llama-2-13b", "default");
}

}  // namespace
}  // namespace stowage::planner
