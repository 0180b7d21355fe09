// A check both interpreters' tests run on their timelines: the memory by
// class (core/memory_by_class.h) sums, at every instant a tier is sampled,
// to the bytes the timeline recorded there. Returns the first mismatch as
// text, or "" when there is none.
#pragma once

#include <map>
#include <string>

#include "core/memory_by_class.h"

namespace stowage::core::testing {

inline std::string classes_mismatch(const Schedule& schedule, const Timeline& timeline) {
  std::array<std::map<SimTime, Bytes>, 3> recorded, by_class;  // the last value at each instant
  for (const MemorySample& m : timeline.memory) recorded[static_cast<size_t>(m.tier)][m.time] = m.bytes;
  for (const ClassSample& c : memory_by_class(schedule, timeline)) {
    Bytes sum;
    for (const Bytes b : c.bytes) sum += b;
    by_class[static_cast<size_t>(c.tier)][c.time] = sum;
  }
  for (size_t t = 0; t < 3; ++t) {
    for (const auto& [time, bytes] : recorded[t]) {
      const auto it = by_class[t].upper_bound(time);
      const Bytes classes = it == by_class[t].begin() ? Bytes() : std::prev(it)->second;
      if (classes != bytes) {
        return "tier " + std::to_string(t) + " at " + std::to_string(time) + " ns: recorded " +
               std::to_string(bytes.count()) + " B, classes sum to " + std::to_string(classes.count()) + " B";
      }
    }
  }
  return "";
}

}  // namespace stowage::core::testing
