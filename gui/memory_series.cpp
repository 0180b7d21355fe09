#include "gui/memory_series.h"

#include <algorithm>

namespace stowage::gui {

std::vector<std::optional<core::Bytes>> memory_columns(std::span<const MemoryPoint> series,
                                                       const TimeAxis& axis, int columns, SimTime end) {
  std::vector<std::optional<core::Bytes>> out(static_cast<size_t>(std::max(columns, 0)));
  if (series.empty()) return out;
  const SimTime begin = axis.to_time(0);
  auto next = std::ranges::upper_bound(series, begin, {}, &MemoryPoint::time);
  std::optional<core::Bytes> held;
  if (next != series.begin()) held = std::prev(next)->bytes;
  for (int c = 0; c < columns; ++c) {
    const SimTime column_begin = axis.to_time(c), column_end = axis.to_time(c + 1);
    if (column_begin > end) break;
    std::optional<core::Bytes> high = held;
    for (; next != series.end() && next->time < column_end; ++next) {
      held = next->bytes;
      high = high ? std::max(*high, *held) : *held;
    }
    out[static_cast<size_t>(c)] = high;
  }
  return out;
}

std::optional<core::Bytes> bytes_at(std::span<const MemoryPoint> series, SimTime t) {
  const auto next = std::ranges::upper_bound(series, t, {}, &MemoryPoint::time);
  if (next == series.begin()) return std::nullopt;
  return std::prev(next)->bytes;
}

core::Bytes peak_of(std::span<const MemoryPoint> series) {
  core::Bytes peak;
  for (const MemoryPoint& p : series) peak = std::max(peak, p.bytes);
  return peak;
}

std::vector<TimeSpan> overflows(std::span<const MemoryPoint> series, core::Bytes capacity, SimTime end) {
  std::vector<TimeSpan> out;
  for (size_t i = 0; i < series.size(); ++i) {
    if (series[i].bytes <= capacity) continue;
    const SimTime until = i + 1 < series.size() ? series[i + 1].time : end;
    if (!out.empty() && out.back().end == series[i].time) {
      out.back().end = until;
    } else {
      out.push_back({.begin = series[i].time, .end = until});
    }
  }
  return out;
}

}  // namespace stowage::gui
