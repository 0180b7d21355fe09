// Simulator speed (issue 3): ops simulated per second on one core, and the
// time to lower and simulate one step of a 175B model with per-layer
// partitions. Goals: >= 2 million ops/s; < 100 ms per 175B step; cost linear
// in the number of ops (compare the per-op times across sizes).
#include <benchmark/benchmark.h>

#include "core/lower.h"
#include "core/profile_catalog.h"
#include "sim/simulator.h"

namespace {

using namespace stowage;

struct Setup {
  core::MachineSpec machine;
  core::TrainingSpec training;
  core::ModelSpec model;
};

Setup load(const char* machine, const char* model) {
  const core::ProfileCatalog c(STOWAGE_PROFILES_DIR);
  return {*c.machine(machine), *c.training("default"), *c.model(model)};
}

core::Schedule lowered(const Setup& s, core::StandardPlacement which, int steps) {
  const core::Workload w(s.model, s.training.sequence_length);
  const core::Policy p = core::policy_for(core::standard_placement(which, s.machine.gpu_count), w, s.training);
  return *core::lower(p, s.machine, w, s.training, {.steps = steps});
}

// Simulation alone over schedules of growing size: items/s is ops/s.
void BM_SimulateOps(benchmark::State& state) {
  const Setup s = load("workstation-24gb-1nvme", "llama-2-70b");
  const core::Schedule schedule = lowered(s, core::StandardPlacement::kZeroInfinity, static_cast<int>(state.range(0)));
  for (auto _ : state) {
    sim::Prediction p = sim::simulate(schedule, s.machine);
    benchmark::DoNotOptimize(p.engine.makespan);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(schedule.ops.size()));
  state.counters["ops"] = static_cast<double>(schedule.ops.size());
}
BENCHMARK(BM_SimulateOps)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);

// Lowering and simulating one step of OPT-175B on each bundled machine.
void BM_LowerAndSimulate175B(benchmark::State& state, const char* machine) {
  const Setup s = load(machine, "opt-175b");
  const core::Workload w(s.model, s.training.sequence_length);
  const core::Policy p =
      core::policy_for(core::standard_placement(core::StandardPlacement::kZeroInfinity, s.machine.gpu_count), w, s.training);
  for (auto _ : state) {
    core::Schedule schedule = *core::lower(p, s.machine, w, s.training, {.steps = 1});
    sim::Prediction pr = sim::simulate(schedule, s.machine);
    benchmark::DoNotOptimize(pr.engine.makespan);
    state.counters["ops"] = static_cast<double>(schedule.ops.size());
  }
}
BENCHMARK_CAPTURE(BM_LowerAndSimulate175B, workstation, "workstation-24gb-1nvme")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerAndSimulate175B, dgx2, "dgx-2")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
