// Memory per tier reduced to pixel columns: the most bytes a tier held
// during each column's span of time, so a million samples draw as one
// value per pixel without hiding a short peak. GUI-free.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "core/units.h"
#include "gui/time_axis.h"
#include "gui/trace_model.h"

namespace stowage::gui {

// Column c covers times [axis.to_time(c), axis.to_time(c + 1)). A column
// before the first sample or past `end` is empty. `series` is a step
// function in time order; each value holds until the next sample.
[[nodiscard]] std::vector<std::optional<core::Bytes>> memory_columns(std::span<const MemoryPoint> series,
                                                                     const TimeAxis& axis, int columns,
                                                                     SimTime end);

// The bytes held at time `t`: the last sample at or before it; nullopt
// before the first sample.
[[nodiscard]] std::optional<core::Bytes> bytes_at(std::span<const MemoryPoint> series, SimTime t);

[[nodiscard]] core::Bytes peak_of(std::span<const MemoryPoint> series);

// Spans of time during which the series holds more than `capacity`.
struct TimeSpan {
  SimTime begin = 0, end = 0;
};
[[nodiscard]] std::vector<TimeSpan> overflows(std::span<const MemoryPoint> series, core::Bytes capacity,
                                              SimTime end);

}  // namespace stowage::gui
