// `stowage run PLAN.yaml`: trains the plan's model for real on this machine
// with the executor's CPU backend, prints a live progress line and a
// summary, and writes the measured timeline (--trace) beside the predicted
// one (--predicted-trace) in the same format, op for op.
#include <unistd.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/output_file.h"
#include "cli/profile_inputs.h"
#include "cli/text_table.h"
#include "core/chrome_trace.h"
#include "core/plan_file.h"
#include "core/units.h"
#include "executor/checkpoint/checkpoint_root.h"
#include "executor/cpu_backend.h"
#include "executor/faulty_backend.h"
#include "executor/trainer.h"
#include "sim/simulator.h"

namespace stowage::cli {
namespace {

using core::Lane;
using core::Tier;

struct RunArgs {
  std::string plan;
  int64_t steps = 100;
  uint64_t seed = 1;
  std::string data;
  std::string device_memory;  // "32 MiB"; empty: the plan machine's GPU memory
  std::vector<std::string> nvme_dirs;
  std::string block_size;  // empty: the plan's
  int queue_depth = 0;     // 0: the plan's
  int threads = 1;
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  std::string resume;  // a checkpoint directory, or "latest" under --checkpoint-dir
  std::string trace, predicted_trace;
  std::string init_from, export_weights;  // safetensors files (Hugging Face names)
  std::string fault;   // "block-write:3": fail the 3rd call of that kind (tests); "...:hang" hangs it
  double watchdog = 60;  // seconds without a finished op before the run is stopped
  bool as_json = false;
};

std::string short_bytes(int64_t b) { return core::format_bytes(core::Bytes(b), core::Prefix::kDecimal, 3); }

core::Result<executor::Fault> parse_fault(std::string text) {
  const std::string given = text;
  executor::FaultEffect effect = executor::FaultEffect::kFail;
  if (constexpr std::string_view kHang = ":hang"; text.ends_with(kHang)) {
    effect = executor::FaultEffect::kHang;
    text.resize(text.size() - kHang.size());
  }
  const auto colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  for (int k = 0; k < executor::kCallKindCount; ++k) {
    const auto c = static_cast<executor::CallKind>(k);
    if (executor::to_string(c) != kind || colon == std::string::npos) continue;
    try {
      size_t used = 0;
      const std::string number = text.substr(colon + 1);
      const int64_t nth = std::stoll(number, &used);
      if (used != number.size() || nth < 1) break;
      return executor::Fault{.kind = c, .nth = nth, .message = "injected fault", .effect = effect};
    } catch (const std::exception&) {
      break;
    }
  }
  return core::fail({{}, "--fault '" + given + "' is not KIND:N or KIND:N:hang",
                     "KIND one of allocate, copy, compute, optimizer, block-read, block-write; N >= 1"});
}

// The progress line: one line per step on a terminal (rewritten in place),
// every tenth of the run otherwise.
class Progress {
 public:
  Progress(std::ostream& out, int64_t steps, int64_t first) : out_(out), steps_(steps), first_(first) {
    tty_ = isatty(STDOUT_FILENO) == 1 && &out == &std::cout;
  }
  void step(const executor::StepReport& r) {
    const int64_t every = std::max<int64_t>(1, (steps_ - first_) / 10);
    const bool last = r.step + 1 == steps_;
    if (!tty_ && !last && (r.step - first_) % every != 0) return;
    char line[256];
    char skipped[64] = "";
    if (r.skipped_total > 0)
      std::snprintf(skipped, sizeof skipped, "  %s%lld skipped", r.skipped ? "overflow, " : "",
                    static_cast<long long>(r.skipped_total));
    std::snprintf(line, sizeof line, "step %4lld/%lld  loss %.4f%s  %7.3f s  %8.0f tokens/s", static_cast<long long>(r.step + 1),
                  static_cast<long long>(steps_), r.loss, skipped, r.seconds, r.tokens_per_second);
    std::string moved;
    for (Lane lane : {Lane::kPcieH2d, Lane::kPcieD2h, Lane::kNvmeRead, Lane::kNvmeWrite}) {
      const int64_t b = r.bytes[static_cast<size_t>(lane)];
      if (b > 0) moved += "  " + std::string(core::to_string(lane)) + " " + short_bytes(b);
    }
    out_ << (tty_ ? "\r\033[K" : "  ") << line << moved << (tty_ && !last ? "" : "\n") << std::flush;
  }

 private:
  std::ostream& out_;
  int64_t steps_, first_;
  bool tty_ = false;
};

// Busy share of each lane over the run: the union of its ops' spans.
std::array<double, core::kLaneCount> lane_busy(const core::Schedule& s, const core::Timeline& t, double seconds) {
  std::array<std::vector<std::pair<int64_t, int64_t>>, core::kLaneCount> spans;
  for (const core::Op& op : s.ops) {
    const core::OpSpan& sp = t.spans[static_cast<size_t>(op.id)];
    spans[static_cast<size_t>(op.lane)].push_back({sp.start, sp.end});
  }
  std::array<double, core::kLaneCount> busy{};
  for (size_t l = 0; l < spans.size(); ++l) {
    std::sort(spans[l].begin(), spans[l].end());
    int64_t total = 0, reach = INT64_MIN;
    for (auto [a, b] : spans[l]) {
      a = std::max(a, reach);
      if (b > a) total += b - a;
      reach = std::max(reach, b);
    }
    busy[l] = static_cast<double>(total) * 1e-9 / std::max(seconds, 1e-9);
  }
  return busy;
}

core::Diagnostics write_trace(const std::string& path, const core::Schedule& s, const core::Timeline& t,
                              const std::string& title, const std::string& source) {
  std::ostringstream text;
  core::write_chrome_trace(s, t, {.title = title, .source = source}, text);
  return write_file_atomically(path, text.str());
}

int run_run(const Context& context, const RunArgs& a) {
  auto plan = core::load_plan(a.plan);
  if (!plan) return report(context, plan.error());
  auto in = load_inputs(context.catalog(), plan->machine, plan->model, plan->training);
  if (!in) return report(context, in.error());
  if (core::Diagnostics d = executor::check_runnable(*plan, in->machine, in->model, in->training); !d.empty()) {
    for (core::Diagnostic& x : d) x.where.file = a.plan;  // the plan asks for what cannot run
    return report(context, d);
  }

  // Weights in and out are checked before a backend exists: a file that
  // does not fit the model is bad input (65), not a failed run.
  if (!a.export_weights.empty()) {
    if (core::Diagnostics d = executor::check_export(*plan, in->model, in->training); !d.empty()) {
      return report(context, d);
    }
  }
  std::optional<std::vector<std::vector<float>>> initial_weights;
  if (!a.init_from.empty()) {
    if (!a.resume.empty()) {
      *context.err << "error: --init-from and --resume both given (expected one of them)\n";
      return kExitUsage;
    }
    auto w = executor::load_initial_weights(a.init_from, *plan, in->model, in->training);
    if (!w) return report(context, w.error());
    initial_weights = std::move(*w);
  }

  executor::CpuBackendOptions backend_options{.optimizer_threads = a.threads};
  int64_t device = in->machine.gpu.memory.count();
  if (!a.device_memory.empty()) {
    auto cap = core::parse_bytes(a.device_memory);
    if (!cap || cap->count() <= 0) {
      *context.err << "error: --device-memory '" << a.device_memory << "' is not a size (expected e.g. '32 MiB')\n";
      return kExitUsage;
    }
    device = std::min(device, cap->count());
  }
  backend_options.capacity[static_cast<size_t>(Tier::kGpu)] = device;
  const bool uses_nvme = std::any_of(plan->policy.partitions.begin(), plan->policy.partitions.end(), [](const auto& p) {
    return p.param16 == Tier::kNvme || p.optimizer_states == Tier::kNvme;
  });
  if (uses_nvme) {
    auto block = a.block_size.empty() ? std::expected<core::Bytes, core::UnitError>(plan->policy.nvme_block_size)
                                      : core::parse_bytes(a.block_size);
    if (!block) {
      *context.err << "error: --block-size '" << a.block_size << "' is not a size (expected e.g. '1 MiB')\n";
      return kExitUsage;
    }
    // As many regions in flight per direction as the schedule's NVMe lanes
    // have slots (the plan's prefetch depth).
    executor::BlockStoreOptions nvme{.block_bytes = *block,
                                     .queue_depth = a.queue_depth > 0 ? a.queue_depth : plan->policy.nvme_queue_depth,
                                     .regions_in_flight = std::clamp(plan->policy.nvme_prefetch_depth, 1, 64)};
    for (const std::string& d : a.nvme_dirs.empty() ? std::vector<std::string>{"stowage-nvme"} : a.nvme_dirs) {
      nvme.directories.emplace_back(d);
    }
    if (core::Diagnostics d = executor::validate(nvme); !d.empty()) return report(context, d);
    backend_options.nvme = std::move(nvme);
  }
  core::Result<std::unique_ptr<executor::CpuBackend>> cpu = std::unexpected(core::Diagnostics{});
  try {
    cpu = executor::CpuBackend::create(std::move(backend_options));
  } catch (const std::exception& e) {
    *context.err << "error: " << e.what() << '\n';
    return kExitIoError;
  }
  if (!cpu) return report(context, cpu.error());
  executor::Backend* backend = cpu->get();
  std::unique_ptr<executor::FaultyBackend> faulty;
  if (!a.fault.empty()) {
    auto fault = parse_fault(a.fault);
    if (!fault) return report(context, fault.error());
    faulty = std::make_unique<executor::FaultyBackend>(*backend, *fault);
    backend = faulty.get();
  }

  executor::TrainerOptions options{.steps = a.steps, .seed = a.seed, .data = a.data, .checkpoint_every = a.checkpoint_every,
                                   .plan_name = a.plan};
  options.watchdog = std::chrono::nanoseconds(static_cast<int64_t>(a.watchdog * 1e9));
  if (!a.checkpoint_dir.empty()) options.checkpoint_root = a.checkpoint_dir;
  if (!a.export_weights.empty()) options.export_weights = a.export_weights;
  options.initial_weights = std::move(initial_weights);
  if (a.resume == "latest") {
    if (a.checkpoint_dir.empty()) {
      *context.err << "error: --resume latest needs --checkpoint-dir\n";
      return kExitUsage;
    }
    auto latest = executor::find_latest(a.checkpoint_dir);
    if (!latest) return report(context, latest.error());
    if (!*latest) {
      *context.err << "error: no checkpoint under " << a.checkpoint_dir << " to resume from\n";
      return kExitBadInput;
    }
    options.resume = **latest;
  } else if (!a.resume.empty()) {
    options.resume = a.resume;
  }
  std::ostream& out = *context.out;
  if (!a.as_json) {
    out << "Training " << in->model.label << " with plan " << a.plan << " on the cpu backend\n"
        << "  device memory cap " << short_bytes(device) << (a.device_memory.empty() ? " (the plan's GPU)" : " (--device-memory)")
        << ", " << a.steps << " steps, seed " << a.seed << (options.resume ? ", resuming from " + options.resume->string() : "")
        << "\n";
  }
  Progress progress(out, a.steps, 0);
  if (!a.as_json) {
    options.on_step = [&progress](const executor::StepReport& r) { progress.step(r); };
    options.on_note = [&out](const std::string& note) { out << "  " << note << '\n'; };
  }
  core::Result<executor::TrainingRun> run = std::unexpected(core::Diagnostics{});
  try {
    run = executor::train(*plan, in->machine, in->model, in->training, *backend, options);
  } catch (const std::exception& e) {
    *context.err << "error: " << e.what() << '\n';
    return kExitIoError;
  }
  if (!run) {
    report(context, run.error());
    return kExitIoError;
  }
  if (!cpu->get()->host_memory_locked() && !a.as_json) {
    out << "  note: host memory could not be locked (RLIMIT_MEMLOCK); host tiers ran pageable\n";
  }

  const auto busy = lane_busy(run->schedule, run->timeline, run->seconds);
  const std::string title = in->model.name + " on " + in->machine.name + ", " + a.plan;
  if (!a.trace.empty()) {
    if (core::Diagnostics d = write_trace(a.trace, run->schedule, run->timeline, "measured: " + title, "measured"); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  // The simulator on the same ops, for the plan's machine: what this run
  // would take there, beside what it took here.
  const sim::Prediction predicted = sim::simulate(run->schedule, in->machine);
  if (!a.predicted_trace.empty()) {
    const sim::Prediction& p = predicted;
    if (core::Diagnostics d = write_trace(a.predicted_trace, run->schedule, p.timeline, "predicted: " + title, "predicted"); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  const double first = run->losses.front(), last = run->losses.back();
  const double step_seconds = run->seconds / static_cast<double>(run->losses.size());
  if (a.as_json) {
    nlohmann::json lanes = nlohmann::json::object();
    for (Lane lane : core::kAllLanes) lanes[std::string(core::to_string(lane))] = busy[static_cast<size_t>(lane)];
    out << nlohmann::json{{"first_step", run->first_step}, {"losses", run->losses}, {"held_out_loss", run->held_out_loss},
                          {"unigram_entropy", run->unigram_entropy}, {"seconds", run->seconds},
                          {"lane_busy", lanes}, {"checkpoints", run->checkpoints}}
               .dump(2)
        << '\n';
    return kExitOk;
  }
  TextTable t({Align::kLeft, Align::kLeft});
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.4f -> %.4f nats/byte over steps %lld-%lld", first, last,
                static_cast<long long>(run->first_step + 1), static_cast<long long>(run->first_step + static_cast<int64_t>(run->losses.size())));
  t.row({"training loss", buf});
  std::snprintf(buf, sizeof buf, "%.4f nats/byte (unigram entropy of the data %.4f: %s)", run->held_out_loss,
                run->unigram_entropy, run->held_out_loss < run->unigram_entropy ? "learned more than byte frequencies" : "not yet below it");
  t.row({"held-out loss", buf});
  std::snprintf(buf, sizeof buf, "%.3f s per step, %.0f tokens/s", step_seconds,
                static_cast<double>(run->schedule.tokens_per_step) / step_seconds);
  t.row({"measured", buf});
  std::snprintf(buf, sizeof buf, "%s per step on %s (the simulator on the same ops), bound by %s",
                core::format_seconds(predicted.summary.step_time).c_str(), in->machine.name.c_str(),
                std::string(core::to_string(predicted.summary.bounding_lane)).c_str());
  t.row({"predicted", buf});
  std::string lanes;
  for (Lane lane : core::kAllLanes) {
    const double b = busy[static_cast<size_t>(lane)];
    if (b > 0) lanes += (lanes.empty() ? "" : ", ") + std::string(core::to_string(lane)) + " " + std::to_string(static_cast<int>(b * 100 + 0.5)) + "%";
  }
  t.row({"lane busy", lanes});
  std::array<int64_t, 3> peak{};
  for (const core::MemorySample& m : run->timeline.memory) {
    peak[static_cast<size_t>(m.tier)] = std::max(peak[static_cast<size_t>(m.tier)], m.bytes.count());
  }
  t.row({"peak memory", "gpu " + short_bytes(peak[0]) + " of " + short_bytes(device) + " cap, cpu " + short_bytes(peak[1]) +
                            ", nvme " + short_bytes(peak[2])});
  out << '\n';
  t.print(out, 2);
  if (!a.export_weights.empty()) out << "\n  weights (safetensors): " << a.export_weights << '\n';
  if (!a.trace.empty()) out << "\n  measured trace: " << a.trace << '\n';
  if (!a.predicted_trace.empty()) out << "  predicted trace (same ops, on " << in->machine.name << "): " << a.predicted_trace << '\n';
  return kExitOk;
}

}  // namespace

CommandBody add_run_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("run", "Train for real: run a plan on this machine (CPU backend)");
  auto a = std::make_shared<RunArgs>();
  sub->add_option("plan", a->plan, "Plan file (stowage/plan/v1)")->required()->check(CLI::ExistingFile);
  sub->add_option("--steps", a->steps, "Train until this step")->capture_default_str()->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  sub->add_option("--seed", a->seed, "Seed of the initial parameters and the data order")->capture_default_str();
  sub->add_option("--data", a->data, "A text file to train on, byte by byte (default: generated English-like text)")
      ->check(CLI::ExistingFile);
  sub->add_option("--device-memory", a->device_memory,
                  "Cap on device memory, e.g. '32 MiB' (default: the plan machine's GPU memory)");
  sub->add_option("--nvme-dir", a->nvme_dirs, "Directory on an NVMe drive; repeat to stripe (default: ./stowage-nvme)");
  sub->add_option("--block-size", a->block_size, "NVMe I/O block size (default: the plan's nvme_block_size)");
  sub->add_option("--queue-depth", a->queue_depth, "NVMe requests in flight (default: the plan's nvme_queue_depth)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--threads", a->threads, "Threads of each CPU optimizer step")->capture_default_str()->check(CLI::Range(1, 256));
  sub->add_option("--checkpoint-dir", a->checkpoint_dir, "Where checkpoints go (step-NNNNNN directories)");
  sub->add_option("--checkpoint-every", a->checkpoint_every, "Steps between checkpoints (default: at the end)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  sub->add_option("--resume", a->resume, "Resume from a checkpoint directory, or 'latest' under --checkpoint-dir");
  sub->add_option("--init-from", a->init_from,
                  "Start from these weights: a safetensors file with Hugging Face names")
      ->check(CLI::ExistingFile);
  sub->add_option("--export-weights", a->export_weights,
                  "After the last step, write the fp32 weights as safetensors with Hugging Face names");
  sub->add_option("--trace", a->trace, "Write the measured timeline as Chrome trace JSON");
  sub->add_option("--predicted-trace", a->predicted_trace, "Write the simulator's timeline of the same ops");
  sub->add_option("--fault", a->fault,
                  "Fail the Nth backend call of a kind, e.g. block-write:3, or hang it, compute:5:hang (for tests)");
  sub->add_option("--watchdog", a->watchdog, "Stop the run when no op finished for this many seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1e6));
  sub->add_flag("--json", a->as_json, "Print JSON");
  return [&context, a]() { return run_run(context, *a); };
}

}  // namespace stowage::cli
