// Whether this host has the memory a run will hold in it, asked before the
// run allocates any. Linux overcommits: a run that needs more than the host
// has is not refused by malloc or mmap but killed by the kernel's OOM killer
// partway through its setup (a Llama-2-13B plan on a 24 GiB machine took all
// of it in 15 s, with no word from Stowage).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "core/schedule.h"
#include "core/timeline.h"
#include "executor/backend.h"

namespace stowage::executor {

// MemAvailable of a /proc/meminfo text, in bytes: the kernel's estimate of
// what can be allocated without swapping. Null where the line is missing
// or malformed.
[[nodiscard]] std::optional<int64_t> mem_available(std::string_view meminfo);

// This host's MemAvailable (/proc/meminfo); null where it cannot be read.
[[nodiscard]] std::optional<int64_t> available_host_memory();

// What `schedule` keeps resident from its start (the partitions' homes and
// staging buffers; lowered with the executor's zero reserves) on the tiers
// `backend` keeps in host memory, each no more than its cap (an allocation
// past it fails cleanly). A floor: the run allocates more beside it (saved
// activations, the model's workspaces). Refused, with what and how much,
// when above `available`.
[[nodiscard]] core::Diagnostics check_host_memory(const core::Schedule& schedule, const Backend& backend,
                                                  int64_t available);

// The most `predicted` (the simulator's timeline of a schedule) holds at
// once on the tiers `backend` keeps in host memory, each no more than its
// cap: the run applies the schedule's memory effects in that prediction's
// order (core/memory_gate.h), so it holds exactly that at its peak.
[[nodiscard]] int64_t host_memory_peak(const core::Timeline& predicted, const Backend& backend);

// Whether a schedule's predicted peak in host memory, beyond what `backend`
// holds there now, is `available`: asked before the schedule runs, when the
// partitions' homes and staging buffers are allocated and the activations
// and workspaces still to come. Refused, with how much, when not.
[[nodiscard]] core::Diagnostics check_host_memory_peak(const core::Timeline& predicted,
                                                       const Backend& backend, int64_t available);

// Less than this left at a schedule's peak and the run is warned: the
// process holds more than the schedule's buffers (its code, the data, BLAS
// and I/O buffers), about 0.3 GB in the tiny runs here.
inline constexpr int64_t kHostMemoryMargin = int64_t{1} << 30;

// A warning when check_host_memory_peak passes with less than
// kHostMemoryMargin to spare; null otherwise.
[[nodiscard]] std::optional<std::string> host_memory_warning(const core::Timeline& predicted,
                                                             const Backend& backend, int64_t available);

}  // namespace stowage::executor
