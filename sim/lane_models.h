// One cost model per lane kind (STYLE.md §6): each turns an op into the
// demand it places on the machine. Models know no event queue; the engine
// knows no hardware.
#pragma once

#include <optional>

#include "core/machine_spec.h"
#include "core/schedule.h"
#include "sim/cost_parameters.h"
#include "sim/demand.h"

namespace stowage::sim {

// Everything a model needs to know about where it runs.
struct ModelContext {
  const core::MachineSpec& machine;
  const CostParameters& params;
  int ranks = 1;        // data-parallel ranks sharing host, drives and cores
  bool pinned = true;   // host buffers page-locked
  bool bf16 = true;     // matmul precision
};

// GPU compute (forward, recompute, backward, GPU optimizer): a roofline,
// max(FLOPs / (rate x efficiency), HBM bytes / (bandwidth x efficiency)),
// plus a fixed launch overhead.
Demand gpu_compute_demand(const core::Op& op, const ModelContext& c);
// PCIe H2D or D2H: bytes through the link direction and host DRAM, then
// a fixed latency (the direction's own where measured).
Demand pcie_demand(const core::Op& op, const ModelContext& c);
// NVMe read or write, striped over the drives: each byte costs 1/rate of
// device time (reads at the read rate, writes at the post-cache write rate)
// and a byte of DRAM bandwidth.
Demand nvme_demand(const core::Op& op, const ModelContext& c);
// Bytes per second one rank can read (kNvmeRead) or write (kNvmeWrite)
// when it has the drives' time to itself.
double nvme_rank_rate(const ModelContext& c, core::Lane lane);
// CPU Adam: its bytes of DRAM traffic, with the cores' FLOP rate as a
// second limit (FLOPs per parameter from the cost parameters).
Demand cpu_optimizer_demand(const core::Op& op, const ModelContext& c);
// Ring all-gather / reduce-scatter / all-reduce over NVLink or PCIe.
Demand collective_demand(const core::Op& op, const ModelContext& c);

// The capacity of each shared resource for one rank.
Capacities capacities_for(const ModelContext& c);

// A gradient check at the measured rate (CostParameters::grad_check_rate),
// nullopt when none is set: a fixed duration, bytes / rate.
std::optional<Demand> measured_grad_check(const core::Op& op, const ModelContext& c);

// Whether, where the device is a program on the host (the CPU backend), the
// lane's ops each keep one of its threads busy for long: compute and the
// CPU optimizer. Those share CostParameters::host_lane_cores. The copies
// do not: a copy is a few milliseconds on a thread that slept, which the
// kernel's scheduler runs at once beside the long-running threads (issue
// 14's runs: shared evenly, the delayed update's copies were predicted
// +26 to +76 % slower than measured; docs/fidelity.md, session 39).
bool runs_on_a_host_thread(core::Lane lane);

// Dispatches on the op's lane. With CostParameters::host_lane_cores set,
// every flow's work is in seconds of running alone (its own bottleneck in
// `capacities`, capacities_for(c)) and the host-thread lanes' ops share the
// cores (Resource::kHostThreads); compute ops crowd the copies, which then
// move at most at CostParameters::h2d_rate_beside_compute /
// d2h_rate_beside_compute where set, and NVMe I/O crowds the layer passes,
// which then run at most at CostParameters::compute_share_beside_nvme of
// their rate alone (Demand::crowded_max_rate).
Demand demand_of(const core::Op& op, const ModelContext& c, const Capacities& capacities);

}  // namespace stowage::sim
