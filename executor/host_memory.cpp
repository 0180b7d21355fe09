#include "executor/host_memory.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

#include "core/units.h"

namespace stowage::executor {

std::optional<int64_t> mem_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  const size_t at = meminfo.find(kKey);
  if (at == std::string_view::npos || (at > 0 && meminfo[at - 1] != '\n')) return std::nullopt;
  std::string_view rest = meminfo.substr(at + kKey.size());
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  int64_t kib = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
  if (ec != std::errc{} || kib < 0 || std::string_view(end, rest.data() + rest.size()).substr(0, 3) != " kB")
    return std::nullopt;
  return kib * 1024;
}

std::optional<int64_t> available_host_memory() {
  std::ifstream in("/proc/meminfo");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return mem_available(text.str());
}

core::Diagnostics check_host_memory(const core::Schedule& schedule, const Backend& backend,
                                    int64_t available) {
  int64_t need = 0;
  std::string parts;
  for (core::Tier tier : core::kAllTiers) {
    if (!backend.in_host_memory(tier)) continue;
    int64_t bytes = schedule.resident[static_cast<size_t>(tier)].count();
    if (const int64_t cap = backend.capacity(tier); cap > 0) bytes = std::min(bytes, cap);
    if (bytes == 0) continue;
    need += bytes;
    parts += (parts.empty() ? "" : ", ") + std::string(core::to_string(tier)) + " tier " +
             core::format_bytes(core::Bytes(bytes));
  }
  if (need <= available) return {};
  return {
      {{},
       "host memory: the plan's parameters and optimizer states where they rest, with its staging buffers, "
       "need " +
           core::format_bytes(core::Bytes(need)) + " of this machine's memory on the " +
           std::string(backend.name()) + " backend (" + parts + ") before any activation, and " +
           core::format_bytes(core::Bytes(available)) + " is available (MemAvailable, /proc/meminfo)",
       "a plan that keeps more on NVMe, a smaller model, or a machine with more memory"}};
}

int64_t host_memory_peak(const core::Timeline& predicted, const Backend& backend) {
  std::array<int64_t, 3> held{};
  int64_t peak = 0;
  for (const core::MemorySample& m : predicted.memory) {
    if (!backend.in_host_memory(m.tier)) continue;
    const int64_t cap = backend.capacity(m.tier);
    held[static_cast<size_t>(m.tier)] = cap > 0 ? std::min(m.bytes.count(), cap) : m.bytes.count();
    peak = std::max(peak, held[0] + held[1] + held[2]);
  }
  return peak;
}

namespace {

int64_t held_in_host_memory(const Backend& backend) {
  int64_t held = 0;
  for (core::Tier tier : core::kAllTiers) held += backend.in_host_memory(tier) ? backend.in_use(tier) : 0;
  return held;
}

}  // namespace

std::optional<std::string> host_memory_warning(const core::Timeline& predicted, const Backend& backend,
                                               int64_t available) {
  const int64_t more = host_memory_peak(predicted, backend) - held_in_host_memory(backend);
  if (more > available || available - more >= kHostMemoryMargin) return std::nullopt;
  return "at its predicted peak the run leaves " + core::format_bytes(core::Bytes(available - more)) +
         " of the " + core::format_bytes(core::Bytes(available)) +
         " this machine has free (MemAvailable): what the process holds beside the schedule's buffers comes "
         "on "
         "top, and if that is more the kernel kills the run (a smaller micro-batch or activation "
         "checkpointing "
         "leaves more)";
}

core::Diagnostics check_host_memory_peak(const core::Timeline& predicted, const Backend& backend,
                                         int64_t available) {
  const int64_t held = held_in_host_memory(backend);
  const int64_t peak = host_memory_peak(predicted, backend);
  if (peak - held <= available) return {};
  return {
      {{},
       "host memory: the run's predicted peak in this machine's memory on the " +
           std::string(backend.name()) + " backend is " + core::format_bytes(core::Bytes(peak)) + ", " +
           core::format_bytes(core::Bytes(peak - held)) + " more than the " +
           core::format_bytes(core::Bytes(held)) +
           " it holds after setting up (the activations and workspaces of its steps), and " +
           core::format_bytes(core::Bytes(available)) + " is available (MemAvailable, /proc/meminfo)",
       "a smaller micro-batch, activation checkpointing, a plan that keeps more on NVMe, or more memory"}};
}

}  // namespace stowage::executor
