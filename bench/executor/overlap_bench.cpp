// Overlap of a real offloaded training run (issue 5, item 11): trains the
// tiny GPT under an offloading plan with the CPU backend and compares the
// measured step time with the busiest lane's busy time per step. If the
// lanes overlapped perfectly the step would take exactly as long as its
// busiest lane; goal: within 15%.
//
// Run: build/<preset>/bench/executor/overlap_bench [PLAN.yaml] [STEPS]
// (default: plans/tiny-gpt-nvme.yaml, 24 steps; NVMe files go to
// ./overlap-bench-nvme, so run it from a directory on the drive to test).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "core/plan_file.h"
#include "core/profile_catalog.h"
#include "executor/cpu_backend.h"
#include "executor/trainer.h"

using namespace stowage;

int main(int argc, char** argv) {
  const std::string plan_path = argc > 1 ? argv[1] : STOWAGE_SOURCE_DIR "/plans/tiny-gpt-nvme.yaml";
  const int64_t steps = argc > 2 ? std::atoll(argv[2]) : 24;
  constexpr int64_t kWarmup = 3;  // first steps fault pages in and fill the pipeline
  if (steps < kWarmup + 3) {
    std::fprintf(stderr, "overlap_bench: give at least %lld steps\n", static_cast<long long>(kWarmup + 3));
    return 2;
  }
  const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
  auto plan = core::load_plan(plan_path, catalog.root());
  if (!plan) {
    std::fprintf(stderr, "%s\n", core::to_string(plan.error()).c_str());
    return 1;
  }
  auto machine = catalog.machine(plan->machine);
  auto model = catalog.model(plan->model);
  auto training = catalog.training(plan->training);
  if (!machine || !model || !training) {
    std::fprintf(stderr, "overlap_bench: the plan's profiles do not load\n");
    return 1;
  }
  executor::CpuBackendOptions options;
  options.nvme = executor::BlockStoreOptions{.directories = {"overlap-bench-nvme"},
                                             .block_bytes = plan->policy.nvme_block_size,
                                             .queue_depth = plan->policy.nvme_queue_depth};
  auto backend = executor::CpuBackend::create(std::move(options));
  if (!backend) {
    std::fprintf(stderr, "%s\n", core::to_string(backend.error()).c_str());
    return 1;
  }
  auto run = executor::train(*plan, *machine, *model, *training, **backend, {.steps = steps});
  if (!run) {
    std::fprintf(stderr, "%s\n", core::to_string(run.error()).c_str());
    return 1;
  }
  // Per step: when its last op ended, and each lane's busy time in its ops.
  std::map<int, int64_t> finished;
  std::map<int, std::array<int64_t, core::kLaneCount>> busy;
  for (const core::Op& op : run->schedule.ops) {
    const core::OpSpan& span = run->timeline.spans[static_cast<size_t>(op.id)];
    finished[op.step] = std::max(finished[op.step], span.end);
    busy[op.step][static_cast<size_t>(op.lane)] += span.end - span.start;
  }
  const int first = static_cast<int>(kWarmup), last = static_cast<int>(steps) - 1;
  const double period = static_cast<double>(finished[last] - finished[first]) / (last - first) * 1e-9;
  std::array<double, core::kLaneCount> lane{};
  for (int s = first + 1; s <= last; ++s) {
    for (size_t l = 0; l < lane.size(); ++l) lane[l] += static_cast<double>(busy[s][l]) * 1e-9 / (last - first);
  }
  const auto busiest = static_cast<size_t>(std::max_element(lane.begin(), lane.end()) - lane.begin());
  std::printf("overlap_bench: %s, %lld steps (first %lld not counted)\n", plan_path.c_str(),
              static_cast<long long>(steps), static_cast<long long>(kWarmup + 1));
  std::printf("  %-12s %10s\n", "lane", "busy s/step");
  for (core::Lane l : core::kAllLanes) {
    if (lane[static_cast<size_t>(l)] > 0) {
      std::printf("  %-12s %10.4f\n", std::string(core::to_string(l)).c_str(), lane[static_cast<size_t>(l)]);
    }
  }
  const double ratio = period / lane[busiest];
  std::printf("  measured step %.4f s, busiest lane %s %.4f s: ratio %.3f (goal <= 1.15: %s)\n", period,
              std::string(core::to_string(core::kAllLanes[busiest])).c_str(), lane[busiest], ratio,
              ratio <= 1.15 ? "met" : "missed");
  return 0;
}
