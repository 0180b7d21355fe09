// What simulating a candidate yields that no memory capacity changes, and
// its verdict at given capacities decided from that alone. Lowering only
// copies a tier's capacity into Schedule::capacity and the engine only
// compares against it (sim/engine.h), so a candidate's timeline, step time
// and peaks are the same however much memory a tier has: only whether, and
// where, it overflows differs. The searches that advice runs on a machine
// with more memory (planner/advice.cpp) judge the candidates simulated
// before them again instead of simulating them again.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "planner/candidate.h"
#include "sim/engine.h"
#include "sim/summary.h"

namespace stowage::planner {

struct Simulated {
  sim::Summary summary;
  int ranks = 1;
  core::Bytes nvme_bytes_written;  // per step, whole machine
  // What rests on each tier from the start (with the runtime's pools), and
  // who, largest first: a tier over its capacity before any op runs.
  std::array<core::Bytes, 3> resident;
  std::array<std::vector<std::pair<std::string, core::Bytes>>, 3> resident_holders;
  // Each tier's rises (sim::PeakRise), with the name of the op that made it.
  struct Rise {
    int64_t seq;
    std::string op;
    core::Bytes in_use;
  };
  std::array<std::vector<Rise>, 3> rises;
};

// The verdict on `simulated` where each tier holds `capacity` per rank.
// `holders`: who held the tier when it first overflowed, from the engine of
// a run at these capacities; empty when judged again at others.
Evaluation judge(const Candidate& candidate, std::shared_ptr<const Simulated> simulated,
                 const std::array<core::Bytes, 3>& capacity,
                 std::vector<std::pair<std::string, core::Bytes>> holders = {});

// Simulations kept for the searches of one question (a plan and its
// advice), by candidate. Only for machines that differ from the one they
// were simulated on in memory capacities alone (GPU memory, host RAM, NVMe
// capacity): see the top of this file.
class SimulationCache {
 public:
  [[nodiscard]] std::shared_ptr<const Simulated> find(const Candidate& c) const;
  void add(const Candidate& c, std::shared_ptr<const Simulated> s);
  // The simulations behind `evaluations` (those that have one).
  void add_all(const std::vector<Evaluation>& evaluations);

 private:
  std::multimap<std::string, std::pair<Candidate, std::shared_ptr<const Simulated>>> by_name_;
};

}  // namespace stowage::planner
