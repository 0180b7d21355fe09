// Durations and times as the ruler, tooltips and tables print them: in the
// unit that suits their size, with as many decimals as their resolution
// needs ("1.5 s", "820 µs", "12.35 ms"), and from a minute on in hours,
// minutes and seconds ("1 h 23 min", "2 min 5.5 s"), never "1.38889 h".
// GUI-free.
#pragma once

#include <string>

#include "core/timeline.h"

namespace stowage::gui {

using core::SimTime;

// `ns` shown to about four significant digits: "1.235 ms", "1 h 23 min 20 s".
[[nodiscard]] std::string format_time(SimTime ns);
// `ns` shown to `resolution` ns (> 0), the smallest difference that must
// still show: a ruler tick step, say. Trailing zeros are dropped ("1.5 s",
// "2 s"); parts below the resolution are too ("1 h 30 min" for a 30 min
// step).
[[nodiscard]] std::string format_time(SimTime ns, SimTime resolution);

}  // namespace stowage::gui
