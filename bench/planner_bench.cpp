// Planner speed (issue 4): planning a 175B model on each bundled machine,
// goal under 2 s each on one core (the search on one thread). BM_SearchAhead:
// the same search on one thread and on one per core (planner/run_ahead.h),
// alternating, in the same run: `speedup` is the median of the pairs'
// ratios, `same_plan` 1 when every pair chose the same plan at the same
// step time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/profile_catalog.h"
#include "planner/search.h"

namespace {

using namespace stowage;

void BM_Plan175B(benchmark::State& state, const char* machine_name) {
  const core::ProfileCatalog c(STOWAGE_PROFILES_DIR);
  const core::MachineSpec machine = *c.machine(machine_name);
  const core::ModelSpec model = *c.model("opt-175b");
  const core::TrainingSpec training = *c.training("default");
  size_t simulated = 0;
  for (auto _ : state) {
    const planner::PlanResult r = planner::search(machine, model, training, {.threads = 1});
    simulated = 0;
    for (const planner::Evaluation& e : r.considered) simulated += e.summary.has_value();
    benchmark::DoNotOptimize(r.best.has_value());
  }
  state.counters["simulated"] = static_cast<double>(simulated);
}
BENCHMARK_CAPTURE(BM_Plan175B, workstation_1nvme, "workstation-24gb-1nvme")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Plan175B, workstation_4nvme, "workstation-24gb-4nvme")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Plan175B, dgx2, "dgx-2")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Plan175B, dgx_a100, "dgx-a100")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Plan175B, h100_node, "h100-node")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK_CAPTURE(BM_Plan175B, cloud_t4, "cloud-t4-vm")->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_SearchAhead(benchmark::State& state, const char* machine_name, const char* model_name) {
  const core::ProfileCatalog c(STOWAGE_PROFILES_DIR);
  const core::MachineSpec machine = *c.machine(machine_name);
  const core::ModelSpec model = *c.model(model_name);
  const core::TrainingSpec training = *c.training("default");
  const int threads = planner::default_search_threads();
  const auto timed = [&](int t, planner::PlanResult& r) {
    const auto start = std::chrono::steady_clock::now();
    r = planner::search(machine, model, training, {.threads = t});
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<double> ratios;
  bool same = true, one_first = true;
  for (auto _ : state) {
    planner::PlanResult one, many;
    double t_one = 0, t_many = 0;
    if (one_first) {
      t_one = timed(1, one);
      t_many = timed(threads, many);
    } else {
      t_many = timed(threads, many);
      t_one = timed(1, one);
    }
    one_first = !one_first;
    state.SetIterationTime(t_many);
    ratios.push_back(t_one / t_many);
    same = same && one.best.has_value() == many.best.has_value() &&
           (!one.best || (one.best->candidate.name == many.best->candidate.name &&
                          one.best->step_seconds() == many.best->step_seconds()));
  }
  std::ranges::sort(ratios);
  state.counters["threads"] = threads;
  state.counters["speedup"] = ratios[ratios.size() / 2];
  state.counters["speedup_min"] = ratios.front();
  state.counters["speedup_max"] = ratios.back();
  state.counters["same_plan"] = same ? 1 : 0;
}
BENCHMARK_CAPTURE(BM_SearchAhead, h100_node_llama_2_70b, "h100-node", "llama-2-70b")
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);
BENCHMARK_CAPTURE(BM_SearchAhead, dgx_a100_opt_175b, "dgx-a100", "opt-175b")
    ->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
