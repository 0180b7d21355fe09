#include "core/nearest_name.h"

#include <algorithm>
#include <vector>

namespace stowage::core {

int edit_distance(std::string_view a, std::string_view b) {
  // The classic dynamic programme over a (|a|+1) x (|b|+1) table.
  const size_t w = b.size() + 1;
  std::vector<int> d((a.size() + 1) * w);
  auto at = [&](size_t i, size_t j) -> int& { return d[i * w + j]; };
  for (size_t i = 0; i <= a.size(); ++i) at(i, 0) = static_cast<int>(i);
  for (size_t j = 0; j <= b.size(); ++j) at(0, j) = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      at(i, j) = std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        at(i, j) = std::min(at(i, j), at(i - 2, j - 2) + 1);
      }
    }
  }
  return at(a.size(), b.size());
}

std::optional<std::string> nearest_name(std::string_view name,
                                        std::span<const std::string> candidates) {
  std::optional<std::string> best;
  int best_distance = 0;
  for (const std::string& candidate : candidates) {
    const int d = edit_distance(name, candidate);
    const int limit = std::max<int>(1, static_cast<int>(std::max(name.size(), candidate.size())) / 3);
    if (d > limit) continue;
    if (!best || d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

std::vector<std::string> names_beginning(std::string_view prefix, std::span<const std::string> candidates) {
  std::vector<std::string> out;
  if (prefix.empty()) return out;
  for (const std::string& candidate : candidates) {
    if (candidate.starts_with(prefix)) out.push_back(candidate);
  }
  return out;
}

std::string did_you_mean(std::string_view name, std::span<const std::string> candidates) {
  if (const std::vector<std::string> begun = names_beginning(name, candidates); !begun.empty()) {
    std::string quoted;
    for (const std::string& n : begun) quoted += (quoted.empty() ? "'" : ", '") + n + "'";
    return (begun.size() == 1 ? "did you mean " : "did you mean one of ") + quoted + "? ";
  }
  if (std::optional<std::string> near = nearest_name(name, candidates))
    return "did you mean '" + *near + "'? ";
  return "";
}

}  // namespace stowage::core
