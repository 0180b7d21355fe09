// Opening a trace of a million ops (issue 18 item 7; goal: under 2 s for the
// GUI): the GUI's File > Open (load_trace and the LOD passes), load_trace
// alone, compare's load_recorded_trace and the walker to a visitor that keeps
// nothing, all on core's simdjson walker, beside the floor measured in the
// same run on the same file: mapping it and touching every byte, and one bare
// simdjson On-Demand pass that touches every event's "ts" (no model built).
// The trace is a real one: llama-2-70b under ZeRO-Infinity on the
// workstation, simulated for as many steps as give a million ops, written by
// core's trace writer. Ends with a verdict: the open's times, its ratio to
// the bare pass, the load average, and whether the fastest open took under
// 2 s. Run: trace_open_bench --benchmark_repetitions=3 (interleaved).
#include <benchmark/benchmark.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/chrome_trace.h"
#include "core/lower.h"
#include "core/profile_catalog.h"
#include "core/trace_event_pieces.h"
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
const char* kept_trace() {
  return std::getenv("STOWAGE_BENCH_TRACE");
}

std::filesystem::path trace_path() {
  static const std::filesystem::path path =
      kept_trace() != nullptr ? std::filesystem::path(kept_trace())
                              : std::filesystem::temp_directory_path() /
                                    ("stowage-trace-bench-" + std::to_string(::getpid()) + ".json");
  return path;
}

core::Schedule lowered(const core::MachineSpec& machine, const core::TrainingSpec& training,
                       const core::Workload& w, int steps) {
  const core::Policy p = core::policy_for(
      core::standard_placement(core::StandardPlacement::kZeroInfinity, machine.gpu_count), w, training);
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
    auto doc = parser.iterate(simdjson::padded_string_view(text.text().data(), text.text().size(),
                                                           text.text().size() + core::kTracePadding));
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

// The two ways through the text (core/trace_event_pieces.h), side by side:
// the whole text as one document (its structural index about a gigabyte of
// fresh pages for this trace), and pieces of state.range(0) MiB with
// state.range(1) threads walking ahead.
void BM_WalkWhole(benchmark::State& state) {
  for (auto _ : state) {
    const core::PaddedText text = *core::read_trace_text(trace_path().string());
    NullVisitor visitor;
    if (!core::walk_whole_trace(text.text(), trace_path().string(), visitor))
      state.SkipWithError("walk failed");
    benchmark::DoNotOptimize(visitor.events);
  }
}

void BM_WalkInPieces(benchmark::State& state) {
  const size_t piece = static_cast<size_t>(state.range(0)) << 20;
  for (auto _ : state) {
    const core::PaddedText text = *core::read_trace_text(trace_path().string());
    NullVisitor visitor;
    core::TracePieceStats stats;
    const auto ahead = static_cast<unsigned>(state.range(1));
    if (!core::walk_trace_in_pieces(text.text(), trace_path().string(), visitor, piece, ahead,
                                    core::kMaxJsonDepth, &stats))
      state.SkipWithError("walk failed");
    if (stats.walked_whole) state.SkipWithError("the pieces fell back to the whole walk");
    state.counters["pieces"] = static_cast<double>(stats.pieces);
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

// Repetitions of one benchmark run back to back unless
// --benchmark_enable_random_interleaving=true mixes them (use it: the machine is shared).
BENCHMARK(BM_ReadFileOnly)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_BareSimdjsonPass)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_WalkOnly)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_WalkWhole)->Unit(benchmark::kMillisecond)->Iterations(1);
// {piece MiB, threads walking ahead}
BENCHMARK(BM_WalkInPieces)
    ->ArgsProduct({{1, 4, 16}, {0}})
    ->ArgsProduct({{1}, {1, 2, 3}})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_GuiLoadTrace)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_GuiOpenTrace)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_CompareLoadTrace)->Unit(benchmark::kMillisecond)->Iterations(1);

// The runs' times by benchmark, in ms (wall, the benchmark thread's CPU).
struct Times {
  std::vector<double> wall, cpu;
};

class VerdictReporter final : public benchmark::ConsoleReporter {
 public:
  VerdictReporter() : ConsoleReporter(OO_Tabular) {}  // no colour codes: the output is meant to be kept
  std::map<std::string, Times> times;
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred) continue;
      Times& t = times[r.run_name.function_name + (r.run_name.args.empty() ? "" : "/" + r.run_name.args)];
      t.wall.push_back(r.GetAdjustedRealTime());
      t.cpu.push_back(r.GetAdjustedCPUTime());
    }
  }
};

// "min/median/max" in seconds.
std::string spread(std::vector<double> ms) {
  std::ranges::sort(ms);
  char text[64];
  std::snprintf(text, sizeof text, "%.2f/%.2f/%.2f s", ms.front() / 1e3, ms[ms.size() / 2] / 1e3,
                ms.back() / 1e3);
  return text;
}

double median(std::vector<double> ms) {
  std::ranges::sort(ms);
  return ms[ms.size() / 2];
}

// The goal (issue 18 item 7) against the fastest open, with the peer figure
// measured in the same runs: the bare simdjson pass over the same file.
void print_verdict(const std::map<std::string, Times>& times) {
  constexpr double kGoalMs = 2000;
  const auto open = times.find("BM_GuiOpenTrace");
  if (open == times.end()) return;
  const Times& o = open->second;
  std::printf(
      "[ trace open ] GUI open (load + LOD passes): wall %s over %zu runs (min/median/max), its thread's CPU "
      "%s\n",
      spread(o.wall).c_str(), o.wall.size(), spread(o.cpu).c_str());
  if (const auto bare = times.find("BM_BareSimdjsonPass"); bare != times.end()) {
    std::printf("[ trace open ] bare simdjson pass: wall %s; open / bare pass = %.2fx (medians)\n",
                spread(bare->second.wall).c_str(), median(o.wall) / median(bare->second.wall));
  }
  if (const auto whole = times.find("BM_WalkWhole"); whole != times.end()) {
    for (const char* args : {"1/0", "4/0", "16/0", "1/1", "1/2", "1/3"}) {
      const auto pieces = times.find(std::string("BM_WalkInPieces/") + args);
      if (pieces == times.end()) continue;
      std::printf(
          "[ trace open ] walk in pieces (MiB/threads ahead) %s: wall %s; / whole-text walk (%s) = %.2fx "
          "(medians)\n",
          args, spread(pieces->second.wall).c_str(), spread(whole->second.wall).c_str(),
          median(pieces->second.wall) / median(whole->second.wall));
    }
  }
  double load = 0;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }
  const long cores = ::sysconf(_SC_NPROCESSORS_ONLN);
  if (load > static_cast<double>(cores)) {
    std::printf(
        "[ trace open ] load average %.1f on %ld cores: the machine is shared, so wall times include "
        "waiting for a core\n",
        load, cores);
  }
  const double fastest = *std::ranges::min_element(o.wall);
  std::printf("[ trace open ] under 2 s: %s (fastest open %.2f s)\n", fastest < kGoalMs ? "yes" : "NO",
              fastest / 1e3);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const bool reuse = kept_trace() != nullptr && std::filesystem::exists(trace_path());
  const size_t ops = reuse ? 0 : write_trace();
  std::printf("trace: %zu ops, %.0f MB (%s)\n", ops,
              static_cast<double>(std::filesystem::file_size(trace_path())) / 1e6, trace_path().c_str());
  VerdictReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_verdict(reporter.times);
  benchmark::Shutdown();
  if (kept_trace() == nullptr) std::filesystem::remove(trace_path());
  return 0;
}
