#include "core/profile_reference.h"

#include <algorithm>
#include <cstdlib>
#include <system_error>

namespace stowage::core {
namespace fs = std::filesystem;

namespace {

// Whether `path` lies inside `folder`, judged on the names as written
// ("a/../../b" is outside "a"): what a file's text can reach. A symlink the
// user put inside the folder is followed as any path the user gives.
bool lies_inside(const fs::path& path, const fs::path& folder) {
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec).lexically_normal();
  if (ec) return false;
  fs::path f = fs::absolute(folder, ec).lexically_normal();
  if (ec) return false;
  if (!f.empty() && f.filename().empty()) f = f.parent_path();  // "profiles/" is "profiles"
  auto [fi, pi] = std::mismatch(f.begin(), f.end(), p.begin(), p.end());
  return fi == f.end();
}

bool any_path_allowed() {
  const char* env = std::getenv(kAllowProfilePathsVariable);
  return env != nullptr && std::string_view(env) == "1";
}

}  // namespace

bool is_path_reference(std::string_view reference) {
  return reference.find('/') != std::string_view::npos || reference.ends_with(".yaml") ||
         reference.ends_with(".yml");
}

std::string spelled_as_path(const fs::path& path) {
  std::string text = path.string();
  return is_path_reference(text) ? text : "./" + text;
}

Result<std::string> confine_reference(const fs::path& referring_file, const std::string& reference,
                                      const fs::path& profiles_root, std::string_view kind,
                                      std::string_view referrer) {
  if (!is_path_reference(reference)) return reference;
  const fs::path beside = referring_file.parent_path();
  const fs::path folder = beside.empty() ? fs::path(".") : beside;
  const fs::path path = fs::path(reference).is_absolute() ? fs::path(reference) : beside / reference;
  if (any_path_allowed() || lies_inside(path, profiles_root) || lies_inside(path, folder)) {
    return spelled_as_path(path.lexically_normal());
  }
  return fail({{},
               "the reference '" + reference + "' lies outside the profile folder '" +
                   profiles_root.string() + "' and the " + std::string(referrer) + "'s folder '" +
                   folder.string() + "', so it is not read",
               "a " + std::string(kind) + " profile name, or a path inside those folders; " +
                   kAllowProfilePathsVariable + "=1 allows any path"});
}

}  // namespace stowage::core
