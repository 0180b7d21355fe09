#include "executor/checkpoint/checkpoint_root.h"

#include "executor/checkpoint/checkpoint_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <system_error>

#include "executor/checkpoint/manifest.h"

namespace stowage::executor {
namespace {

constexpr std::string_view kStepPrefix = "step-";

namespace fs = std::filesystem;

// mkdtemp replaces "XXXXXX" with six of [A-Za-z0-9].
constexpr size_t kTempSuffixLength = 6;

// What precedes `marker` in a name NAME<marker>XXXXXX, nullopt for any
// other name.
std::optional<std::string> leftover_base(const std::string& name, std::string_view marker) {
  const size_t at = name.rfind(marker);
  if (at == std::string::npos || at == 0) return std::nullopt;
  const std::string_view suffix = std::string_view(name).substr(at + marker.size());
  if (suffix.size() != kTempSuffixLength ||
      !std::ranges::all_of(suffix, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; })) {
    return std::nullopt;
  }
  return name.substr(0, at);
}

bool is_real_directory(const fs::path& dir) {
  struct stat st {};
  return ::lstat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Whether `dir` is a directory holding at most a manifest and a data file,
// both regular files: what a save writes, and nothing a user added.
bool holds_only_checkpoint_files(const fs::path& dir) {
  if (!is_real_directory(dir)) return false;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name != kManifestFileName && name != kDataFileName) return false;
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) return false;
  }
  return !ec;
}

// Leaves `aside` in place of `original` if that is missing (the crash came
// between moving the old checkpoint aside and moving the new one in).
void settle_aside(const fs::path& aside, const fs::path& original) {
  struct stat st {};
  if (::lstat(original.c_str(), &st) == 0) {
    remove_checkpoint_dir(aside);
  } else if (is_checkpoint_dir(aside)) {
    std::error_code ec;
    fs::rename(aside, original, ec);
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
    if (step && is_checkpoint_dir(it->path())) entries.push_back({*step, it->path()});
  }
  if (ec) {
    return core::fail(
        {{root.string(), 0, 0}, "cannot list checkpoint directory: " + ec.message(), "a readable directory"});
  }
  std::ranges::sort(entries, {}, &CheckpointEntry::step);
  return entries;
}

std::vector<std::filesystem::path> foreign_step_entries(const std::filesystem::path& root, int64_t last_step) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  std::filesystem::directory_iterator it(root, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::optional<int64_t> step = checkpoint_step(it->path().filename().native());
    if (step && *step >= 1 && *step <= last_step && !is_checkpoint_dir(it->path())) out.push_back(it->path());
  }
  std::ranges::sort(out);
  return out;
}

core::Result<std::optional<std::filesystem::path>> find_latest(const std::filesystem::path& root) {
  auto entries = list_checkpoints(root);
  if (!entries) return std::unexpected(std::move(entries.error()));
  if (entries->empty()) return std::nullopt;
  return entries->back().dir;
}

namespace {

core::Result<void> verify_checkpoint(const fs::path& dir) {
  auto reader = CheckpointReader::open(dir);
  if (!reader) return std::unexpected(reader.error());
  return reader->verify();
}

}  // namespace

core::Result<std::optional<std::filesystem::path>> find_latest_intact(const std::filesystem::path& root) {
  auto entries = list_checkpoints(root);
  if (!entries) return std::unexpected(std::move(entries.error()));
  if (entries->empty()) return std::nullopt;
  auto newest = verify_checkpoint(entries->back().dir);
  if (newest) return entries->back().dir;
  std::string fallback = "no older checkpoint under " + root.string() + " verifies either";
  for (auto it = std::next(entries->rbegin()); it != entries->rend(); ++it) {
    if (verify_checkpoint(it->dir)) {
      fallback = "the newest intact one is " + it->dir.string() + " (--resume " + it->dir.string() +
                 " resumes from it, losing the steps after " + std::to_string(it->step) + ")";
      break;
    }
  }
  core::Diagnostics d = newest.error();
  d.push_back({{}, "the newest checkpoint, " + entries->back().dir.string() + ", is damaged; " + fallback, ""});
  return std::unexpected(std::move(d));
}

bool is_checkpoint_dir(const fs::path& dir) {
  std::error_code ec;
  return is_real_directory(dir) && fs::is_regular_file(dir / kManifestFileName, ec);
}

bool remove_checkpoint_dir(const fs::path& dir) {
  if (!is_real_directory(dir)) return false;
  std::error_code ec;
  fs::remove(dir / kManifestFileName, ec);
  fs::remove(dir / kDataFileName, ec);
  return fs::remove(dir, ec);  // fails, keeping it, when anything else is inside
}

void remove_leftovers(const fs::path& root) {
  std::error_code ec;
  std::vector<fs::path> entries;
  for (fs::directory_iterator it(root, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    entries.push_back(it->path());
  }
  for (const fs::path& path : entries) {
    const std::string name = path.filename().string();
    if (!holds_only_checkpoint_files(path)) continue;
    if (leftover_base(name, kTempMarker)) {
      remove_checkpoint_dir(path);
    } else if (const auto base = leftover_base(name, kAsideMarker)) {
      settle_aside(path, root / *base);
    }
  }
}

}  // namespace stowage::executor
