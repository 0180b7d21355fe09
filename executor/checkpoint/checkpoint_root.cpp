#include "executor/checkpoint/checkpoint_root.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <system_error>

#include "executor/checkpoint/manifest.h"

namespace stowage::executor {
namespace {

constexpr std::string_view kStepPrefix = "step-";

bool is_complete(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) &&
         std::filesystem::is_regular_file(dir / kManifestFileName, ec);
}

// Leaves `aside` in place of `original` if that is missing (the crash came
// between moving the old checkpoint aside and moving the new one in).
void settle_aside(const std::filesystem::path& aside, const std::filesystem::path& original) {
  std::error_code ec;
  if (std::filesystem::exists(original, ec)) {
    std::filesystem::remove_all(aside, ec);
  } else {
    std::filesystem::rename(aside, original, ec);
  }
}

}  // namespace

std::string checkpoint_name(int64_t step) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%06lld", static_cast<long long>(step));
  return std::string(kStepPrefix) + digits;
}

std::optional<int64_t> checkpoint_step(std::string_view name) {
  if (!name.starts_with(kStepPrefix)) return std::nullopt;
  const std::string_view digits = name.substr(kStepPrefix.size());
  if (digits.empty() || !std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t step = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), step);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return step;
}

core::Result<std::vector<CheckpointEntry>> list_checkpoints(const std::filesystem::path& root) {
  std::vector<CheckpointEntry> entries;
  std::error_code ec;
  if (!std::filesystem::exists(root, ec)) return entries;
  std::filesystem::directory_iterator it(root, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::optional<int64_t> step = checkpoint_step(it->path().filename().native());
    if (step && is_complete(it->path())) entries.push_back({*step, it->path()});
  }
  if (ec) {
    return core::fail(
        {{root.string(), 0, 0}, "cannot list checkpoint directory: " + ec.message(), "a readable directory"});
  }
  std::ranges::sort(entries, {}, &CheckpointEntry::step);
  return entries;
}

core::Result<std::optional<std::filesystem::path>> find_latest(const std::filesystem::path& root) {
  auto entries = list_checkpoints(root);
  if (!entries) return std::unexpected(std::move(entries.error()));
  if (entries->empty()) return std::nullopt;
  return entries->back().dir;
}

void remove_leftovers(const std::filesystem::path& root) {
  std::error_code ec;
  std::vector<std::filesystem::path> leftovers;
  for (std::filesystem::directory_iterator it(root, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec)) {
    leftovers.push_back(it->path());
  }
  for (const std::filesystem::path& path : leftovers) {
    const std::string name = path.filename().string();
    if (name.find(kTempMarker) != std::string::npos) {
      std::filesystem::remove_all(path, ec);
    } else if (const size_t aside = name.find(kAsideMarker); aside != std::string::npos) {
      settle_aside(path, root / name.substr(0, aside));
    }
  }
}

}  // namespace stowage::executor
