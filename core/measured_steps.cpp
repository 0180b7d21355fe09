#include "core/measured_steps.h"

#include <algorithm>
#include <limits>

namespace stowage::core {
namespace {

constexpr SimTime kNone = std::numeric_limits<SimTime>::min();

}  // namespace

void StepEnds::add(int step, SimTime end) {
  const auto s = static_cast<size_t>(std::max(0, step));
  if (ends_.size() <= s) ends_.resize(s + 1, kNone);
  ends_[s] = std::max(ends_[s], end);
}

std::vector<MeasuredStep> StepEnds::steps(SimTime begin) const {
  std::vector<MeasuredStep> out;
  SimTime previous = begin;
  for (size_t s = 0; s < ends_.size(); ++s) {
    if (ends_[s] == kNone) continue;
    out.push_back({.step = static_cast<int>(s), .end = ends_[s], .length = std::max<SimTime>(0, ends_[s] - previous)});
    previous = std::max(previous, ends_[s]);
  }
  return out;
}

SimTime steady_step_length(std::span<const SimTime> lengths) {
  if (lengths.empty()) return 0;
  if (lengths.size() == 1) return lengths.front();
  std::vector<SimTime> rest(lengths.begin() + 1, lengths.end());
  const auto middle = rest.begin() + static_cast<std::ptrdiff_t>(rest.size() / 2);
  std::nth_element(rest.begin(), middle, rest.end());
  return *middle;
}

}  // namespace stowage::core
