#include "core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "core/file_kind.h"

namespace stowage::core {
namespace {

namespace fs = std::filesystem;

// Linux gives up after 40 links in one lookup (path_resolution(7)).
constexpr int kMaxSymlinks = 40;
constexpr const char* kExpected = "a regular file, or a new file's name, in a writable folder";

Diagnostics problem(const fs::path& path, const std::string& what) {
  return {{{path.string(), 0, 0}, what, kExpected}};
}

// `path` with every symlink followed, relative links against the folder of
// the link; the final name may be absent (a link to a file to create).
Result<fs::path> follow_symlinks(const fs::path& path) {
  fs::path p = path;
  for (int i = 0; i <= kMaxSymlinks; ++i) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return p;
      return std::unexpected(
          problem(path, std::string("cannot look up output file: ") + std::strerror(errno)));
    }
    if (!S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    const fs::path link = fs::read_symlink(p, ec);
    if (ec)
      return std::unexpected(
          problem(path, "cannot read symbolic link '" + p.string() + "': " + ec.message()));
    p = link.is_absolute() ? link : p.parent_path() / link;
  }
  return std::unexpected(problem(path, "too many levels of symbolic links"));
}

std::string via(const fs::path& path, const fs::path& target) {
  return target == path ? std::string() : " (the symbolic link's target '" + target.string() + "')";
}

// The folder a new entry of `target` goes into, checked to be a writable folder.
Diagnostics check_folder(const fs::path& path, const fs::path& target) {
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0) {
    return problem(path, "the folder '" + folder.string() + "'" + via(path, target) +
                             " cannot be used: " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return problem(path, "'" + folder.string() + "' is not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    return problem(path, "the folder '" + folder.string() + "' is not writable: " + std::strerror(errno));
  }
  return {};
}

// The permission bits of the regular file at `target`, nullopt if absent.
std::optional<mode_t> existing_mode(const fs::path& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) return std::nullopt;
  return st.st_mode & 07777;
}

// A new, empty file beside `target`, never one that existed (O_EXCL):
// ".<name>.stowage-tmp-<pid>-<n>". Returns the fd, or -1 with errno set.
int create_temp(const fs::path& target, std::string& temp) {
  const fs::path folder = target.parent_path();
  for (int n = 0; n < 100; ++n) {
    const std::string name = "." + target.filename().string() + ".stowage-tmp-" + std::to_string(::getpid()) +
                             "-" + std::to_string(n);
    temp = (folder / name).string();
    // 0666: the umask decides, as for any file a program creates.
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

bool write_all(int fd, std::span<const char> content) {
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    written += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<fs::path> check_output_path(const fs::path& path) {
  if (path.empty()) return std::unexpected(problem(path, "empty output file name"));
  auto target = follow_symlinks(path);
  if (!target) return target;
  struct stat st {};
  if (::stat(target->c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return std::unexpected(problem(path, "'" + target->string() + "' is " + file_kind_name(st.st_mode) +
                                             ", not a regular file: stowage replaces only regular files "
                                             "(nothing was written)"));
  }
  if (Diagnostics d = check_folder(path, *target); !d.empty()) return std::unexpected(std::move(d));
  return target;
}

Diagnostics write_file_atomically(const fs::path& path, const std::string& content) {
  const std::span<const char> whole(content.data(), content.size());
  return write_file_atomically(path, std::span<const std::span<const char>>(&whole, 1));
}

Diagnostics write_file_atomically(const fs::path& path, std::span<const std::span<const char>> pieces) {
  auto target = check_output_path(path);
  if (!target) return target.error();
  const std::optional<mode_t> mode = existing_mode(*target);
  std::string temp;
  auto failure = [&](const char* what) {
    const int err = errno;
    if (!temp.empty()) ::unlink(temp.c_str());
    return problem(path, std::string(what) + via(path, *target) + ": " + std::strerror(err));
  };
  const int fd = create_temp(*target, temp);
  if (fd < 0) {
    temp.clear();  // nothing of ours to remove
    return failure("cannot create output file");
  }
  // An existing file keeps its permissions: a 0600 file must not become
  // world-readable because Stowage rewrote it.
  if (mode && ::fchmod(fd, *mode) != 0) {
    ::close(fd);
    return failure("cannot keep the output file's permissions");
  }
  for (const std::span<const char> piece : pieces) {
    if (!write_all(fd, piece)) {
      ::close(fd);
      return failure("cannot write output file");
    }
  }
  const bool synced = ::fsync(fd) == 0;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed) return failure("cannot write output file");
  if (std::rename(temp.c_str(), target->c_str()) != 0) return failure("cannot replace output file");
  return {};
}

}  // namespace stowage::core
