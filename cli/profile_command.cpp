// `stowage profile [-o machine.yaml] [--nvme-dir DIR] [--quick] [--gpu
// NAME|auto]`: measures this machine (probe/) and writes a machine profile
// that the planner, the simulator and `stowage run` take like the bundled
// ones. Its device is the CPU backend's, as measured, or with --gpu the GPU
// of that bundled profile (`auto`: the one the CUDA driver names, where
// this stowage has the CUDA backend). The output and the GPU are checked
// before the measuring starts, and a file Stowage did not write (no
// `format: stowage/machine/v1` first line) is never replaced.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/machine_output.h"
#include "cli/output_file.h"
#include "core/nearest_name.h"
#include "core/profile_catalog.h"
#include "core/units.h"
#ifdef STOWAGE_HAVE_CUDA_BACKEND
#include "executor/cuda/cuda_device.h"
#include "executor/cuda/device_probe.h"
#endif
#include "probe/gpu_calibration.h"
#include "probe/probes.h"
#include "probe/profile_writer.h"

namespace stowage::cli {
namespace {

struct ProfileArgs {
  std::string output;
  std::string nvme_dir;
  std::string device_memory;
  std::string gpu;  // a bundled GPU profile's name, "auto", or empty: the CPU backend
  int threads = 1;
  bool quick = false;
};

void draw_progress(std::ostream& err, const probe::ProgressReport& r, bool tty) {
  const double share = r.done / r.total;
  const double left = share > 0 ? r.elapsed / share - r.elapsed : 0;
  char bar[21];
  const int filled = static_cast<int>(share * 20 + 0.5);
  for (int i = 0; i < 20; ++i) bar[i] = i < filled ? '#' : '.';
  bar[20] = '\0';
  char line[200];
  std::snprintf(line, sizeof line, "[%s] %3.0f%%  %-40s about %.0f s left", bar, share * 100, r.what.c_str(), left);
  err << (tty ? "\r\033[K" : "") << line << (tty ? "" : "\n") << std::flush;
}

// The CUDA driver's name of this machine's GPU, or why there is none to
// ask: nullopt with the reason in `why` (no CUDA in this build, no device).
std::optional<std::string> cuda_device_name(std::string& why) {
#ifdef STOWAGE_HAVE_CUDA_BACKEND
  const executor::cuda::CudaPresence presence = executor::cuda::cuda_presence();
  if (!presence.present()) {
    why = "no CUDA device: " + presence.absent_because;
    return std::nullopt;
  }
  try {
    return executor::cuda::device_name(0);
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
#else
  why = "this stowage was built without CUDA (STOWAGE_WITH_CUDA; README), so it cannot ask the driver";
  return std::nullopt;
#endif
}

// The GPU --gpu names, or the exit code after saying why not.
std::variant<core::GpuSpec, int> gpu_to_profile(const Context& context, const std::string& gpu) {
  const core::ProfileCatalog& catalog = context.catalog();
  if (gpu == "auto") {
    std::string why;
    const std::optional<std::string> device = cuda_device_name(why);
    if (!device) {
      *context.err << "error: --gpu auto: " << why
                   << "; name the GPU's profile with --gpu NAME (stowage profiles gpu)\n";
      return kExitUsage;
    }
    std::optional<core::GpuSpec> found = catalog.gpu_for_device(*device);
    if (!found) {
      *context.err
          << "error: --gpu auto: no bundled GPU profile lists the device '" << *device
          << "' (device_names in profiles/gpus; docs/formats/profiles.md); name the nearest with --gpu NAME "
             "only if its figures are this GPU's (stowage profiles gpu)\n";
      return kExitUsage;
    }
    return std::move(*found);
  }
  const std::vector<std::string> names = catalog.names(core::ProfileKind::kGpu);
  if (std::ranges::find(names, gpu) == names.end()) {
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    *context.err << "error: --gpu '" << gpu << "' is not a bundled GPU profile ("
                 << core::did_you_mean(gpu, names) << "expected auto or one of: " << known << ")\n";
    return kExitUsage;
  }
  core::Result<core::GpuSpec> spec = catalog.gpu(gpu);
  if (!spec) return report(context, spec.error());
  return std::move(*spec);
}

// --gpu auto: the GPU's copies, memory and GEMMs (device_probe.h), which
// its calibration is made of; throws CudaError where a call fails.
probe::GpuMeasurements measure_the_gpu(const core::GpuSpec& gpu, bool quick) {
#ifdef STOWAGE_HAVE_CUDA_BACKEND
  executor::cuda::GpuProbeSizes sizes = executor::cuda::gpu_probe_sizes(quick);
  sizes.bf16 = gpu.bf16_rate.has_value();
  const executor::cuda::GpuRates rates = executor::cuda::measure_gpu(sizes);
  probe::GpuMeasurements m{
      .device = rates.device, .hbm_copy = rates.hbm_copy, .gemm_type = sizes.bf16 ? "bf16" : "fp16"};
  for (const executor::cuda::CopyRates& c : rates.pinned)
    m.pinned.push_back({.bytes = c.bytes, .h2d = c.h2d, .d2h = c.d2h});
  for (const executor::cuda::GemmRate& g : rates.gemms) m.gemms.push_back(g.flops_per_s);
  return m;
#else
  (void)gpu, (void)quick;
  throw std::logic_error("--gpu auto resolved without the CUDA backend");
#endif
}

// On a machine with a GPU, a profile of the CPU backend is worth a word:
// plans made on it are plans for the CPU backend, not for that GPU.
void note_an_unprofiled_gpu(const Context& context) {
  std::string why;
  const std::optional<std::string> device = cuda_device_name(why);
  if (!device) return;
  const std::optional<core::GpuSpec> found = context.catalog().gpu_for_device(*device);
  *context.err << "note: this machine has a CUDA GPU (" << *device << "); this profile's device is the CPU "
               << "backend (stowage run's default), so plans made on it are for that; "
               << (found ? "--gpu auto profiles the GPU (" + found->name + ")"
                         : "no bundled GPU profile lists this one (device_names in profiles/gpus)")
               << '\n';
}

int run_profile(const Context& context, const ProfileArgs& a) {
  if (!a.gpu.empty() && !a.device_memory.empty()) {
    *context.err << "error: --device-memory caps the CPU backend's device; with --gpu the device is the GPU, "
                    "whose memory its profile gives\n";
    return kExitUsage;
  }
  std::optional<core::GpuSpec> gpu;
  if (!a.gpu.empty()) {
    std::variant<core::GpuSpec, int> chosen = gpu_to_profile(context, a.gpu);
    if (const int* code = std::get_if<int>(&chosen)) return *code;
    gpu = std::move(std::get<core::GpuSpec>(chosen));
  }
  if (!a.output.empty()) {
    if (core::Diagnostics d = check_machine_output(a.output); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  probe::ProfileWriterOptions writer{.name = "This machine",
                                     .device_memory = 0,
                                     .optimizer_threads = a.threads,
                                     .quick = a.quick,
                                     .gpu = gpu};
  if (!a.device_memory.empty()) {
    auto cap = core::parse_bytes(a.device_memory);
    if (!cap || cap->count() <= 0) {
      *context.err << "error: --device-memory '" << a.device_memory << "' is not a size (expected e.g. '4 GiB')\n";
      return kExitUsage;
    }
    writer.device_memory = cap->count();
  }
  probe::ProbeOptions options{.depth = a.quick ? probe::Depth::kQuick : probe::Depth::kFull,
                              .cpu_device = !gpu};
  if (!gpu) note_an_unprofiled_gpu(context);
  if (!a.nvme_dir.empty()) options.disk_dir = a.nvme_dir;
  const bool tty = isatty(STDERR_FILENO) == 1 && context.err == &std::cerr;
  options.on_progress = [&](const probe::ProgressReport& r) { draw_progress(*context.err, r, tty); };
  probe::Measurements m;
  try {
    m = probe::probe_machine(options);
  } catch (const std::exception& e) {
    *context.err << (tty ? "\n" : "") << "error: " << e.what() << '\n';
    return kExitIoError;
  }
  if (tty) *context.err << '\n';
  if (gpu && a.gpu == "auto") {
    *context.err << "measuring the GPU (" << gpu->label << "): copies, memory, GEMMs\n";
    const auto start = std::chrono::steady_clock::now();
    try {
      m.gpu = measure_the_gpu(*gpu, a.quick);
      m.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    } catch (const std::exception& e) {
      *context.err << "error: " << e.what() << '\n';
      return kExitIoError;
    }
    core::CostParameters scratch;
    if (const std::string missing = probe::apply_gpu_calibration(*m.gpu, *gpu, scratch); !missing.empty())
      *context.err << "warning: the GPU's calibration is left at its defaults: " << missing << '\n';
  }
  const std::string yaml = probe::machine_profile_yaml(m, writer);
  if (a.output.empty()) {
    *context.out << yaml;
    return kExitOk;
  }
  if (core::Diagnostics d = write_file_atomically(a.output, yaml); !d.empty()) {
    report(context, d);
    return kExitCannotWrite;
  }
  *context.out << "wrote " << a.output << " (measured in " << static_cast<int>(m.seconds + 0.5) << " s)\n";
  return kExitOk;
}

}  // namespace

CommandBody add_profile_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("profile", "Measure this machine and write a machine profile");
  auto a = std::make_shared<ProfileArgs>();
  sub->add_option("-o,--output", a->output, "Write the profile here (default: print it)");
  sub->add_option("--nvme-dir", a->nvme_dir, "Measure O_DIRECT I/O in this directory (default: no disk)")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--device-memory", a->device_memory, "The CPU backend's device cap to write (default: half the RAM)");
  sub->add_option(
      "--gpu", a->gpu,
      "The device is this bundled GPU profile (stowage profiles gpu), or auto: the one the CUDA driver "
      "names, its copies, memory and GEMMs measured (default: the CPU backend, measured)");
  sub->add_option("--threads", a->threads, "Threads of each CPU optimizer step the profile is for (stowage run --threads)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_flag("--quick", a->quick, "One size per test, short repeats: under a minute");
  return [&context, a]() { return run_profile(context, *a); };
}

}  // namespace stowage::cli
