// The executor's own NVMe path, executor/nvme/BlockStore (io_uring, one
// queue per direction, CRC32C on the caller's thread), at its default block
// size and queue depth: writes alone, reads alone, and reads beside writes,
// each with the lane's slots (1 and 2 callers per direction, the plan's
// nvme_prefetch_depth) taking regions the size of a layer's optimizer
// states. The pread/pwrite sweep (disk_probe.cpp) describes the drive by
// block size and depth and gives the profile's drive rates and
// nvme_duplex; this is what the executor's path gets from the drive,
// reported beside it (profile_writer.cpp says why it is not the rates).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
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

using executor::BlockStore;
using executor::Extent;
using Clock = std::chrono::steady_clock;

constexpr int64_t kRegionBytes = int64_t{32} << 20;  // a multiple of the block: every request is a whole block
constexpr int kMaxCallers = 2;
const executor::BlockStoreOptions kDefaults{};

// Quick: 256 MiB a pass (2.5 GiB moved in all, as much as the quick sweep);
// full: 1 GiB a pass.
int regions(Depth d) { return d == Depth::kQuick ? 8 : 32; }

// A directory of our own under the disk directory (never someone else's:
// mkdir fails if it exists), removed with what the store left in it.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::filesystem::path& parent)
      : path_(parent / ("stowage-profile-" + std::to_string(::getpid()) + ".store")) {
    if (::mkdir(path_.c_str(), 0700) != 0) {
      throw std::runtime_error("cannot create the store probe's directory '" + path_.string() +
                               "': " + std::strerror(errno));
    }
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Reads of `reads` beside writes of `writes`, `callers` threads per
// direction taking the next region of theirs, until one direction is
// through: each direction's rate while both ran, as the regions it
// completed by then over the time it took to complete them (the store
// reports whole regions; a region still in flight when the overlap ended
// counts neither its bytes nor its time). With one direction empty, the
// other alone to its end.
struct Rates {
  double read = 0, write = 0;
};
Rates move(BlockStore& store, const std::vector<Extent>& reads, const std::vector<Extent>& writes, int callers) {
  const bool both = !reads.empty() && !writes.empty();
  const IoBuffers buffer(2 * callers, kRegionBytes);  // one per caller and direction
  struct Direction {
    std::atomic<size_t> next{0}, done{0};
    std::atomic<Clock::rep> last_ns{0};  // since start, of the last region completed in the overlap
  };
  Direction read_side, write_side;
  std::atomic<bool> stop{false}, failed{false};
  std::exception_ptr error;
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < 2 * callers; ++t) {
    const bool write = t % 2 == 1;
    const std::vector<Extent>& mine = write ? writes : reads;
    if (mine.empty()) continue;
    const std::span<std::byte> data = buffer[static_cast<size_t>(t)];
    pool.emplace_back([&, write, data] {
      Direction& side = write ? write_side : read_side;
      try {
        for (size_t i = side.next++; i < mine.size() && !stop; i = side.next++) {
          if (write) {
            (void)store.write(mine[i], data);
          } else {
            (void)store.read(mine[i], data);
          }
          if (stop) break;  // completed after the overlap ended: not counted
          const Clock::rep now = (Clock::now() - start).count();
          Clock::rep seen = side.last_ns.load();
          while (seen < now && !side.last_ns.compare_exchange_weak(seen, now)) {
          }
          if (++side.done == mine.size() && both) stop = true;  // one direction is through
        }
      } catch (...) {
        if (!failed.exchange(true)) error = std::current_exception();  // the first error; the rest stop
        stop = true;
      }
    });
  }
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  const auto rate = [](const Direction& side) {
    const double seconds = std::chrono::duration<double>(Clock::duration(side.last_ns.load())).count();
    return seconds > 0 ? static_cast<double>(side.done.load()) * static_cast<double>(kRegionBytes) / seconds : 0;
  };
  return {.read = rate(read_side), .write = rate(write_side)};
}

}  // namespace

int store_probe_steps(const ProbeOptions& o) { return o.disk_dir ? 5 * kMaxCallers : 0; }

void probe_store(const ProbeOptions& o, Measurements& m, const Tick& tick) {
  if (o.disk_dir) m.store = probe_store_at(*o.disk_dir, regions(o.depth), tick);
}

std::vector<StoreRate> probe_store_at(const std::filesystem::path& disk_dir, int region_count, const Tick& tick) {
  ScratchDirectory dir(disk_dir);
  executor::BlockStoreOptions options = kDefaults;
  options.directories = {dir.path()};
  core::Result<BlockStore> opened = BlockStore::open(options);
  if (!opened) throw std::runtime_error("cannot open a block store in '" + dir.path().string() + "': " +
                                        core::to_string(opened.error()));
  BlockStore& store = *opened;
  std::vector<Extent> all;
  for (int i = 0; i < std::max(2, region_count); ++i) {
    all.push_back(store.reserve("probe region " + std::to_string(i), core::Bytes(kRegionBytes)));
  }
  const std::vector<Extent> first(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(all.size() / 2));
  const std::vector<Extent> second(all.begin() + static_cast<std::ptrdiff_t>(all.size() / 2), all.end());
  std::vector<StoreRate> out;
  for (int callers = 1; callers <= kMaxCallers; ++callers) {
    // Each direction alone twice, the faster kept: a shared virtual disk's
    // other tenants only take rate away.
    StoreRate r{.block = options.block_bytes.count(), .depth = options.queue_depth, .callers = callers};
    for (int repeat = 0; repeat < 2; ++repeat) {
      r.write = std::max(r.write, move(store, {}, all, callers).write);
      tick("disk, the executor's store writing");
      r.read = std::max(r.read, move(store, all, {}, callers).read);
      tick("disk, the executor's store reading");
    }
    const Rates both = move(store, first, second, callers);
    r.mixed_read = both.read;
    r.mixed_write = both.write;
    tick("disk, the executor's store reading beside writing");
    out.push_back(r);
  }
  return out;
}

}  // namespace stowage::probe
