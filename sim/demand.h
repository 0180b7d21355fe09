// What one op asks of the machine: either a fixed duration (work no other op
// slows down, such as a kernel on its own stream) or an amount of work that
// flows through shared resources at a rate the engine decides by fair
// sharing (STYLE.md §6: lane, activity, model).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include "core/timeline.h"

namespace stowage::sim {

// Resources several lanes' ops share, per rank. A transfer uses its PCIe
// direction and host DRAM; an NVMe transfer the drives' time and DRAM; the
// CPU optimizer DRAM and cores. kHostThreads: where the device is a program
// on the host (CostParameters::host_lane_cores), the time of the cores its
// lanes' threads share; no op uses it otherwise.
enum class Resource : uint8_t { kPcieH2d, kPcieD2h, kDram, kNvme, kCpu, kHostThreads, kNvmeReads, kNvmeWrites };
inline constexpr int kResourceCount = 8;

// Units: bytes/s for PCIe and DRAM; device-seconds per second for NVMe,
// whose reads and writes cost 1/rate seconds per byte each: kNvmeReads and
// kNvmeWrites (capacity 1 each) hold each direction to its own rate, and
// kNvme (capacity CostParameters::nvme_duplex) is the drive's time both
// directions share;
// FLOP/s for the CPU; thread-seconds per second for kHostThreads.
using Capacities = std::array<double, kResourceCount>;

struct Demand {
  core::SimTime fixed = 0;  // > 0: runs this long regardless of others
  double work = 0;          // > 0: units to flow (bytes, or parameters)
  std::array<double, kResourceCount> per_unit{};  // resource use per unit of work
  core::SimTime latency = 0;  // added once the work has flowed
  double max_rate = 0;        // > 0: the flow never runs faster than this (units/s), however idle the resources
  // > 0: flows of the same queue are served one at a time, in the order
  // they started; the others wait at rate 0. The executor's NVMe store
  // serves each direction's regions so, in the order they were asked for
  // (executor/nvme/block_store.h), where even sharing would finish the
  // first later and the last no sooner.
  int queue = 0;
  // > 0: the flow's own limit (units/s, as max_rate) while any flow of a
  // crowd in `crowded_by` (a set of Crowd bits) is flowing. For a flow that
  // shares a path with those without slowing them as much, which fair
  // sharing cannot say (it slows both alike): on the CPU backend, copies
  // beside a layer pass and a layer pass beside NVMe I/O (sim/lane_models.h).
  double crowded_max_rate = 0;
  uint8_t crowds = 0;      // the Crowd bits this flow counts in
  uint8_t crowded_by = 0;  // the Crowd bits whose flows slow this one to crowded_max_rate
};

// The kinds of flow that crowd others (Demand::crowds, crowded_by), as bits.
enum Crowd : uint8_t {
  kCrowdCompute = 1,  // an op of the compute lane (a layer pass, the device optimizer) on the host's cores
  kCrowdNvme = 2,     // NVMe I/O, with its interrupts and kernel threads on the host's cores
};

// The rate a flowing demand reaches with the resources to itself: its own
// bottleneck at full capacity, or its own limit (max_rate) if lower.
[[nodiscard]] inline double alone_rate(const Demand& d, const Capacities& capacities) {
  double alone = d.max_rate > 0 ? d.max_rate : std::numeric_limits<double>::infinity();
  for (size_t r = 0; r < capacities.size(); ++r) {
    if (d.per_unit[r] > 0) alone = std::min(alone, capacities[r] / d.per_unit[r]);
  }
  return alone;
}

[[nodiscard]] inline core::SimTime to_sim_time(core::Seconds s) {
  return static_cast<core::SimTime>(s.value() * 1e9 + 0.5);
}

}  // namespace stowage::sim
