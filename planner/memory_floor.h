// A quick lower bound on the memory a candidate needs per tier, from its
// policy alone, so the search can drop candidates that cannot fit before
// lowering and simulating them.
#pragma once

#include <array>

#include "core/machine_spec.h"
#include "core/workload.h"
#include "planner/candidate.h"

namespace stowage::planner {

// Per rank, by Tier: resident states and parameters, reserves, staging
// buffers and one micro-batch of saved activations. The simulated peak is
// never lower.
std::array<core::Bytes, 3> memory_floor(const Candidate& c, const core::MachineSpec& machine,
                                        const core::Workload& workload);

// Per rank, by Tier: GPU memory, host DRAM / ranks, NVMe / ranks.
std::array<core::Bytes, 3> rank_capacity(const core::MachineSpec& machine);

}  // namespace stowage::planner
