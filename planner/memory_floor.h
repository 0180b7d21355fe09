// A lower bound on the memory a candidate needs per tier, derived from its
// lowered schedule (never re-derived beside lowering, which is how the
// earlier formula came to sit above the simulated peak: issue 11), so the
// search can drop candidates that cannot fit without simulating them.
#pragma once

#include <array>

#include "core/machine_spec.h"
#include "core/schedule.h"
#include "core/workload.h"
#include "planner/candidate.h"

namespace stowage::planner {

// Per rank, by Tier: what the tier holds for certain at some moment of any
// run of the schedule, so the simulated peak is never lower. The resident
// bytes, plus, at the start of each op X of a lane that runs one op at a
// time, X's own allocations and every allocation by an earlier op of that
// lane that a later op (or X) of that lane frees: those ended before X
// started and are released only after it did. A forward pass's saved
// activations, freed by the backward ops on the same lane, are counted
// this way. Or, if more, what crosses lanes: an allocation is held as X
// starts when, by lane order and dependencies (so in any run), its op
// starts no later than X and X no later than the op that frees it; host
// gradient buffers filled by pcie.d2h and freed by cpu.optim after the
// step's check count so (memory_floor.cpp: cross_lane_floor).
std::array<core::Bytes, 3> memory_floor(const core::Schedule& schedule);

// The same for a candidate, lowered for one step (the first step's ops are
// those of every steady-state schedule, in the same order on each lane);
// zeros when it does not lower (evaluate() then reports why).
std::array<core::Bytes, 3> memory_floor(const Candidate& c, const core::MachineSpec& machine,
                                        const core::Workload& workload);

// Per rank, by Tier: a weaker floor that needs no lowering, for a first cut:
// the 16-bit parameters and optimizer states where the policy rests them and
// the fixed reserves (core::RuntimeBuffers), all of which lowering counts as
// resident (Schedule::resident) beside buffers this leaves out, and on the
// GPU one micro-batch's saved activations, all held as the last forward op
// starts, or the largest layer's gradients if more.
std::array<core::Bytes, 3> resting_floor(const Candidate& c, const core::MachineSpec& machine,
                                         const core::Workload& workload);

// Per rank, by Tier: GPU memory, host DRAM / ranks, NVMe / ranks.
std::array<core::Bytes, 3> rank_capacity(const core::MachineSpec& machine);

}  // namespace stowage::planner
