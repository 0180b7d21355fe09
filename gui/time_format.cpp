#include "gui/time_format.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace stowage::gui {
namespace {

constexpr SimTime kSecond = 1'000'000'000;
constexpr SimTime kMinute = 60 * kSecond;
constexpr SimTime kHour = 60 * kMinute;

struct Unit {
  std::string_view name;
  SimTime ns;
};
constexpr std::array<Unit, 4> kSmallUnits{
    {{"ns", 1}, {"\xC2\xB5s", 1000}, {"ms", 1'000'000}, {"s", kSecond}}};

// `value` (>= 0) in `unit` ns with the decimals `resolution` needs, trailing
// zeros dropped: (1'500'000, 1'000'000 ms, 100'000) -> "1.5".
std::string decimal(SimTime value, SimTime unit, SimTime resolution) {
  int decimals = 0;
  for (SimTime step = unit; step > resolution && step > 1 && decimals < 9; step /= 10) ++decimals;
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, static_cast<double>(value) / static_cast<double>(unit));
  std::string out = text;
  if (out.find('.') != std::string::npos) {
    out.erase(out.find_last_not_of('0') + 1);
    if (out.back() == '.') out.pop_back();
  }
  return out;
}

// Under a minute: one unit, the largest not above `ns`.
std::string small(SimTime ns, SimTime resolution) {
  const Unit* unit = &kSmallUnits.front();
  for (const Unit& u : kSmallUnits) {
    if (ns >= u.ns) unit = &u;
  }
  return decimal(ns, unit->ns, resolution) + " " + std::string(unit->name);
}

// A minute or more: "1 h 23 min 20.5 s", parts below the resolution dropped
// (rounded into the last part shown) and zero parts left out.
std::string large(SimTime ns, SimTime resolution) {
  const SimTime last = resolution >= kHour ? kHour : (resolution >= kMinute ? kMinute : 0);
  if (last > 0) ns = (ns + last / 2) / last * last;
  const SimTime hours = ns / kHour, minutes = ns % kHour / kMinute, rest = ns % kMinute;
  std::string out;
  const auto part = [&out](const std::string& text) { out += (out.empty() ? "" : " ") + text; };
  if (hours > 0) part(std::to_string(hours) + " h");
  if (minutes > 0 && last < kHour) part(std::to_string(minutes) + " min");
  if (rest > 0 && last == 0) {
    const std::string seconds = decimal(rest, kSecond, resolution);
    if (seconds != "0") part(seconds + " s");
  }
  return out.empty() ? "0 s" : out;
}

}  // namespace

std::string format_time(SimTime ns, SimTime resolution) {
  resolution = std::max<SimTime>(resolution, 1);
  if (ns == 0) return "0 s";
  const SimTime magnitude = ns < 0 ? -ns : ns;
  const std::string sign = ns < 0 ? "-" : "";
  return sign + (magnitude >= kMinute ? large(magnitude, resolution) : small(magnitude, resolution));
}

std::string format_time(SimTime ns) {
  // Four significant digits: a resolution of a thousandth of the magnitude,
  // as a power of ten.
  const SimTime magnitude = ns < 0 ? -ns : ns;
  SimTime resolution = 1;
  while (resolution * 1000 <= magnitude / 10) resolution *= 10;
  return format_time(ns, resolution);
}

}  // namespace stowage::gui
