// BlockStore: striping arithmetic, the write and read jobs the rings run
// (checksum on the way out, verification on the way in), and turning a
// ring's failure into a message that names the file, offset and region.
#include "executor/nvme/block_store.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "executor/crc32c.h"
#include "executor/directory_lock.h"
#include "executor/nvme/io_queue.h"

namespace stowage::executor {
namespace {

constexpr int64_t kMaxBlockBytes = int64_t{256} << 20;  // io_uring lengths are 32-bit; staging is qd * this
constexpr int kMaxQueueDepth = 1024;
constexpr int64_t kAlign = static_cast<int64_t>(kDirectIoAlignment);

int64_t round_up(int64_t n, int64_t to) {
  return (n + to - 1) / to * to;
}

// Block k of the caller's buffer, if the ring may do its I/O there directly
// (no staging copy): 4096-aligned and a whole number of 4096-byte pages, so
// not a tail that needs padding. Pinned host buffers, which the executor
// moves tensors through, are page-aligned.
template <class Byte>
std::span<std::byte> direct_span(std::span<Byte> caller, int64_t block_bytes, int64_t k, int64_t valid) {
  Byte* p = caller.data() + k * block_bytes;
  if (valid % kAlign != 0 || reinterpret_cast<uintptr_t>(p) % kDirectIoAlignment != 0) return {};
  // const_cast for a write's source: the kernel only reads it.
  return {const_cast<std::byte*>(p), static_cast<size_t>(valid)};
}

std::string hex32(uint32_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x00000000";
  for (int i = 9; i >= 2; --i, v >>= 4) out[static_cast<size_t>(i)] = kDigits[v & 0xF];
  return out;
}

std::string where(const std::filesystem::path& file, int64_t offset, int64_t bytes) {
  return "file '" + file.string() + "', offset " + std::to_string(offset) + ", " + std::to_string(bytes) +
         " bytes";
}

// Global block g lives in file g % n at byte (g / n) * block_bytes: block i
// of a region and block i + 1 sit on different drives, so a sequential read
// of a region keeps every drive busy.
struct Layout {
  int64_t block_bytes = 0;
  int64_t files = 0;

  [[nodiscard]] int64_t valid_bytes(const Extent& e, int64_t k) const {
    return std::min(block_bytes, e.bytes.count() - k * block_bytes);
  }
  [[nodiscard]] BlockRequest request(const Extent& e, int64_t k) const {
    const int64_t g = e.first_block + k;
    return {.file = static_cast<int>(g % files),
            .offset = g / files * block_bytes,
            .bytes = round_up(valid_bytes(e, k), kAlign)};
  }
  // Bytes file f must hold once blocks [0, end_block) exist.
  [[nodiscard]] int64_t file_bytes(int64_t f, int64_t end_block) const {
    return end_block > f ? (end_block - f + files - 1) / files * block_bytes : 0;
  }
};

struct Region {
  std::string name;
  Extent extent;
  std::vector<uint32_t> crcs;  // per block, over its bytes on disk (padding included)
  bool written = false;        // a complete, successful write happened last
};

// Who checksums a block is whoever touches its bytes anyway. A staged block
// (the caller's memory not aligned, or a tail that needs padding) is copied
// into a staging buffer by the queue's I/O thread, which checksums it there.
// A block the device moves to or from the caller's memory directly is
// checksummed by the caller's thread, which would otherwise only wait,
// while the I/O thread keeps the device fed: with both on the I/O thread,
// every block's CRC32C delayed the next submissions and reaps, and writes
// of 1 MiB blocks at depth 8 ran 2.83 GB/s instead of 4.32 here (medians of
// 16 passes, issue 16).

// Copies each staged block into its staging buffer, zero-pads the tail and
// records its checksum; checksum_direct_blocks() does the others.
class WriteJob final : public BlockJob {
 public:
  WriteJob(const Layout& layout, const Extent& extent, std::span<const std::byte> data)
      : layout_(layout), extent_(extent), data_(data), crcs_(static_cast<size_t>(extent.blocks)) {}

  BlockRequest request(int64_t k) override { return layout_.request(extent_, k); }
  std::span<std::byte> direct(int64_t k) override {
    return direct_span(data_, layout_.block_bytes, k, layout_.valid_bytes(extent_, k));
  }
  void fill(int64_t k, std::span<std::byte> memory) override {
    const std::byte* source = data_.data() + k * layout_.block_bytes;
    if (memory.data() == source) return;  // direct: the caller's thread checksums it
    const auto valid = static_cast<size_t>(layout_.valid_bytes(extent_, k));
    std::memcpy(memory.data(), source, valid);
    std::fill(memory.begin() + static_cast<std::ptrdiff_t>(valid), memory.end(), std::byte{0});
    crcs_[static_cast<size_t>(k)] = crc32c(memory);
  }
  // On the caller's thread, while the run moves the blocks: the checksum of
  // every block written from the caller's memory. The kernel only reads
  // that memory meanwhile.
  void checksum_direct_blocks() {
    for (int64_t k = 0; k < extent_.blocks; ++k) {
      const std::span<const std::byte> block = direct(k);
      if (!block.empty()) crcs_[static_cast<size_t>(k)] = crc32c(block);
    }
  }
  void drain(int64_t, std::span<const std::byte>) override {
    throw std::logic_error("nvme: drain called on a write");
  }
  std::vector<uint32_t> take_crcs() { return std::move(crcs_); }

 private:
  Layout layout_;
  Extent extent_;
  std::span<const std::byte> data_;
  std::vector<uint32_t> crcs_;
};

// Verifies each block against the checksum written. A staged block is
// verified in staging by the I/O thread and copied out only then. A block
// read directly into the caller's buffer is verified there by the caller's
// thread (verify_direct_blocks), block by block as they arrive; a mismatch
// stops the run from starting more blocks and throws all the same.
class ReadJob final : public BlockJob {
 public:
  ReadJob(const Layout& layout, const Extent& extent, std::span<std::byte> out, std::vector<uint32_t> crcs,
          const std::string& name, const std::vector<DirectFile>& files)
      : layout_(layout),
        extent_(extent),
        out_(out),
        crcs_(std::move(crcs)),
        name_(name),
        files_(files),
        arrived_(static_cast<size_t>(extent.blocks), false) {}

  BlockRequest request(int64_t k) override {
    if (stop_.load(std::memory_order_acquire)) std::rethrow_exception(mismatch_);  // ends the run
    return layout_.request(extent_, k);
  }
  std::span<std::byte> direct(int64_t k) override {
    return direct_span(out_, layout_.block_bytes, k, layout_.valid_bytes(extent_, k));
  }
  void fill(int64_t, std::span<std::byte>) override { throw std::logic_error("nvme: fill called on a read"); }
  void drain(int64_t k, std::span<const std::byte> memory) override {
    std::byte* destination = out_.data() + k * layout_.block_bytes;
    if (memory.data() == destination) {  // direct: the caller's thread verifies it
      {
        std::lock_guard lock(mutex_);
        arrived_[static_cast<size_t>(k)] = true;
      }
      progress_.notify_one();
      return;
    }
    verify(k, memory);
    std::memcpy(destination, memory.data(), static_cast<size_t>(layout_.valid_bytes(extent_, k)));
  }
  void finished() override {
    {
      std::lock_guard lock(mutex_);
      over_ = true;
    }
    progress_.notify_one();
  }

  // On the caller's thread, while the run moves the blocks: waits for each
  // block read into the caller's memory and verifies it, until all are
  // verified or the run is over (a block that never arrived belongs to a
  // failed run, which the caller reports). Throws nothing: a mismatch is
  // kept for rethrow_mismatch() and stops the run from starting more
  // blocks, so that nothing is left writing into the caller's memory
  // once the caller has waited for the run.
  void verify_direct_blocks() {
    for (int64_t k = 0; k < extent_.blocks; ++k) {
      const std::span<const std::byte> block = direct(k);
      if (block.empty()) continue;
      {
        std::unique_lock lock(mutex_);
        progress_.wait(lock, [&] { return arrived_[static_cast<size_t>(k)] || over_; });
        if (!arrived_[static_cast<size_t>(k)]) return;
      }
      try {
        verify(k, block);
      } catch (...) {
        mismatch_ = std::current_exception();
        stop_.store(true, std::memory_order_release);
        return;
      }
    }
  }
  void rethrow_mismatch() const {
    if (mismatch_) std::rethrow_exception(mismatch_);
  }

 private:
  void verify(int64_t k, std::span<const std::byte> memory) const {
    const uint32_t expected = crcs_[static_cast<size_t>(k)];
    const uint32_t actual = crc32c(memory);
    if (actual != expected) throw_mismatch(k, expected, actual);
  }

  [[noreturn]] void throw_mismatch(int64_t k, uint32_t expected, uint32_t actual) const {
    const BlockRequest r = layout_.request(extent_, k);
    const auto& file = files_[static_cast<size_t>(r.file)].path();
    throw IoError(IoErrorKind::kChecksumMismatch, 0, file, r.offset,
                  "nvme: checksum mismatch in region '" + name_ + "', block " + std::to_string(k) + " of " +
                      std::to_string(extent_.blocks) + ": " + where(file, r.offset, r.bytes) + ": CRC32C " +
                      hex32(actual) + " read, " + hex32(expected) +
                      " written. The data on disk is corrupt; none of it was returned");
  }

  Layout layout_;
  Extent extent_;
  std::span<std::byte> out_;
  std::vector<uint32_t> crcs_;
  const std::string& name_;
  const std::vector<DirectFile>& files_;
  // Between the I/O thread (drain, finished) and the caller's thread.
  std::mutex mutex_;
  std::condition_variable progress_;
  std::vector<bool> arrived_;  // [k]: direct block k has arrived in the caller's memory
  bool over_ = false;
  // The caller's thread found a mismatch: request() throws it, which stops
  // the run (set before stop_ is, read after).
  std::exception_ptr mismatch_;
  std::atomic<bool> stop_{false};
};

int64_t elapsed_ns(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - since)
      .count();
}

}  // namespace

struct BlockStore::Impl {
  // First, so released last: after the files below are removed.
  std::vector<DirectoryLock> locks;
  Layout layout;
  std::vector<DirectFile> files;
  mutable std::mutex meta_mutex;  // guards regions, next_block and the files' sizes
  std::deque<Region> regions;     // a deque: references stay valid as it grows
  int64_t next_block = 0;
  std::unique_ptr<IoQueue> reads;   // the device queue of each direction
  std::unique_ptr<IoQueue> writes;
  std::atomic<int64_t> bytes_read{0}, bytes_written{0}, read_ops{0}, write_ops{0}, resubmissions{0};
  std::atomic<int64_t> read_ns{0}, write_ns{0};

  ~Impl() {
    reads.reset();  // their threads stop before the files go
    writes.reset();
    std::error_code ignored;  // best effort: a file already gone is fine
    for (const DirectFile& f : files) std::filesystem::remove(f.path(), ignored);
  }

  Region& region(const Extent& e);
  [[noreturn]] void throw_failure(IoOp op, const Region& r, const IoFailure& f) const;
  void count(IoOp op, const IoRunReport& report, int64_t ns);
};

// The region `e` names, checked to be one this store reserved. Takes meta_mutex.
Region& BlockStore::Impl::region(const Extent& e) {
  std::lock_guard lock(meta_mutex);
  if (e.region < 0 || e.region >= static_cast<int64_t>(regions.size())) {
    throw std::logic_error("nvme: extent of region " + std::to_string(e.region) +
                           " was not reserved by this store");
  }
  Region& r = regions[static_cast<size_t>(e.region)];
  if (r.extent.first_block != e.first_block || r.extent.blocks != e.blocks || r.extent.bytes != e.bytes) {
    throw std::logic_error("nvme: extent does not match region '" + r.name + "' of this store");
  }
  return r;
}

void BlockStore::Impl::throw_failure(IoOp op, const Region& r, const IoFailure& f) const {
  const auto& file = files[static_cast<size_t>(f.request.file)].path();
  const std::string what = f.kind == IoErrorKind::kUnexpectedEof
                               ? "end of file (the file is shorter than the region: truncated by someone?)"
                               : describe_errno(f.error_number);
  throw IoError(f.kind, f.error_number, file, f.request.offset,
                std::string("nvme: ") + (op == IoOp::kRead ? "read" : "write") + " of region '" + r.name +
                    "' failed at block " + std::to_string(f.block) + " of " +
                    std::to_string(r.extent.blocks) + ": " + where(file, f.request.offset, f.request.bytes) +
                    " (" + std::to_string(f.done) + " done): " + what);
}

void BlockStore::Impl::count(IoOp op, const IoRunReport& report, int64_t ns) {
  resubmissions += report.resubmissions;
  (op == IoOp::kRead ? read_ops : write_ops) += report.completed;
  (op == IoOp::kRead ? read_ns : write_ns) += ns;
}

core::Diagnostics validate(const BlockStoreOptions& options) {
  core::Diagnostics out;
  auto problem = [&out](std::string what, std::string expected) {
    out.push_back({.what = std::move(what), .expected = std::move(expected)});
  };
  if (options.directories.empty()) problem("nvme: no directory given", "at least one, one per drive");
  for (const auto& d : options.directories) {
    if (d.empty()) problem("nvme: empty directory name", "a path such as /mnt/nvme0/stowage");
  }
  const int64_t b = options.block_bytes.count();
  if (b <= 0 || b % kAlign != 0 || b > kMaxBlockBytes) {
    problem("nvme: block size " + std::to_string(b) + " bytes",
            "a positive multiple of 4096 bytes, at most 256 MiB, e.g. 1 MiB");
  }
  if (options.queue_depth < 1 || options.queue_depth > kMaxQueueDepth) {
    problem("nvme: queue depth " + std::to_string(options.queue_depth), "1 to 1024, e.g. 8");
  }
  return out;
}

core::Result<BlockStore> BlockStore::open(const BlockStoreOptions& options) {
  if (auto problems = validate(options); !problems.empty()) return std::unexpected(std::move(problems));
  auto impl = std::make_unique<Impl>();
  impl->layout = {.block_bytes = options.block_bytes.count(),
                  .files = static_cast<int64_t>(options.directories.size())};
  const DirectIo direct = options.allow_buffered ? DirectIo::kFallBackToBuffered : DirectIo::kRequired;
  std::vector<int> fds;
  for (size_t i = 0; i < options.directories.size(); ++i) {
    const auto& dir = options.directories[i];
    // One store per directory: a second run there would overwrite this
    // one's blocks (issue 12). The lock also creates the directory.
    auto lock = DirectoryLock::acquire(dir, "NVMe directory");
    if (!lock)
      throw IoError(IoErrorKind::kSetup, EBUSY, dir, -1, "nvme: " + lock.error().front().to_string());
    impl->locks.push_back(std::move(*lock));
    impl->files.emplace_back(dir / ("stowage-" + std::to_string(i) + ".blocks"), direct);
    impl->locks.back().record_created(
        impl->files.back().path());  // removed by the next run if this one is killed
    fds.push_back(impl->files.back().fd());
  }
  const int64_t b = impl->layout.block_bytes;
  impl->reads = std::make_unique<IoQueue>(fds, options.queue_depth, b, options.fault);
  impl->writes = std::make_unique<IoQueue>(fds, options.queue_depth, b, options.fault);
  return BlockStore(std::move(impl));
}

BlockStore::BlockStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockStore::BlockStore(BlockStore&&) noexcept = default;
BlockStore& BlockStore::operator=(BlockStore&&) noexcept = default;
BlockStore::~BlockStore() = default;

Extent BlockStore::reserve(std::string name, core::Bytes bytes) {
  if (bytes.count() < 0) throw std::logic_error("nvme: region '" + name + "' of negative size");
  Impl& s = *impl_;
  std::lock_guard lock(s.meta_mutex);
  const int64_t blocks = (bytes.count() + s.layout.block_bytes - 1) / s.layout.block_bytes;
  const int64_t end = s.next_block + blocks;
  // Allocate first, commit after: a full disk leaves the store as it was.
  for (size_t f = 0; f < s.files.size(); ++f)
    s.files[f].grow_to(s.layout.file_bytes(static_cast<int64_t>(f), end));
  const Extent extent{.region = static_cast<int64_t>(s.regions.size()),
                      .bytes = bytes,
                      .first_block = s.next_block,
                      .blocks = blocks};
  s.regions.push_back({.name = std::move(name), .extent = extent});
  s.next_block = end;
  return extent;
}

core::QueueDepth BlockStore::write(const Extent& extent, std::span<const std::byte> data) {
  Impl& s = *impl_;
  Region& r = s.region(extent);
  if (static_cast<int64_t>(data.size()) != extent.bytes.count()) {
    throw std::logic_error("nvme: writing " + std::to_string(data.size()) + " bytes to region '" + r.name +
                           "' of " + std::to_string(extent.bytes.count()));
  }
  {
    std::lock_guard lock(s.meta_mutex);
    r.written = false;  // until this write has fully succeeded
  }
  const auto start = std::chrono::steady_clock::now();
  WriteJob job(s.layout, extent, data);
  const auto ticket = s.writes->submit(IoOp::kWrite, extent.blocks, job);
  job.checksum_direct_blocks();
  const IoRunReport report = s.writes->wait(*ticket);
  s.count(IoOp::kWrite, report, elapsed_ns(start));
  if (report.failure) s.throw_failure(IoOp::kWrite, r, *report.failure);
  s.bytes_written += extent.bytes.count();
  std::lock_guard meta(s.meta_mutex);
  r.crcs = job.take_crcs();
  r.written = true;
  return report.depth;
}

core::QueueDepth BlockStore::read(const Extent& extent, std::span<std::byte> out) {
  Impl& s = *impl_;
  Region& r = s.region(extent);
  if (static_cast<int64_t>(out.size()) != extent.bytes.count()) {
    throw std::logic_error("nvme: reading region '" + r.name + "' of " +
                           std::to_string(extent.bytes.count()) + " bytes into " +
                           std::to_string(out.size()));
  }
  std::vector<uint32_t> crcs;
  {
    std::lock_guard lock(s.meta_mutex);
    if (!r.written) {
      throw std::logic_error("nvme: region '" + r.name + "' read before a write of it completed");
    }
    crcs = r.crcs;  // a copy: a concurrent write may replace them
  }
  const auto start = std::chrono::steady_clock::now();
  ReadJob job(s.layout, extent, out, std::move(crcs), r.name, s.files);
  const auto ticket = s.reads->submit(IoOp::kRead, extent.blocks, job);
  job.verify_direct_blocks();
  // Throws a mismatch found in staging, or one that stopped the run.
  const IoRunReport report = s.reads->wait(*ticket);
  job.rethrow_mismatch();  // one found after every block had started
  s.count(IoOp::kRead, report, elapsed_ns(start));
  if (report.failure) s.throw_failure(IoOp::kRead, r, *report.failure);
  s.bytes_read += extent.bytes.count();
  return report.depth;
}

IoStats BlockStore::stats() const {
  const Impl& s = *impl_;
  return {.bytes_read = core::Bytes(s.bytes_read.load()),
          .bytes_written = core::Bytes(s.bytes_written.load()),
          .read_ops = s.read_ops.load(),
          .write_ops = s.write_ops.load(),
          .resubmissions = s.resubmissions.load(),
          .read_time = core::Seconds(static_cast<double>(s.read_ns.load()) * 1e-9),
          .write_time = core::Seconds(static_cast<double>(s.write_ns.load()) * 1e-9)};
}

IoMode BlockStore::mode() const {
  for (const DirectFile& f : impl_->files) {
    if (f.mode() == IoMode::kBuffered) return IoMode::kBuffered;
  }
  return IoMode::kDirect;
}

const std::string& BlockStore::name(const Extent& extent) const {
  return impl_->region(extent).name;
}

BlockPlace BlockStore::place(const Extent& extent, int64_t block) const {
  if (block < 0 || block >= extent.blocks) {
    throw std::logic_error("nvme: block " + std::to_string(block) + " outside a region of " +
                           std::to_string(extent.blocks));
  }
  const BlockRequest r = impl_->layout.request(extent, block);
  return {.file = impl_->files[static_cast<size_t>(r.file)].path(),
          .offset = r.offset,
          .bytes = core::Bytes(r.bytes)};
}

std::vector<std::filesystem::path> BlockStore::files() const {
  std::vector<std::filesystem::path> out;
  for (const DirectFile& f : impl_->files) out.push_back(f.path());
  return out;
}

}  // namespace stowage::executor
