#include <chrono>
#include <thread>

#include <unistd.h>

#include "probe/probes.h"

namespace stowage::probe {

double best_seconds(int repeats, const std::function<void()>& f) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return std::max(best, 1e-9);
}

Measurements probe_machine(const ProbeOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  Measurements m;
  m.cores = o.max_threads > 0 ? o.max_threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  m.dram_bytes = static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
  ProgressReport report;
  report.total = memory_probe_steps(o, m.cores) + adam_probe_steps(o, m.cores) + compute_probe_steps(o) +
                 disk_probe_steps(o) + store_probe_steps(o);
  const Tick tick = [&](const char* what) {
    report.done += 1;
    report.elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    report.what = what;
    if (o.on_progress) o.on_progress(report);
  };
  probe_memory(o, m, tick);
  probe_adam(o, m, tick);
  probe_compute(o, m, tick);
  probe_disk(o, m, tick);
  probe_store(o, m, tick);
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

}  // namespace stowage::probe
