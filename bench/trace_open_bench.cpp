// Opening a trace of a million ops (issue 18 item 7; goal: under 2 s for the
// GUI): the GUI's load_trace and compare's load_recorded_trace, both on core's
// simdjson walker, beside the floor measured in the same run on the same file:
// mapping it and touching every byte (read_trace_text, counting lines) and one bare simdjson On-Demand pass
// that touches every event's "ts" (no model built). Compare the times as
// ratios to those floors. The trace is a real one: llama-2-70b under
// ZeRO-Infinity on the workstation, simulated for as many steps as give a
// million ops, written by core's trace writer.
#include <benchmark/benchmark.h>
#include <simdjson.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/chrome_trace.h"
#include "core/lower.h"
#include "core/profile_catalog.h"
#include "core/trace_events.h"
#include "core/trace_reader.h"
#include "gui/file_loader.h"
#include "gui/trace_loader.h"
#include "sim/simulator.h"

namespace {

using namespace stowage;

constexpr size_t kOps = 1'000'000;

// STOWAGE_BENCH_TRACE names a trace to read instead (kept; written first
// when absent), for profiling the readers without writing it each run.
const char* kept_trace() { return std::getenv("STOWAGE_BENCH_TRACE"); }

std::filesystem::path trace_path() {
  static const std::filesystem::path path =
      kept_trace() != nullptr ? std::filesystem::path(kept_trace())
                              : std::filesystem::temp_directory_path() /
                                    ("stowage-trace-bench-" + std::to_string(::getpid()) + ".json");
  return path;
}

core::Schedule lowered(const core::MachineSpec& machine, const core::TrainingSpec& training,
                       const core::Workload& w, int steps) {
  const core::Policy p =
      core::policy_for(core::standard_placement(core::StandardPlacement::kZeroInfinity, machine.gpu_count), w, training);
  return *core::lower(p, machine, w, training, {.steps = steps});
}

// Writes the trace once; returns its op count.
size_t write_trace() {
  const core::ProfileCatalog c(STOWAGE_PROFILES_DIR);
  const core::MachineSpec machine = *c.machine("workstation-24gb-1nvme");
  const core::TrainingSpec training = *c.training("default");
  const core::Workload w(*c.model("llama-2-70b"), training.sequence_length);
  const size_t per_step = lowered(machine, training, w, 1).ops.size();
  const core::Schedule s = lowered(machine, training, w, static_cast<int>((kOps + per_step - 1) / per_step));
  const sim::Prediction p = sim::simulate(s, machine);
  std::ofstream out(trace_path(), std::ios::binary);
  core::write_chrome_trace(s, p.timeline, {.title = "bench", .source = "predicted"}, out);
  return s.ops.size();
}

void BM_ReadFileOnly(benchmark::State& state) {
  for (auto _ : state) {
    // Every page touched, as a parse would.
    const core::PaddedText text = *core::read_trace_text(trace_path().string());
    size_t lines = 0;
    for (const char c : text.text()) lines += c == '\n' ? 1 : 0;
    benchmark::DoNotOptimize(lines);
  }
}

void BM_BareSimdjsonPass(benchmark::State& state) {
  const core::PaddedText text = *core::read_trace_text(trace_path().string());
  simdjson::ondemand::parser parser;
  for (auto _ : state) {
    auto doc = parser.iterate(
        simdjson::padded_string_view(text.text().data(), text.text().size(), text.text().size() + core::kTracePadding));
    double sum = 0;
    for (auto e : doc["traceEvents"].get_array()) {
      double ts = 0;
      if (e["ts"].get_double().get(ts) == simdjson::SUCCESS) sum += ts;
    }
    benchmark::DoNotOptimize(sum);
  }
}

// The walker alone, to a visitor that keeps nothing: what the readers' own
// work adds shows against it.
struct NullVisitor final : core::TraceEventVisitor {
  size_t events = 0;
  void header(const core::TraceHeader&) override {}
  void event(const core::TraceEvent&) override { ++events; }
};

void BM_WalkOnly(benchmark::State& state) {
  for (auto _ : state) {
    const core::PaddedText text = *core::read_trace_text(trace_path().string());
    NullVisitor visitor;
    if (!core::walk_trace(text.text(), trace_path().string(), visitor)) state.SkipWithError("walk failed");
    benchmark::DoNotOptimize(visitor.events);
  }
}

void BM_GuiLoadTrace(benchmark::State& state) {
  for (auto _ : state) {
    core::Result<gui::TraceModel> m = gui::load_trace(trace_path());
    if (!m) state.SkipWithError(core::to_string(m.error()).c_str());
    benchmark::DoNotOptimize(m->ops.size());
  }
}

// What the GUI does on File > Open: the load and the LOD, critical-path and
// busy passes (gui/file_loader.h), as one user-visible wait.
void BM_GuiOpenTrace(benchmark::State& state) {
  const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
  for (auto _ : state) {
    core::Result<gui::LoadedFile> f = gui::load_file(trace_path(), catalog);
    if (!f) state.SkipWithError(core::to_string(f.error()).c_str());
    benchmark::DoNotOptimize(f->timeline->model.ops.size());
  }
}

void BM_CompareLoadTrace(benchmark::State& state) {
  for (auto _ : state) {
    core::Result<core::RecordedTrace> t = core::load_recorded_trace(trace_path());
    if (!t) state.SkipWithError(core::to_string(t.error()).c_str());
    benchmark::DoNotOptimize(t->schedule.ops.size());
  }
}

// Interleaved: the four run in turn, several times over (--benchmark_repetitions).
BENCHMARK(BM_ReadFileOnly)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_BareSimdjsonPass)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_WalkOnly)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_GuiLoadTrace)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_GuiOpenTrace)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_CompareLoadTrace)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const bool reuse = kept_trace() != nullptr && std::filesystem::exists(trace_path());
  const size_t ops = reuse ? 0 : write_trace();
  std::printf("trace: %zu ops, %.0f MB (%s)\n", ops,
              static_cast<double>(std::filesystem::file_size(trace_path())) / 1e6, trace_path().c_str());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (kept_trace() == nullptr) std::filesystem::remove(trace_path());
  return 0;
}
