// Planner speed (issue 4): planning a 175B model on each bundled machine,
// goal under 2 s each on one core.
#include <benchmark/benchmark.h>

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
    const planner::PlanResult r = planner::search(machine, model, training);
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

}  // namespace

BENCHMARK_MAIN();
