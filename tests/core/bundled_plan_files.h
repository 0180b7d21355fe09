// The plan files users and the GPU check open: every stowage/plan/v1 file
// in plans/ and bench/gpu/plans/ (beside them lie machine and training
// profiles, which are not plans). For tests of programs compiled with
// STOWAGE_SOURCE_DIR.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace stowage::core::testing {

// A plan file: its first line that is not a comment names the format.
inline bool is_plan_file(const std::filesystem::path& path) {
  if (path.extension() != ".yaml") return false;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.starts_with('#')) continue;
    return line == "format: stowage/plan/v1";
  }
  return false;
}

// In name order, plans/ first.
inline std::vector<std::filesystem::path> bundled_plan_files() {
  std::vector<std::filesystem::path> out;
  for (const char* folder : {"plans", "bench/gpu/plans"}) {
    std::vector<std::filesystem::path> here;
    for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(STOWAGE_SOURCE_DIR) / folder)) {
      if (is_plan_file(entry.path())) here.push_back(entry.path());
    }
    std::ranges::sort(here);
    out.insert(out.end(), here.begin(), here.end());
  }
  return out;
}

}  // namespace stowage::core::testing
