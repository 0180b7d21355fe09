#include "core/padded_file.h"
#include "core/text_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

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

struct OpenFile {
  int fd = -1;  // the caller closes it
  size_t size = 0;
};

// Opens `path` for reading after the checks issue 12 asks for: a regular
// file of at most `max_bytes`; `over` is the expected part of the message
// for a file over the limit.
Result<OpenFile> open_checked(const std::filesystem::path& path, Bytes max_bytes, const std::string& over);

constexpr std::string_view kReadable = "an existing, readable regular file";

}  // namespace

namespace {

Result<OpenFile> open_checked(const std::filesystem::path& path, Bytes max_bytes, const std::string& over) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int opened = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (opened < 0) return refuse(path, std::string("cannot read file: ") + std::strerror(errno));
  const Fd file{opened};
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
  const int fd = ::dup(file.fd);
  if (fd < 0) return refuse(path, std::string("cannot read file: ") + std::strerror(errno));
  return OpenFile{.fd = fd, .size = static_cast<size_t>(st.st_size)};
}

Result<std::string> read_bounded(const std::filesystem::path& path, Bytes max_bytes, const std::string& over) {
  const Result<OpenFile> opened = open_checked(path, max_bytes, over);
  if (!opened) return std::unexpected(opened.error());
  const Fd file{opened->fd};
  std::string text(opened->size, '\0');
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
  return read_bounded(path, max_bytes, std::string(kReadable));
}

PaddedText::PaddedText(PaddedText&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)) {}

PaddedText& PaddedText::operator=(PaddedText&& other) noexcept {
  if (this != &other) {
    if (base_ != nullptr) ::munmap(base_, mapped_);
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
  }
  return *this;
}

PaddedText::~PaddedText() {
  if (base_ != nullptr) ::munmap(base_, mapped_);
}

namespace {

// Zeroed anonymous pages for `bytes`, rounded up to whole pages.
char* zero_pages(size_t bytes, size_t& mapped) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  mapped = (bytes + page - 1) / page * page;
  void* at = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return at == MAP_FAILED ? nullptr : static_cast<char*>(at);
}

}  // namespace

PaddedText PaddedText::copy_of(std::string_view text, size_t padding) {
  PaddedText out;
  out.base_ = zero_pages(text.size() + padding, out.mapped_);
  if (out.base_ == nullptr) throw std::bad_alloc();
  std::memcpy(out.base_, text.data(), text.size());
  out.size_ = text.size();
  return out;
}

Result<PaddedText> map_text_file(const std::filesystem::path& path, Bytes max_bytes, size_t padding) {
  const Result<OpenFile> opened = open_checked(path, max_bytes, std::string(kReadable));
  if (!opened) return std::unexpected(opened.error());
  const Fd file{opened->fd};
  const size_t size = opened->size;
  PaddedText out;
  // Zero pages for the file and its padding, then the file's pages over
  // their start: the rest of the file's last page reads as zeros, and the
  // pages after it stay the zero pages.
  out.base_ = zero_pages(size + padding, out.mapped_);
  if (out.base_ == nullptr) return refuse(path, std::string("cannot map file: ") + std::strerror(errno));
  out.size_ = size;
  if (size > 0) {
    void* at = ::mmap(out.base_, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, file.fd, 0);
    if (at == MAP_FAILED) return refuse(path, std::string("cannot map file: ") + std::strerror(errno));
    ::madvise(out.base_, size, MADV_SEQUENTIAL);
  }
  return out;
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
