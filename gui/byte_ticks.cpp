#include "gui/byte_ticks.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>

namespace stowage::gui {
namespace {

struct Unit {
  double bytes;
  const char* name;
};
constexpr std::array<Unit, 6> kUnits{
    {{1, "B"}, {1e3, "kB"}, {1e6, "MB"}, {1e9, "GB"}, {1e12, "TB"}, {1e15, "PB"}}};

const Unit& unit_for(double bytes) {
  const Unit* best = &kUnits.front();
  for (const Unit& u : kUnits) {
    if (bytes >= u.bytes) best = &u;
  }
  return *best;
}

}  // namespace

std::string byte_label(core::Bytes b, core::Bytes resolution, core::Bytes unit_of) {
  const Unit& unit = unit_for(static_cast<double>(unit_of.count()));
  const double step = std::max(1.0, static_cast<double>(resolution.count())) / unit.bytes;
  // Enough decimals that one step shows: 0.5 GB steps need one, 0.25 two.
  int decimals = 0;
  while (decimals < 6 &&
         std::abs(step * std::pow(10, decimals) - std::round(step * std::pow(10, decimals))) > 1e-6)
    ++decimals;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f %s", decimals, static_cast<double>(b.count()) / unit.bytes,
                unit.name);
  return text;
}

ByteScale byte_scale(core::Bytes highest, int max_ticks) {
  const double top = std::max(1.0, static_cast<double>(highest.count()));
  const auto ticks_with = [&](double step) { return std::floor(top / step + 1e-9) + 1; };
  // 1, 2, 5, 10, 20, ... bytes, ascending: the first that gives few enough
  // ticks, unless it is above the top (then the largest one under it).
  std::optional<double> step;
  double below = 1;
  for (double power = 1; !step; power *= 10) {
    for (const double m : {1.0, 2.0, 5.0}) {
      if (m * power <= top) below = m * power;
      if (!step && ticks_with(m * power) <= static_cast<double>(max_ticks)) step = m * power;
    }
  }
  const double chosen = std::min(*step, below);
  ByteScale out{.top = core::Bytes(static_cast<int64_t>(top)),
                .step = core::Bytes(static_cast<int64_t>(chosen))};
  const auto count = static_cast<int64_t>(ticks_with(chosen));
  for (int64_t i = 0; i < count; ++i) {
    const core::Bytes v(i * out.step.count());
    out.ticks.push_back({.value = v, .label = byte_label(v, out.step, out.top)});
  }
  return out;
}

}  // namespace stowage::gui
