#include "cli/output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace stowage::cli {

core::Diagnostics write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  const std::string target = path.string();
  const std::string temp = target + ".tmp-" + std::to_string(::getpid());
  auto failure = [&](const char* what) {
    const int err = errno;
    ::unlink(temp.c_str());
    return core::Diagnostics{{{target, 0, 0}, std::string(what) + ": " + std::strerror(err), "a writable path with free space"}};
  };
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failure("cannot create output file");
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      return failure("cannot write output file");
    }
    written += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed) return failure("cannot write output file");
  if (std::rename(temp.c_str(), target.c_str()) != 0) return failure("cannot replace output file");
  return {};
}

}  // namespace stowage::cli
