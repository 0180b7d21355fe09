#include "core/nearest_name.h"

#include <algorithm>
#include <vector>

namespace stowage::core {

int edit_distance(std::string_view a, std::string_view b) {
  // One rolling row of the classic dynamic programme.
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diagonal = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitute});
    }
  }
  return row[b.size()];
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

}  // namespace stowage::core
