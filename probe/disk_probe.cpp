// O_DIRECT disk I/O in a scratch file of our own: sequential reads and
// writes by block size and requests in flight (one thread per request, each
// walking its own stripe of the file), the latency of one small read, and
// the rate in the last quarter of a long write (the rate once the drive's
// write cache is full, if the file outgrows it: a full run writes 2 GiB),
// and reads beside writes (how far the drive serves both directions at
// once) at the configuration nearest the executor's default.
// The page cache is bypassed (O_DIRECT), so reads measure the drive.
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "executor/nvme/aligned_buffer.h"
#include "executor/nvme/block_store.h"
#include "probe/io_buffers.h"
#include "probe/probes.h"

namespace stowage::probe {
namespace {

using executor::AlignedBuffer;
constexpr auto kAlign = static_cast<int64_t>(executor::kDirectIoAlignment);

struct Config {
  int64_t file_bytes;
  std::vector<int64_t> blocks;
  std::vector<int> depths;
};

Config config(Depth d) {
  if (d == Depth::kQuick) return {int64_t{512} << 20, {int64_t{1} << 20}, {1, 8}};
  return {int64_t{2} << 30, {int64_t{128} << 10, int64_t{1} << 20, int64_t{4} << 20}, {1, 4, 16}};
}

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error(what + " '" + path + "': " + std::strerror(errno));
}

// The scratch file: created here (O_EXCL: never someone else's), removed
// when done.
class ScratchFile {
 public:
  explicit ScratchFile(const std::filesystem::path& dir) {
    path_ = (dir / ("stowage-profile-" + std::to_string(::getpid()) + ".tmp")).string();
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_DIRECT, 0600);
    if (fd_ < 0) fail("cannot create an O_DIRECT scratch file (a filesystem without O_DIRECT, such as tmpfs, cannot be profiled)", path_);
  }
  ~ScratchFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

// One request: `buffer`'s first `block` bytes to or from byte `at`.
bool move_block(const ScratchFile& f, std::span<std::byte> buffer, int64_t block, int64_t at, bool write) {
  const auto n = static_cast<size_t>(block);
  const ssize_t moved = write ? ::pwrite(f.fd(), buffer.data(), n, static_cast<off_t>(at))
                              : ::pread(f.fd(), buffer.data(), n, static_cast<off_t>(at));
  return moved == block;
}

// Seconds to move the whole file in `block` requests, `depth` at a time.
double transfer(const ScratchFile& f, int64_t file_bytes, int64_t block, int depth, bool write) {
  const int64_t blocks = file_bytes / block;
  const IoBuffers buffer(depth, block);
  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < depth; ++t) {
    pool.emplace_back([&, t] {
      for (int64_t i = next++; i < blocks; i = next++) {
        if (!move_block(f, buffer[static_cast<size_t>(t)], block, i * block, write)) failed = true;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  if (failed) fail(write ? "O_DIRECT write failed in" : "O_DIRECT read failed in", f.path());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Reads of the file's first half beside writes of its second, `depth`
// requests of `block` each, until either direction is done: each one's
// rate while both ran.
DiskRate mixed_transfer(const ScratchFile& f, int64_t file_bytes, int64_t block, int depth) {
  const int64_t half = file_bytes / 2 / block;  // blocks per direction
  if (half <= 0) return {.block = block, .depth = depth};  // nothing to overlap: no rates
  const IoBuffers buffer(2 * depth, block);
  std::atomic<int64_t> next_read{0}, next_write{0}, read_done{0}, write_done{0};
  std::atomic<bool> stop{false}, failed{false};
  std::atomic<std::chrono::steady_clock::rep> end_ns{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < 2 * depth; ++t) {
    pool.emplace_back([&, t] {
      const bool write = t % 2 == 1;
      std::atomic<int64_t>& next = write ? next_write : next_read;
      std::atomic<int64_t>& done = write ? write_done : read_done;
      for (int64_t i = next++; i < half && !stop; i = next++) {
        if (!move_block(f, buffer[static_cast<size_t>(t)], block, (write ? half + i : i) * block, write)) failed = true;
        if (stop) break;  // ended after the overlap did: not counted
        if (++done == half && !stop.exchange(true)) {  // one direction is through: the overlap ends
          end_ns = std::chrono::steady_clock::now().time_since_epoch().count();
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  if (failed) fail("O_DIRECT read or write failed in", f.path());
  // The overlap: until the first direction finished. Requests the other
  // direction had in flight then are not counted.
  const std::chrono::steady_clock::time_point end{std::chrono::steady_clock::duration(end_ns.load())};
  const double seconds = std::chrono::duration<double>(end - start).count();
  return {.block = block,
          .depth = depth,
          .read = static_cast<double>(read_done.load() * block) / seconds,
          .write = static_cast<double>(write_done.load() * block) / seconds};
}

}  // namespace

const DiskRate* executor_default_disk_rate(const std::vector<DiskRate>& disk) {
  const executor::BlockStoreOptions kStore{};  // the executor's default block size and depth
  const DiskRate* best = nullptr;
  double best_score = 1e30;
  for (const DiskRate& d : disk) {
    const double score = std::abs(std::log2(static_cast<double>(d.block) / static_cast<double>(kStore.block_bytes.count()))) +
                         std::abs(std::log2(d.depth / static_cast<double>(kStore.queue_depth)));
    if (score < best_score) {
      best_score = score;
      best = &d;
    }
  }
  return best;
}

int disk_probe_steps(const ProbeOptions& o) {
  if (!o.disk_dir) return 0;
  const Config c = config(o.depth);
  return static_cast<int>(c.blocks.size() * c.depths.size()) * 2 + 3;
}

void probe_disk(const ProbeOptions& o, Measurements& m, const Tick& tick) {
  if (!o.disk_dir) return;
  const Config c = config(o.depth);
  m.disk_dir = o.disk_dir->string();
  struct statvfs fs {};
  if (::statvfs(o.disk_dir->c_str(), &fs) == 0) m.disk_capacity = static_cast<int64_t>(fs.f_blocks) * static_cast<int64_t>(fs.f_frsize);
  ScratchFile f(*o.disk_dir);
  // The first write lays the file out; in a full run, a long one whose
  // quarters show a drive slowing once its write cache is full.
  const int64_t quarter = c.file_bytes / 4;
  std::vector<double> quarters;
  for (int q = 0; q < 4; ++q) {
    const auto start = std::chrono::steady_clock::now();
    const IoBuffers buffer(1, int64_t{1} << 20);
    for (int64_t at = q * quarter; at < (q + 1) * quarter; at += int64_t{1} << 20) {
      if (!move_block(f, buffer[0], int64_t{1} << 20, at, true)) fail("O_DIRECT write failed in", f.path());
    }
    quarters.push_back(static_cast<double>(quarter) /
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  m.disk_write_after_cache = quarters.back();
  tick("disk, laying out the scratch file");
  for (int64_t block : c.blocks) {
    for (int depth : c.depths) {
      DiskRate r{.block = block, .depth = depth};
      r.write = static_cast<double>(c.file_bytes) / transfer(f, c.file_bytes, block, depth, true);
      tick("disk, O_DIRECT write");
      r.read = static_cast<double>(c.file_bytes) / transfer(f, c.file_bytes, block, depth, false);
      tick("disk, O_DIRECT read");
      m.disk.push_back(r);
    }
  }
  if (const DiskRate* d = executor_default_disk_rate(m.disk)) {
    m.disk_mixed = mixed_transfer(f, c.file_bytes, d->block, d->depth);
    tick("disk, reads beside writes");
  }
  const AlignedBuffer small(static_cast<size_t>(kAlign));
  int64_t at = 0;
  m.disk_request_seconds = best_seconds(50, [&] {
    if (!move_block(f, small.span(), kAlign, at, false)) fail("O_DIRECT read failed in", f.path());
    at = (at + (int64_t{1} << 20)) % c.file_bytes;
  });
  tick("disk, one small read");
}

}  // namespace stowage::probe
