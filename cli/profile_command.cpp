// `stowage profile [-o machine.yaml] [--nvme-dir DIR] [--quick]`: measures
// this machine (probe/) and writes a machine profile that the planner, the
// simulator and `stowage run` take like the bundled ones. The output is
// checked before the measuring starts, and a file Stowage did not write (no
// `format: stowage/machine/v1` first line) is never replaced.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <ostream>

#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/machine_output.h"
#include "cli/output_file.h"
#include "core/units.h"
#include "probe/probes.h"
#include "probe/profile_writer.h"

namespace stowage::cli {
namespace {

struct ProfileArgs {
  std::string output;
  std::string nvme_dir;
  std::string device_memory;
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

int run_profile(const Context& context, const ProfileArgs& a) {
  if (!a.output.empty()) {
    if (core::Diagnostics d = check_machine_output(a.output); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  probe::ProfileWriterOptions writer{.name = "This machine", .device_memory = 0, .optimizer_threads = a.threads, .quick = a.quick};
  if (!a.device_memory.empty()) {
    auto cap = core::parse_bytes(a.device_memory);
    if (!cap || cap->count() <= 0) {
      *context.err << "error: --device-memory '" << a.device_memory << "' is not a size (expected e.g. '4 GiB')\n";
      return kExitUsage;
    }
    writer.device_memory = cap->count();
  }
  probe::ProbeOptions options{.depth = a.quick ? probe::Depth::kQuick : probe::Depth::kFull};
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
  CLI::App* sub = app.add_subcommand("profile", "Measure this machine and write a machine profile (CPU backend)");
  auto a = std::make_shared<ProfileArgs>();
  sub->add_option("-o,--output", a->output, "Write the profile here (default: print it)");
  sub->add_option("--nvme-dir", a->nvme_dir, "Measure O_DIRECT I/O in this directory (default: no disk)")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--device-memory", a->device_memory, "The CPU backend's device cap to write (default: half the RAM)");
  sub->add_option("--threads", a->threads, "Threads of each CPU optimizer step the profile is for (stowage run --threads)")
      ->capture_default_str()
      ->check(CLI::Range(1, 256));
  sub->add_flag("--quick", a->quick, "One size per test, short repeats: under a minute");
  return [&context, a]() { return run_profile(context, *a); };
}

}  // namespace stowage::cli
