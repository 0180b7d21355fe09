#include "core/text_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

// `over` is the expected part of the message for a file over the limit.
Result<std::string> read_bounded(const std::filesystem::path& path, Bytes max_bytes, const std::string& over) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const Fd file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) return refuse(path, std::string("cannot read file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(file.fd, &st) != 0)
    return refuse(path, std::string("cannot read file: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return refuse(path, std::string("cannot read file: it is ") + file_kind_name(st.st_mode));
  if (st.st_size > max_bytes.count()) {
    return fail({{path.string(), 0, 0},
                 "cannot read file: it has " + std::to_string(st.st_size) + " bytes, more than the " +
                     std::to_string(max_bytes.count()) + " this kind of input may have",
                 over});
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
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

}  // namespace

Result<std::string> read_text_file(const std::filesystem::path& path, Bytes max_bytes) {
  return read_bounded(path, max_bytes, "an existing, readable regular file");
}

const InputLimit& input_limit_of(InputKind kind) {
  // Profiles and plans are a few KiB; traces of long runs reach hundreds of
  // MB; a manifest lists a few entries per partition; a corpus is held in
  // memory whole; safetensors weights of the models the executor trains.
  static const InputLimit kLimits[] = {
      {"a profile or plan", "STOWAGE_MAX_PROFILE_BYTES", kMaxProfileBytes},
      {"a trace", "STOWAGE_MAX_TRACE_BYTES", kMaxTextFileBytes},
      {"a checkpoint manifest", "STOWAGE_MAX_MANIFEST_BYTES", Bytes(int64_t{64} << 20)},
      {"a --data corpus", "STOWAGE_MAX_CORPUS_BYTES", Bytes(int64_t{2} << 30)},
      {"a safetensors file", "STOWAGE_MAX_WEIGHTS_BYTES", Bytes(int64_t{16} << 30)},
  };
  return kLimits[static_cast<size_t>(kind)];
}

Result<Bytes> input_limit(InputKind kind) {
  const InputLimit& limit = input_limit_of(kind);
  const std::string variable(limit.variable);
  const char* value = std::getenv(variable.c_str());
  if (value == nullptr || *value == '\0') return limit.default_max;
  auto size = parse_bytes(value);
  if (!size) {
    return fail({{},
                 "environment variable " + variable + "='" + value + "' is not a size: " + size.error().what,
                 "a size such as '64 MiB', or unset for the default " +
                     format_bytes(limit.default_max, Prefix::kBinary)});
  }
  return *size;
}

Result<std::string> read_input_file(const std::filesystem::path& path, InputKind kind) {
  Result<Bytes> max = input_limit(kind);
  if (!max) return std::unexpected(max.error());
  const InputLimit& limit = input_limit_of(kind);
  return read_bounded(path, *max,
                      std::string(limit.what) + " of at most " + format_bytes(*max, Prefix::kBinary) + "; set " +
                          std::string(limit.variable) + " to allow more");
}

}  // namespace stowage::core
