#include "planner/simulated.h"

#include <optional>

namespace stowage::planner {

Evaluation judge(const Candidate& candidate, std::shared_ptr<const Simulated> simulated,
                 const std::array<core::Bytes, 3>& capacity,
                 std::vector<std::pair<std::string, core::Bytes>> holders) {
  const Simulated& s = *simulated;
  Evaluation e{.candidate = candidate, .summary = s.summary, .nvme_bytes_written = s.nvme_bytes_written,
               .simulated = std::move(simulated)};
  // A tier over its capacity before any op runs: held by what rests there
  // (all-gpu on a host with less RAM than the host reserve said "fits",
  // issue 12). Otherwise the tier whose first rise above its capacity comes
  // first, as the engine would have stopped there at these capacities.
  std::optional<core::Tier> over;
  std::string op;
  for (core::Tier t : core::kAllTiers) {
    const size_t i = static_cast<size_t>(t);
    if (s.resident[i] > capacity[i]) {
      over = t;
      holders = s.resident_holders[i];
      break;
    }
  }
  if (!over) {
    int64_t first = -1;
    for (core::Tier t : core::kAllTiers) {
      for (const Simulated::Rise& r : s.rises[static_cast<size_t>(t)]) {
        if (r.in_use <= capacity[static_cast<size_t>(t)]) continue;
        if (first < 0 || r.seq < first) {
          first = r.seq;
          over = t;
          op = r.op;
        }
        break;
      }
    }
  }
  if (!over) {
    e.verdict = Verdict::kFits;
    return e;
  }
  const size_t t = static_cast<size_t>(*over);
  const int scale = core::ranks_in_scope(*over, s.ranks);
  const core::Bytes peak = s.summary.peak_memory[t];
  e.verdict = Verdict::kOverflows;
  e.overflow = over;
  e.overflow_bytes = (peak - capacity[t]) * scale;
  e.capacity = capacity[t] * scale;
  e.overflow_op = std::move(op);  // empty when the tier is over before any op runs
  e.holders = std::move(holders);
  e.reason = std::string(core::to_string(*over)) + " needs " + core::format_bytes(peak * scale) + " of " +
             core::format_bytes(capacity[t] * scale);
  return e;
}

namespace {

bool same_pools(const std::vector<core::MemoryEffect>& a, const std::vector<core::MemoryEffect>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const core::MemoryEffect& x, const core::MemoryEffect& y) {
    return x.tier == y.tier && x.bytes == y.bytes && x.tensor == y.tensor;
  });
}

}  // namespace

std::shared_ptr<const Simulated> SimulationCache::find(const Candidate& c) const {
  const auto [from, to] = by_name_.equal_range(c.name);
  for (auto it = from; it != to; ++it) {
    const Candidate& k = it->second.first;
    if (k.policy == c.policy && k.training == c.training && same_pools(k.runtime_pools, c.runtime_pools))
      return it->second.second;
  }
  return nullptr;
}

void SimulationCache::add(const Candidate& c, std::shared_ptr<const Simulated> s) {
  if (s != nullptr && find(c) == nullptr) by_name_.emplace(c.name, std::make_pair(c, std::move(s)));
}

void SimulationCache::add_all(const std::vector<Evaluation>& evaluations) {
  for (const Evaluation& e : evaluations) add(e.candidate, e.simulated);
}

}  // namespace stowage::planner
