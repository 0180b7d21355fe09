#include "core/trace_rules.h"

#include <cmath>

namespace stowage::core {

bool usable_trace_time(const std::optional<double>& us, bool non_negative) {
  return us && std::isfinite(*us) && std::abs(*us) < kMaxTraceMicros && (!non_negative || *us >= 0);
}

bool known_trace_phase(std::string_view ph) {
  // The Trace Event Format's phases: duration B/E, complete X, instant i/I,
  // counter C, async b/n/e and S/T/p/F, flow s/t/f, sample P, object
  // N/O/D, metadata M, memory dumps V/v, mark R, context (/).
  static constexpr std::string_view kPhases[] = {"B", "E", "X", "i", "I", "C", "b", "n", "e", "S", "T", "p", "F",
                                                 "s", "t", "f", "P", "N", "O", "D", "M", "V", "v", "R", "(", ")"};
  for (std::string_view known : kPhases) {
    if (ph == known) return true;
  }
  return false;
}

}  // namespace stowage::core
