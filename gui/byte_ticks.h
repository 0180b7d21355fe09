// The memory rows' y-axis: a top of scale and ticks at 1, 2 or 5 times a
// power of ten bytes, labelled in decimal units as the CLI prints sizes
// ("0 GB", "10 GB", "20 GB"; "1.5 TB"). GUI-free.
#pragma once

#include <string>
#include <vector>

#include "core/units.h"

namespace stowage::gui {

struct ByteTick {
  core::Bytes value;
  std::string label;  // "12 GB"
};

struct ByteScale {
  core::Bytes top;              // the value at the top of the row
  core::Bytes step;             // between ticks
  std::vector<ByteTick> ticks;  // 0, step, 2 step, ... up to top
};

// A scale from 0 to `highest` (> 0 bytes) with ticks at the smallest step
// of 1, 2 or 5 times a power of ten that gives at most `max_ticks` (>= 2,
// counting the one at 0), and at least one tick above 0.
[[nodiscard]] ByteScale byte_scale(core::Bytes highest, int max_ticks);
// `b` in the decimal unit of `unit_of` (B, kB, MB, GB, TB, PB) with the
// decimals `resolution` needs: byte_label(1.5e9, 5e8, 1e9) is "1.5 GB".
[[nodiscard]] std::string byte_label(core::Bytes b, core::Bytes resolution, core::Bytes unit_of);

}  // namespace stowage::gui
