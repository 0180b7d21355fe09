// `stowage run PLAN.yaml`: trains the plan's model for real on this machine
// with the executor's CPU backend, prints a live progress line and a
// summary, and writes the measured timeline (--trace) beside the predicted
// one (--predicted-trace) in the same format, op for op.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>

#include "calibration/trace_metrics.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/layer_products.h"
#include "cli/output_file.h"
#include "cli/stop_signals.h"
#include "cli/text_table.h"
#include "core/chrome_trace.h"
#include "core/lower.h"
#include "core/plan_file.h"
#include "core/units.h"
#include "executor/checkpoint/checkpoint_reader.h"
#include "executor/checkpoint/checkpoint_root.h"
#include "executor/cpu_backend.h"
#ifdef STOWAGE_HAVE_CUDA_BACKEND
#include "executor/cuda/cuda_backend.h"
#endif
#include "executor/directory_lock.h"
#include "executor/faulty_backend.h"
#include "executor/host_memory.h"
#include "executor/model/blas_kernels.h"
#include "executor/nvme/io_error.h"
#include "executor/trainer.h"
#include "planner/chosen_plan.h"
#include "planner/profile_inputs.h"
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
  std::string backend = "cpu";  // or "cuda", where this stowage was built with CUDA
  std::string layers = "device";  // the cuda backend's layers: "device" kernels, or "host" (OpenBLAS on mirrors)
  bool enqueue_only = false;      // the cuda backend: the host only enqueues, ops timed by CUDA events
  std::string products = std::string(kProductsAsPlanned);  // or fp32, bf16, fp16 (layer_products.h)
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  int64_t steps_per_schedule = 0;  // 0: the trainer's default (executor::steps_per_run_schedule)
  std::string resume;  // a checkpoint directory, or "latest" under --checkpoint-dir
  std::string trace, predicted_trace;
  std::string init_from, export_weights;  // safetensors files (Hugging Face names)
  std::string fault;     // "block-write:3": fail the 3rd call of that kind (tests); "...:hang" hangs it
  double watchdog = 60;  // seconds without a finished op before the run is stopped
  bool as_json = false;
};

std::string short_bytes(int64_t b) {
  return core::format_bytes(core::Bytes(b), core::Prefix::kDecimal, 3);
}

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
    // Digits only, and N >= 1: "KIND:0" and "KIND:-2" never fire, which
    // would make a test pass without injecting anything (issue 12).
    const std::string n = text.substr(colon + 1);
    if (n.empty() || n.size() > 18 || !std::ranges::all_of(n, [](char ch) { return ch >= '0' && ch <= '9'; }))
      break;
    if (std::stoll(n) < 1) break;
    return executor::Fault{.kind = c, .nth = std::stoll(n), .message = "injected fault", .effect = effect};
  }
  return core::fail({{},
                     "--fault '" + given + "' is not KIND:N or KIND:N:hang",
                     "KIND one of allocate, copy, compute, optimizer, block-read, block-write; N >= 1"});
}

// --data must be a regular file: CLI::ExistingFile lets a FIFO (which blocks
// the read forever) and /dev/zero (which never ends) through (issue 12).
const CLI::Validator kRegularFile(
    [](std::string& path) {
      struct stat st {};
      if (::stat(path.c_str(), &st) != 0) return "cannot use '" + path + "': " + std::strerror(errno);
      if (!S_ISREG(st.st_mode)) return "'" + path + "' is not a regular file (a FIFO, device or directory)";
      return std::string();
    },
    "FILE");

// CLI11 would read "-1" into a uint64_t as 2^64 - 1 (issue 12).
const CLI::Validator kNotNegative(
    [](std::string& text) {
      return text.starts_with('-') ? std::string("must be 0 or more") : std::string();
    },
    "N >= 0");

// The progress line: one line per step on a terminal (rewritten in place),
// every tenth of the run otherwise; before the last step, the time the
// steps left take at the mean step so far.
class Progress {
 public:
  Progress(std::ostream& out, int64_t steps, int64_t first) : out_(out), steps_(steps), first_(first) {
    tty_ = isatty(STDOUT_FILENO) == 1 && &out == &std::cout;
  }
  void step(const executor::StepReport& r) {
    seconds_ += r.seconds;
    ++done_;
    const int64_t every = std::max<int64_t>(1, (steps_ - first_) / 10);
    const bool last = r.step + 1 == steps_;
    if (!tty_ && !last && (r.step - first_) % every != 0) return;
    char line[256];
    char skipped[64] = "";
    if (r.skipped_total > 0)
      std::snprintf(skipped, sizeof skipped, "  %s%lld skipped", r.skipped ? "overflow, " : "",
                    static_cast<long long>(r.skipped_total));
    std::snprintf(line, sizeof line, "step %4lld/%lld  loss %.4f%s  %7.3f s  %8.0f tokens/s",
                  static_cast<long long>(r.step + 1), static_cast<long long>(steps_), r.loss, skipped,
                  r.seconds, r.tokens_per_second);
    std::string moved;
    for (Lane lane : {Lane::kPcieH2d, Lane::kPcieD2h, Lane::kNvmeRead, Lane::kNvmeWrite}) {
      const int64_t b = r.bytes[static_cast<size_t>(lane)];
      if (b > 0) moved += "  " + std::string(core::to_string(lane)) + " " + short_bytes(b);
    }
    const std::string eta =
        last ? ""
             : "  eta " + core::format_clock(core::Seconds(seconds_ / static_cast<double>(done_) *
                                                           static_cast<double>(steps_ - r.step - 1)));
    out_ << (tty_ ? "\r\033[K" : "  ") << line << eta << moved << (tty_ && !last ? "" : "\n") << std::flush;
  }

 private:
  std::ostream& out_;
  int64_t steps_, first_;
  bool tty_ = false;
  double seconds_ = 0;  // of the steps reported so far
  int64_t done_ = 0;
};

// Busy share of each lane over the run: the union of its ops' spans.
std::array<double, core::kLaneCount> lane_busy(const core::Schedule& s, const core::Timeline& t,
                                               double seconds) {
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
                              const core::TraceOptions& options) {
  std::ostringstream text;
  core::write_chrome_trace(s, t, options, text);
  return write_file_atomically(path, text.str());
}

// Every output of the run checked, and the checkpoint root created and
// claimed, before anything is trained (issue 12): a bad path or a second run
// on the same root must cost nothing. kExitOk when all is well.
int prepare_outputs(const Context& context, const RunArgs& a,
                    std::optional<executor::DirectoryLock>& checkpoint_lock) {
  for (const std::string& path : {a.trace, a.predicted_trace, a.export_weights}) {
    if (path.empty()) continue;
    if (auto checked = check_output_path(path); !checked) {
      report(context, checked.error());
      return kExitCannotWrite;
    }
  }
  if (!a.checkpoint_dir.empty()) {
    auto lock = executor::DirectoryLock::acquire(a.checkpoint_dir, "checkpoint directory");
    if (!lock) {
      report(context, lock.error());
      return kExitCannotWrite;
    }
    checkpoint_lock.emplace(std::move(*lock));
    const auto foreign = executor::foreign_step_entries(a.checkpoint_dir, a.steps);
    if (!foreign.empty()) {
      *context.err << "error: " << foreign.front().string()
                   << ": not a Stowage checkpoint (no manifest), where this run may save step "
                   << executor::checkpoint_step(foreign.front().filename().native()).value_or(0)
                   << "; nothing was trained (move it away, or give another --checkpoint-dir)\n";
      if (foreign.size() > 1)
        *context.err << "  and " << foreign.size() - 1 << " more entries named like checkpoints\n";
      return kExitCannotWrite;
    }
  }
  return kExitOk;
}

// `stowage run --json` when there is no step left to train (docs/json.md).
std::string nothing_to_do_json(int64_t first_step) {
  return nlohmann::json{
      {"first_step", first_step}, {"losses", nlohmann::json::array()}, {"nothing_to_do", true}}
      .dump(2);
}

// The checkpoint to resume from, looked at before anything is set up. A
// missing or damaged one (no manifest, a truncated file) is bad input, 65,
// like a bad plan. One at or after --steps (re-running a finished job with
// --resume latest) has nothing to train: says so, exit 0 (it crashed before
// issue 12). nullopt when there is work to do.
std::optional<int> check_resume(const Context& context, const RunArgs& a, const std::filesystem::path& dir) {
  auto reader = executor::CheckpointReader::open(dir);
  if (!reader) return report(context, reader.error());
  const nlohmann::json meta = nlohmann::json::parse(reader->metadata_json(), nullptr, false);
  if (!meta.is_object() || !meta.contains("step") || !meta["step"].is_number_integer()) return std::nullopt;
  const auto step = meta["step"].get<int64_t>();
  if (step < a.steps) return std::nullopt;
  if (a.as_json) {
    *context.out << nothing_to_do_json(step) << '\n';
  } else {
    *context.out << "nothing to do: the checkpoint " << dir.string() << " is at step " << step
                 << " and --steps is " << a.steps << " (give a larger --steps to train further)\n";
  }
  return kExitOk;
}

// Whether every problem of a failed run lies in an input the user gave: the
// --data corpus (too small for the sequence length), the checkpoint resumed
// from (made with another plan, seed or corpus; a damaged blob) or the plan.
// Those are bad input (65, README), found before a step was trained;
// anything else is a run that failed (74).
bool lies_in_given_inputs(const core::Diagnostics& problems, const RunArgs& a,
                          const std::optional<std::filesystem::path>& resume) {
  namespace fs = std::filesystem;
  const auto inside = [](const fs::path& file, const fs::path& dir) {
    const std::string folder = (dir / "").lexically_normal().string();
    return file.lexically_normal().string().starts_with(folder);
  };
  return !problems.empty() && std::ranges::all_of(problems, [&](const core::Diagnostic& d) {
    if (d.where.file.empty()) return false;
    const fs::path file = d.where.file;
    return (!a.data.empty() && file.lexically_normal() == fs::path(a.data).lexically_normal()) ||
           file.lexically_normal() == fs::path(a.plan).lexically_normal() ||
           (resume && inside(file, *resume));
  });
}

// A signal that arrived while the run was being set up: nothing was
// trained, and what setup made (NVMe block files, locks) goes with the
// objects that made it on the way out.
int stopped_before_training(const Context& context, int signal_number) {
  *context.err << "stowage run: stopped by signal " << signal_number
               << " before training began; nothing was trained\n";
  return 128 + signal_number;
}

#ifdef STOWAGE_HAVE_CUDA_BACKEND
// --products, one of the words its check admits.
executor::cuda::ProductPrecision product_precision(const std::string& word) {
  for (const auto p : {executor::cuda::ProductPrecision::kBf16, executor::cuda::ProductPrecision::kFp16})
    if (word == executor::cuda::product_precision_name(p)) return p;
  return executor::cuda::ProductPrecision::kFp32;
}
#endif

// The backend --backend names, with the run's caps and NVMe store.
struct MadeBackend {
  std::unique_ptr<executor::Backend> backend;  // null: exit with exit_code
  int exit_code = kExitOk;
  const executor::CpuBackend* cpu = nullptr;  // the CPU backend, for its note on locked memory
};

// `products`: layer_products()'s answer.
MadeBackend make_backend(const Context& context, const RunArgs& a, const std::string& products,
                         executor::CpuBackendOptions options) {
  MadeBackend made;
  const std::string& kind = a.backend;
  try {
    if (kind == "cuda") {
#ifdef STOWAGE_HAVE_CUDA_BACKEND
      using executor::cuda::LayersOn;
      auto b = executor::cuda::CudaBackend::create(
          {.capacity = options.capacity,
           .optimizer_threads = options.optimizer_threads,
           .nvme = std::move(options.nvme),
           .layers = a.layers == "host" ? LayersOn::kHostMirrors : LayersOn::kDevice,
           .products = product_precision(products),
           .enqueue_only = a.enqueue_only});
      if (!b) {
        report(context, b.error());
        made.exit_code = kExitIoError;  // no usable device: the run cannot happen here
        return made;
      }
      made.backend = std::move(*b);
#else
      *context.err << "error: --backend cuda: this stowage was built without CUDA "
                      "(STOWAGE_WITH_CUDA; README)\n";
      made.exit_code = kExitUsage;
#endif
      return made;
    }
    auto b = executor::CpuBackend::create(std::move(options));
    if (!b) {
      made.exit_code = report(context, b.error());
      return made;
    }
    made.cpu = b->get();
    made.backend = std::move(*b);
  } catch (const executor::IoError& e) {
    *context.err << "error: " << e.what() << '\n';
    // An --nvme-dir another run holds, or a block file there that is not
    // ours: an output that cannot be written, as for the checkpoint root.
    const bool not_ours = e.kind() == executor::IoErrorKind::kSetup &&
                          (e.error_number() == EBUSY || e.error_number() == EEXIST);
    made.exit_code = not_ours ? kExitCannotWrite : kExitIoError;
  } catch (const std::exception& e) {
    *context.err << "error: " << e.what() << '\n';
    made.exit_code = kExitIoError;
  }
  return made;
}

// The device the run was on, and whether the prediction beside it is for
// that device: a CPU-backend run set beside an RTX 4090's prediction is not
// the simulator's error.
std::string ran_on_text(const core::TraceOrigin& ran_on, const core::TraceOrigin& predicted_for) {
  switch (core::same_device(predicted_for, ran_on)) {
    case core::SameDevice::kYes:
      return core::describe(ran_on) + ", the GPU of the prediction's machine";
    case core::SameDevice::kNo:
      return core::describe(ran_on) + "; the prediction is for " + core::describe(predicted_for);
    case core::SameDevice::kUnknown:
      break;
  }
  return core::describe(ran_on);
}

int run_run(const Context& context, const RunArgs& a) {
  // First: a signal during setup (while NVMe block files are being created,
  // say) is then a request to stop, not the default action, which would end
  // the process with those files left behind for the next run to refuse.
  const StopSignals signals;
  if (a.layers != "device" && a.backend != "cuda") {
    *context.err << "error: --layers " << a.layers << ": only the cuda backend runs the layers elsewhere than "
                 << "on the host (--backend cuda)\n";
    return kExitUsage;
  }
  if (a.products != kProductsAsPlanned && a.products != "fp32" &&
      (a.backend != "cuda" || a.layers != "device")) {
    *context.err << "error: --products " << a.products << ": only the cuda backend's device layers compute "
                 << "products in bf16 or fp16 (--backend cuda --layers device)\n";
    return kExitUsage;
  }
  if (a.enqueue_only && a.backend != "cuda") {
    *context.err << "error: --enqueue-only: only the cuda backend's calls can return before their work has run "
                 << "(--backend cuda)\n";
    return kExitUsage;
  }
  const core::ProfileCatalog catalog = context.catalog();
  auto plan = core::load_plan(a.plan, catalog.root());
  if (!plan) return report(context, plan.error());
  auto in = planner::load_inputs(catalog, plan->machine, plan->model, plan->training, &plan->places);
  if (!in) return report(context, in.error());
  if (core::Diagnostics d = executor::check_runnable(*plan, in->machine, in->model, in->training);
      !d.empty()) {
    for (core::Diagnostic& x : d) {
      if (x.where.file.empty()) x.where.file = a.plan;  // the plan asks for what cannot run
    }
    return report(context, d);
  }
  std::optional<executor::DirectoryLock> checkpoint_lock;  // held until the run ends
  if (const int code = prepare_outputs(context, a, checkpoint_lock); code != kExitOk) return code;

  // Which checkpoint to resume from, checked before the backend is set up.
  executor::TrainerOptions options{.steps = a.steps,
                                   .seed = a.seed,
                                   .data = a.data,
                                   .checkpoint_every = a.checkpoint_every,
                                   .plan_name = a.plan};
  options.steps_per_schedule = a.steps_per_schedule;
  options.watchdog = std::chrono::nanoseconds(static_cast<int64_t>(a.watchdog * 1e9));
  if (!a.checkpoint_dir.empty()) options.checkpoint_root = a.checkpoint_dir;
  if (a.resume == "latest") {
    if (a.checkpoint_dir.empty()) {
      *context.err << "error: --resume latest needs --checkpoint-dir\n";
      return kExitUsage;
    }
    auto latest = executor::find_latest_intact(a.checkpoint_dir);
    if (!latest) return report(context, latest.error());
    if (!*latest) {
      *context.err << "error: no checkpoint under " << a.checkpoint_dir << " to resume from\n";
      return kExitBadInput;
    }
    options.resume = **latest;
  } else if (!a.resume.empty()) {
    options.resume = a.resume;
  }
  if (options.resume) {
    if (const auto done = check_resume(context, a, *options.resume)) return *done;
  }
  // Lowering refuses a schedule past core::kMaxScheduleOps, after the model
  // is set up and in terms of micro-steps: said here, of the argument.
  if (const int64_t most =
          executor::steps_per_run_schedule(*plan, in->model, in->training, core::kMaxScheduleOps);
      a.steps_per_schedule > most) {
    *context.err << "error: --steps-per-schedule " << a.steps_per_schedule
                 << ": a schedule of this plan holds at most " << most << " steps (about "
                 << core::kMaxScheduleOps / 1'000'000 << " million ops)\n";
    return kExitUsage;
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
  if (!a.export_weights.empty()) options.export_weights = a.export_weights;
  options.initial_weights = std::move(initial_weights);

  executor::CpuBackendOptions backend_options{.optimizer_threads = a.threads};
  int64_t device = in->machine.gpu.memory.count();
  if (!a.device_memory.empty()) {
    auto cap = core::parse_bytes(a.device_memory);
    if (!cap || cap->count() <= 0) {
      *context.err << "error: --device-memory '" << a.device_memory
                   << "' is not a size (expected e.g. '32 MiB')\n";
      return kExitUsage;
    }
    device = std::min(device, cap->count());
  }
  backend_options.capacity[static_cast<size_t>(Tier::kGpu)] = device;
  const bool uses_nvme = std::any_of(
      plan->policy.partitions.begin(), plan->policy.partitions.end(),
      [](const auto& p) { return p.param16 == Tier::kNvme || p.optimizer_states == Tier::kNvme; });
  if (uses_nvme) {
    auto block = a.block_size.empty()
                     ? std::expected<core::Bytes, core::UnitError>(plan->policy.nvme_block_size)
                     : core::parse_bytes(a.block_size);
    if (!block) {
      *context.err << "error: --block-size '" << a.block_size << "' is not a size (expected e.g. '1 MiB')\n";
      return kExitUsage;
    }
    // The regions the NVMe lanes' slots move at once (the plan's prefetch
    // depth) share each direction's queue depth.
    executor::BlockStoreOptions nvme{
        .block_bytes = *block,
        .queue_depth = a.queue_depth > 0 ? a.queue_depth : plan->policy.nvme_queue_depth};
    for (const std::string& d :
         a.nvme_dirs.empty() ? std::vector<std::string>{"stowage-nvme"} : a.nvme_dirs) {
      nvme.directories.emplace_back(d);
    }
    // The plan's block size and queue depth were checked when it loaded:
    // what is wrong here came from --block-size, --queue-depth or
    // --nvme-dir, a bad command line (README; issue 12: it exited 65).
    if (core::Diagnostics d = executor::validate(nvme); !d.empty()) {
      // Each problem named by the argument it came from, not the store.
      for (core::Diagnostic& problem : d) {
        // (--queue-depth's range is checked as it is parsed.)
        for (const auto& [about, argument] :
             {std::pair{"nvme: block size", "--block-size"}, std::pair{"nvme: empty directory", "--nvme-dir"},
              std::pair{"nvme: no directory", "--nvme-dir"}}) {
          if (problem.what.starts_with(about)) {
            problem.what = std::string(argument) + ": " + problem.what.substr(std::string_view("nvme: ").size());
            break;
          }
        }
      }
      report(context, d);
      return kExitUsage;
    }
    backend_options.nvme = std::move(nvme);
  }
  // --fault is an argument: a wrong one is a bad command line (2), found
  // before the backend sets up its NVMe files.
  std::optional<executor::Fault> fault;
  if (!a.fault.empty()) {
    auto parsed = parse_fault(a.fault);
    if (!parsed) {
      report(context, parsed.error());
      return kExitUsage;
    }
    fault = *parsed;
  }
  if (const int n = StopSignals::received().load(); n != 0) return stopped_before_training(context, n);
  const std::string products = layer_products(a.products, a.backend, a.layers, in->training.precision);
  MadeBackend made = make_backend(context, a, products, std::move(backend_options));
  if (!made.backend) return made.exit_code;
  if (const int n = StopSignals::received().load(); n != 0) return stopped_before_training(context, n);
  executor::Backend* backend = made.backend.get();
  std::unique_ptr<executor::FaultyBackend> faulty;
  if (fault) {
    faulty = std::make_unique<executor::FaultyBackend>(*backend, *fault);
    backend = faulty.get();
  }
  std::ostream& out = *context.out;
  if (!a.as_json) {
    // Which kernels the CPU backend's matrix products run on: 2.7x apart
    // between OpenBLAS's generic ones and AVX-512 (executor/model/blas_kernels.h).
    // And on the GPU, where the layers ran and in what their products.
    const std::string kernels =
        a.backend == "cpu"   ? " (OpenBLAS's " + executor::model::blas_kernels() + " kernels)"
        : a.layers == "host" ? " (the layers on the host)"
                             : " (the layers on the device, " + products + " products)";
    out << "Training " << in->model.label << " with plan " << a.plan << " on the " << backend->name() << " backend"
        << kernels << "\n"
        << "  device memory cap " << short_bytes(device)
        << (a.device_memory.empty() ? " (the plan's GPU)" : " (--device-memory)") << ", " << a.steps
        << " steps, seed " << a.seed << (options.resume ? ", resuming from " + options.resume->string() : "")
        << "\n";
  }
  Progress progress(out, a.steps, 0);
  if (!a.as_json) {
    options.on_step = [&progress](const executor::StepReport& r) { progress.step(r); };
    options.on_note = [&out](const std::string& note) { out << "  " << note << '\n'; };
  }
  core::Result<executor::TrainingRun> run = std::unexpected(core::Diagnostics{});
  options.stop = &StopSignals::received();
  // The run applies memory in the order the simulator predicts for the
  // plan's machine, so its measured peaks are the ones printed beside it.
  options.predict = [&](const core::Schedule& s) { return sim::simulate(s, in->machine).timeline; };
  options.host_memory_available = [] { return executor::available_host_memory(); };
  try {
    run = executor::train(*plan, in->machine, in->model, in->training, *backend, options);
  } catch (const std::exception& e) {
    *context.err << "error: " << e.what() << '\n';
    return kExitIoError;
  }
  const int signal_number = StopSignals::received().load();
  if (!run) {
    report(context, run.error());
    if (signal_number != 0) return 128 + signal_number;
    return lies_in_given_inputs(run.error(), a, options.resume) ? kExitBadInput : kExitIoError;
  }
  if (run->interrupted) {
    *context.err << "stowage run: stopped by signal " << signal_number << " after step "
                 << run->first_step + static_cast<int64_t>(run->losses.size())
                 << (run->checkpoints.empty() ? "; no checkpoint (give --checkpoint-dir to keep the steps)"
                                              : "; checkpoint written: " + run->checkpoints.back())
                 << '\n';
    return 128 + signal_number;
  }
  if (run->losses.empty()) {  // nothing was trained; check_resume() normally says so first
    if (a.as_json) {
      *context.out << nothing_to_do_json(run->first_step) << '\n';
    } else {
      *context.out << "nothing to do: training starts at step " << run->first_step << ", --steps is "
                   << a.steps << '\n';
    }
    return kExitOk;
  }
  if (made.cpu != nullptr && !made.cpu->host_memory_locked() && !a.as_json) {
    out << "  note: host memory could not be locked (RLIMIT_MEMLOCK); host tiers ran pageable\n";
  }
  if (a.backend == "cuda" && !a.as_json) {
    // Said beside every CUDA run, so that nobody reads its step against the GPU's prediction unawares.
    if (a.layers == "host") {
      out << "  note: --layers host ran the model's layers on the host (docs/gpu.md): gpu.compute and\n"
             "        the step time are the host's, not the GPU's\n";
    } else if (const std::string planned =
                   layer_products(kProductsAsPlanned, a.backend, a.layers, in->training.precision);
               products != planned) {
      out << "  note: the layers' products ran in " << products << " on the GPU (cuBLASLt), where the plan\n"
          << "        trains in " << planned << " and the prediction prices " << planned
          << " tensor-core products (--products " << planned << "; docs/backend.md)\n";
    }
  }

  const auto busy = lane_busy(run->schedule, run->timeline, run->schedule_seconds);
  // Where the times come from: this run's device, and the plan's machine
  // the prediction beside it is for (core/trace_origin.h).
  const core::TraceOrigin ran_on = core::measured_on(std::string(backend->name()), backend->device_name());
  const core::TraceOrigin predicted_for = core::predicted_on(in->machine);
  if (!a.trace.empty()) {
    const core::TraceOptions measured_options = {
        .title = "measured: " + in->model.name + ", " + a.plan + ", on " + ran_on.device,
        .source = "measured",
        .origin = ran_on};
    if (core::Diagnostics d = write_trace(a.trace, run->schedule, run->timeline, measured_options);
        !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  // The simulator on the same ops, for the plan's machine: what this run
  // would take there, beside what it took here.
  const sim::Prediction predicted = sim::simulate(run->schedule, in->machine);
  // What that prediction rests on that no profile said, as `stowage
  // simulate` warns of it (an assumed NVMe write rate, pinned host RAM).
  const std::vector<std::string> warnings =
      planner::simulation_warnings(*in, plan->policy, run->schedule, predicted.summary);
  if (!a.predicted_trace.empty()) {
    core::TraceOptions trace_options = sim::predicted_trace_options(
        predicted.summary, "predicted: " + in->model.name + " on " + in->machine.name + ", " + a.plan,
        in->machine);
    trace_options.warnings = warnings;
    if (core::Diagnostics d = write_trace(a.predicted_trace, run->schedule, predicted.timeline, trace_options);
        !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  const double first = run->losses.front(), last = run->losses.back();
  const double step_seconds = run->seconds / static_cast<double>(run->losses.size());
  // The step to set beside the prediction (the simulator's steady state):
  // the median step after the first, as `stowage compare` takes it, not the
  // mean over the run, which counts the first step's warm-up.
  const calibration::TraceMetrics metrics = calibration::trace_metrics(run->schedule, run->timeline);
  const double steady_seconds = static_cast<double>(metrics.steady_step_time()) * 1e-9;  // ns
  if (a.as_json) {
    nlohmann::json lanes = nlohmann::json::object();
    for (Lane lane : core::kAllLanes)
      lanes[std::string(core::to_string(lane))] = busy[static_cast<size_t>(lane)];
    out << nlohmann::json{{"first_step", run->first_step},
                          {"losses", run->losses},
                          {"held_out_loss", run->held_out_loss},
                          {"unigram_entropy", run->unigram_entropy},
                          {"seconds", run->seconds},
                          {"steady_step_seconds", steady_seconds},
                          {"lane_busy", lanes},
                          {"schedules", run->schedules},
                          {"steps_per_schedule", run->schedule.steps},
                          {"backend", ran_on.backend},
                          {"device", ran_on.device},
                          {"checkpoints", run->checkpoints},
                          {"warnings", warnings}}
               .dump(2)
        << '\n';
    return kExitOk;
  }
  TextTable t({Align::kLeft, Align::kLeft});
  char buf[256];
  std::snprintf(buf, sizeof buf, "%.4f -> %.4f nats/byte over steps %lld-%lld", first, last,
                static_cast<long long>(run->first_step + 1),
                static_cast<long long>(run->first_step + static_cast<int64_t>(run->losses.size())));
  t.row({"training loss", buf});
  std::snprintf(
      buf, sizeof buf, "%.4f nats/byte (unigram entropy of the data %.4f: %s)", run->held_out_loss,
      run->unigram_entropy,
      run->held_out_loss < run->unigram_entropy ? "learned more than byte frequencies" : "not yet below it");
  t.row({"held-out loss", buf});
  if (metrics.step_times.size() > 1) {
    std::snprintf(buf, sizeof buf,
                  "%.3f s per step (the median after the first), %.0f tokens/s; %.3f s over all %zu",
                  steady_seconds, static_cast<double>(run->schedule.tokens_per_step) / steady_seconds,
                  step_seconds, run->losses.size());
  } else {
    std::snprintf(buf, sizeof buf, "%.3f s per step, %.0f tokens/s", step_seconds,
                  static_cast<double>(run->schedule.tokens_per_step) / step_seconds);
  }
  t.row({"measured", buf});
  std::snprintf(buf, sizeof buf, "%s per step on %s (the simulator on the same ops), bound by %s",
                core::format_seconds(predicted.summary.step_time).c_str(), in->machine.name.c_str(),
                std::string(core::to_string(predicted.summary.bounding_lane)).c_str());
  t.row({"predicted", buf});
  t.row({"ran on", ran_on_text(ran_on, predicted_for)});
  std::string lanes;
  for (Lane lane : core::kAllLanes) {
    const double b = busy[static_cast<size_t>(lane)];
    if (b > 0)
      lanes += (lanes.empty() ? "" : ", ") + std::string(core::to_string(lane)) + " " +
               std::to_string(static_cast<int>(b * 100 + 0.5)) + "%";
  }
  t.row({"lane busy", lanes});
  // Over every schedule of the run: measured, and as the simulator placed
  // each one's memory effects (the order the run followed).
  const auto& peak = run->peak;
  t.row({"peak memory", "gpu " + short_bytes(peak[0].count()) + " of " + short_bytes(device) + " cap, cpu " +
                            short_bytes(peak[1].count()) + ", nvme " + short_bytes(peak[2].count())});
  const auto& p = run->predicted_peak.value_or(predicted.engine.peak);
  t.row({"predicted peak", "gpu " + short_bytes(p[0].count()) + ", cpu " + short_bytes(p[1].count()) +
                               ", nvme " + short_bytes(p[2].count()) + " (the schedule's memory effects)"});
  if (run->schedules > 1) {
    std::snprintf(buf, sizeof buf,
                  "the run was %lld schedules of up to %lld steps (--steps-per-schedule); the lane busy, the "
                  "measured step and the traces are of the first",
                  static_cast<long long>(run->schedules), static_cast<long long>(run->schedule.steps));
    t.row({"schedules", buf});
  }
  out << '\n';
  for (const std::string& w : warnings) out << "warning: " << w << '\n';
  if (!warnings.empty()) out << '\n';
  t.print(out, 2);
  if (!a.export_weights.empty()) out << "\n  weights (safetensors): " << a.export_weights << '\n';
  // A run of several schedules traced its first.
  const std::string first_schedule =
      run->schedules > 1 ? "steps " + std::to_string(run->first_step + 1) + "-" +
                               std::to_string(run->first_step + run->schedule.steps) + ", the first schedule"
                         : "";
  if (!a.trace.empty())
    out << "\n  measured trace" << (first_schedule.empty() ? "" : " (" + first_schedule + ")") << ": "
        << a.trace << '\n';
  if (!a.predicted_trace.empty())
    out << "  predicted trace (same ops, on " << in->machine.name
        << (first_schedule.empty() ? "" : ", " + first_schedule) << "): " << a.predicted_trace << '\n';
  return kExitOk;
}

}  // namespace

CommandBody add_run_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("run", "Train for real: run a plan on this machine (CPU or CUDA backend)");
  auto a = std::make_shared<RunArgs>();
  sub->add_option("plan", a->plan, "Plan file (stowage/plan/v1)")->required()->check(CLI::ExistingFile);
  sub->add_option("--steps", a->steps, "Train until this step")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  sub->add_option("--seed", a->seed, "Seed of the initial parameters and the data order")
      ->capture_default_str()
      ->check(kNotNegative);
  sub->add_option("--data", a->data,
                  "A text file to train on, byte by byte (default: generated English-like text)")
      ->check(kRegularFile);
  sub->add_option("--device-memory", a->device_memory,
                  "Cap on device memory, e.g. '32 MiB' (default: the plan machine's GPU memory)");
  sub->add_option("--nvme-dir", a->nvme_dirs,
                  "Directory on an NVMe drive; repeat to stripe (default: ./stowage-nvme)");
  sub->add_option("--block-size", a->block_size, "NVMe I/O block size (default: the plan's nvme_block_size)");
  sub->add_option("--queue-depth", a->queue_depth,
                  "NVMe requests in flight (default: the plan's nvme_queue_depth)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("--backend", a->backend, "Where the run happens: cpu, or cuda (one GPU; a build with CUDA)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cpu", "cuda"}));
  sub->add_option("--layers", a->layers,
                  "Where the cuda backend runs the model's layers: device (CUDA kernels), or host (OpenBLAS over "
                  "copies of their device buffers: the cpu backend's losses, bit for bit)")
      ->capture_default_str()
      ->check(CLI::IsMember({"device", "host"}));
  sub->add_option(
         "--products", a->products,
         "The layers' matrix products: plan (the plan's bf16 or fp16 where the cuda backend runs the layers "
         "on the device, fp32 elsewhere), fp32 (the cpu backend's math), or bf16 or fp16 (the cuda "
         "backend's device layers: operands rounded to it on the tensor cores, sums in fp32)")
      ->capture_default_str()
      ->check(
          CLI::IsMember(std::vector<std::string>{std::string(kProductsAsPlanned), "fp32", "bf16", "fp16"}));
  sub->add_flag("--enqueue-only", a->enqueue_only,
                "The cuda backend's host only enqueues: lanes order each other by CUDA events alone, released "
                "memory is reused behind the work before it, and ops are timed by events on their streams");
  sub->add_option("--threads", a->threads, "Threads of each CPU optimizer step")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_option("--checkpoint-dir", a->checkpoint_dir, "Where checkpoints go (step-NNNNNN directories)");
  sub->add_option("--checkpoint-every", a->checkpoint_every,
                  "Steps between checkpoints (default: at the end)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  sub->add_option("--steps-per-schedule", a->steps_per_schedule,
                  "Steps lowered and run as one schedule; the measured and predicted traces are of the first "
                  "(default: as many as about a million ops hold)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  sub->add_option("--resume", a->resume,
                  "Resume from a checkpoint directory, or 'latest' under --checkpoint-dir");
  sub->add_option("--init-from", a->init_from,
                  "Start from these weights: a safetensors file with Hugging Face names")
      ->check(CLI::ExistingFile);
  sub->add_option("--export-weights", a->export_weights,
                  "After the last step, write the fp32 weights as safetensors with Hugging Face names");
  sub->add_option("--trace", a->trace, "Write the measured timeline as Chrome trace JSON");
  sub->add_option("--predicted-trace", a->predicted_trace, "Write the simulator's timeline of the same ops");
  sub->add_option(
      "--fault", a->fault,
      "Fail the Nth backend call of a kind, e.g. block-write:3, or hang it, compute:5:hang (for tests)");
  sub->add_option("--watchdog", a->watchdog, "Stop the run when no op finished for this many seconds")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1e6));
  sub->add_flag("--json", a->as_json, "Print JSON");
  return [&context, a]() { return run_run(context, *a); };
}

}  // namespace stowage::cli
