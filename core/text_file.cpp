#include "core/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/file_kind.h"

namespace stowage::core {
namespace {

std::unexpected<Diagnostics> refuse(const std::filesystem::path& path, std::string what) {
  return fail({{path.string(), 0, 0}, std::move(what), "an existing, readable regular file"});
}

// Closes the fd on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::string> read_text_file(const std::filesystem::path& path, Bytes max_bytes, size_t spare_capacity) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const Fd file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) return refuse(path, std::string("cannot read file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0)
    return refuse(path, std::string("cannot read file: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return refuse(path, std::string("cannot read file: it is ") + file_kind_name(st.st_mode));
  if (st.st_size > max_bytes.count()) {
    return refuse(path, "cannot read file: it has " + std::to_string(st.st_size) + " bytes, more than the " +
                            std::to_string(max_bytes.count()) + " this kind of input may have");
  }
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size) + spare_capacity);
  text.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(file.fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refuse(path, std::string("cannot read file: ") + std::strerror(errno));
    if (n == 0) break;  // shrank while being read: what is there
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}

}  // namespace stowage::core
