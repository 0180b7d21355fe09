#include "executor/cpu_backend.h"

#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/units.h"
#include "executor/buffer_sides.h"
#include "executor/host_pages.h"
#include "executor/memory_exhausted.h"
#include "executor/model/half_convert.h"
#include "executor/nvme/io_error.h"

namespace stowage::executor {
namespace {

constexpr auto kPage = static_cast<int64_t>(kHostPage);

int64_t round_up(int64_t bytes, int64_t to) {
  return (bytes + to - 1) / to * to;
}

// opaque_device_memory flips a device pointer's top byte: a non-canonical
// address on x86-64 (and outside any mapping elsewhere), so a dereference
// faults instead of reading the buffer.
constexpr uintptr_t kOpaqueBits = uintptr_t{0x7f} << 56;

std::byte* flipped(std::byte* p) {
  return reinterpret_cast<std::byte*>(reinterpret_cast<uintptr_t>(p) ^ kOpaqueBits);
}

// For the layer kernels: an opaque device pointer's host address; any
// other pointer (a host array such as the token ids) is one already.
const void* host_address(const void* p) {
  const auto bits = reinterpret_cast<uintptr_t>(p);
  return (bits & kOpaqueBits) == kOpaqueBits ? reinterpret_cast<const void*>(bits ^ kOpaqueBits) : p;
}

void raise_to(std::atomic<int64_t>& peak, int64_t value) {
  int64_t seen = peak.load();
  while (value > seen && !peak.compare_exchange_weak(seen, value)) {
  }
}

core::Result<void> size_mismatch(std::string_view op, const Buffer& a, const Buffer& b) {
  return core::fail({{},
                     std::string(op) + " of '" + a.what + "' (" + std::to_string(a.bytes) + " B) and '" +
                         b.what + "' (" + std::to_string(b.bytes) +
                         " B): the sizes do not match (a bug in stowage)",
                     ""});
}

}  // namespace

CpuBackend::CpuBackend(CpuBackendOptions options)
    : options_(std::move(options)), kernels_(options_.opaque_device_memory ? &host_address : nullptr) {}

std::byte* CpuBackend::host(const Buffer& b) const {
  if (b.data == nullptr || b.tier != core::Tier::kGpu || !options_.opaque_device_memory) return b.data;
  return flipped(b.data);
}

std::string_view to_string(CallKind kind) {
  switch (kind) {
    case CallKind::kAllocate:
      return "allocate";
    case CallKind::kCopy:
      return "copy";
    case CallKind::kCompute:
      return "compute";
    case CallKind::kOptimizer:
      return "optimizer";
    case CallKind::kBlockRead:
      return "block-read";
    case CallKind::kBlockWrite:
      return "block-write";
  }
  return "";
}

core::Result<std::unique_ptr<CpuBackend>> CpuBackend::create(CpuBackendOptions options) {
  std::unique_ptr<CpuBackend> backend(new CpuBackend(std::move(options)));
  if (backend->options_.nvme) {
    auto store = BlockStore::open(*backend->options_.nvme);
    if (!store) return std::unexpected(store.error());
    backend->store_.emplace(std::move(*store));
  }
  return backend;
}

CpuBackend::~CpuBackend() {
  free_kept();
}

void CpuBackend::give_back_kept() {
  free_kept();
}

void CpuBackend::free_kept() {
  for (const core::Tier tier : {core::Tier::kGpu, core::Tier::kCpu}) {
    free_blocks(tier, pools_[static_cast<size_t>(tier)].trim(0));
  }
}

void CpuBackend::free_blocks(core::Tier tier, const std::vector<BufferPool::Block>& blocks) {
  for (const BufferPool::Block& b : blocks) {
    if (tier == core::Tier::kCpu && options_.lock_host_memory) munlock(b.data, static_cast<size_t>(b.bytes));
    free_host_pages(b.data, static_cast<size_t>(b.bytes));
  }
}

core::Result<Buffer> CpuBackend::allocate(core::Tier tier, int64_t bytes, std::string what) {
  if (tier == core::Tier::kNvme) {
    return core::fail({{}, "cannot allocate '" + what + "' on nvme", "nvme holds regions (reserve_region)"});
  }
  const size_t t = static_cast<size_t>(tier);
  const int64_t cap = options_.capacity[t];
  // Reserve first, so that two lanes cannot both squeeze under the cap.
  const int64_t before = in_use_[t].fetch_add(bytes);
  if (cap > 0 && before + bytes > cap) {
    in_use_[t].fetch_sub(bytes);
    return core::fail(memory_exhausted(tier, what, {.bytes = bytes, .in_use = before, .capacity = cap}));
  }
  Buffer b{.bytes = bytes, .tier = tier, .what = std::move(what)};
  if (bytes == 0) return b;
  raise_to(peak_[t], before + bytes);
  const int64_t rounded = round_up(bytes, kPage);
  BufferPool& pool = pools_[t];
  b.data = pool.take(rounded);  // a block of this size given back earlier: its pages are mapped (and locked)
  if (b.data == nullptr) {
    // A new block: first give back what the pool holds beyond the tier's
    // peak in use (all of it if the system has no memory left). Not beyond
    // the peak less what is in use, as before: a step's buffers come in many
    // sizes, and that tighter bound made each step trim blocks that a later
    // op of the same step needed again, so it mapped, faulted and (host
    // tier) locked them afresh. In the tiny NVMe run (make run) that was 230
    // new blocks of over 1 MB in 20 steps instead of 28 in the first, each
    // fresh 1.5 MB block about 0.8 ms inside the op that asked for it, and
    // 5 % of the step: costs no GPU's caching allocator has.
    free_blocks(tier, pool.trim(peak_[t].load()));
    ++fresh_blocks_[t];
    b.data = allocate_host_pages(static_cast<size_t>(rounded));
    if (b.data == nullptr && pool.kept_bytes() > 0) {
      free_blocks(tier, pool.trim(0));
      b.data = allocate_host_pages(static_cast<size_t>(rounded));
    }
    if (b.data == nullptr) {
      in_use_[t].fetch_sub(bytes);
      return core::fail({{},
                         "out of host memory allocating " + std::string(core::to_string(tier)) + " " +
                             core::format_bytes(core::Bytes(bytes)) + " for '" + b.what + "'",
                         ""});
    }
    // Host tiers are pinned where allowed: a refused mlock (RLIMIT_MEMLOCK)
    // leaves the buffer pageable, which the run reports once.
    if (tier == core::Tier::kCpu && options_.lock_host_memory && locked_.load()) {
      if (mlock(b.data, static_cast<size_t>(rounded)) != 0) locked_.store(false);
    }
  }
  if (tier == core::Tier::kGpu && options_.opaque_device_memory) b.data = flipped(b.data);
  return b;
}

void CpuBackend::release(Buffer& buffer) {
  if (buffer.data != nullptr) {
    pools_[static_cast<size_t>(buffer.tier)].keep({.data = host(buffer), .bytes = round_up(buffer.bytes, kPage)});
  }
  if (buffer.data != nullptr || buffer.bytes > 0)
    in_use_[static_cast<size_t>(buffer.tier)].fetch_sub(buffer.bytes);
  buffer.data = nullptr;
  buffer.bytes = 0;
}

int64_t CpuBackend::in_use(core::Tier tier) const {
  return in_use_[static_cast<size_t>(tier)].load();
}
int64_t CpuBackend::kept_bytes(core::Tier tier) const {
  return tier == core::Tier::kNvme ? 0 : pools_[static_cast<size_t>(tier)].kept_bytes();
}
int64_t CpuBackend::capacity(core::Tier tier) const {
  return options_.capacity[static_cast<size_t>(tier)];
}

core::Result<void> CpuBackend::copy(core::Lane lane, const Buffer& dst, int64_t dst_offset, const Buffer& src,
                                    int64_t src_offset, int64_t bytes) {
  if (dst_offset < 0 || src_offset < 0 || bytes < 0 || dst_offset + bytes > dst.bytes ||
      src_offset + bytes > src.bytes) {
    return core::fail({{},
                       "copy of " + std::to_string(bytes) + " bytes from '" + src.what + "' to '" + dst.what +
                           "' is out of bounds (a bug in stowage)",
                       ""});
  }
  if (bytes > 0) std::memcpy(host(dst) + dst_offset, host(src) + src_offset, static_cast<size_t>(bytes));
  moved_[static_cast<size_t>(lane)] += bytes;
  return {};
}

core::Result<void> CpuBackend::compute(core::Lane, std::string_view what, const LayerBuffers& buffers,
                                       const std::function<void(const LayerWorkspace&)>& kernel) {
  // The layer gets the device buffers as they are and runs on this
  // backend's kernels, which alone dereference them (layer_kernels.h).
  const model::InstalledKernels installed(kernels_);
  try {
    kernel(device_views(buffers));
  } catch (const std::exception& e) {
    return core::fail({{}, "compute '" + std::string(what) + "' failed: " + e.what(), ""});
  }
  return {};
}

core::Result<void> CpuBackend::optimizer_step(core::Lane, const OptimizerWork& work) {
  if (auto side = one_side("optimizer step", {work.states, work.grad16, work.param16_out}); !side)
    return std::unexpected(side.error());
  const std::span<const uint16_t> grad16 = view<const uint16_t>(*work.grad16);
  const size_t n = grad16.size();
  const auto state_bytes = static_cast<int64_t>(n) * core::state_bytes_per_param(work.state_precision);
  if (work.states->bytes != state_bytes || work.param16_out->bytes != work.grad16->bytes)
    return size_mismatch("optimizer step", *work.states, *work.grad16);
  // master32 first, fp32 in either layout; the moments after it.
  std::byte* base = view<std::byte>(*work.states).data();  // device memory is reached through view
  const std::span<float> master(reinterpret_cast<float*>(base), n);
  std::byte* moments = base + 4 * n;
  // The gradient arrives in 16 bits and is widened exactly (bf16 and fp16
  // both embed in fp32), once per step, in a buffer reused per thread and
  // laid out as the other arrays Adam streams are (host_pages.h).
  thread_local std::unique_ptr<HostArray<float>> widened;
  if (!widened || widened->size() < n) {
    widened.reset();  // the old one first: two at once could exceed what the host has
    widened = std::make_unique<HostArray<float>>(n, 0.0f);
  }
  const std::span<float> grad32 = widened->span().first(n);
  model::from_half(work.precision, grad16, grad32);
  const AdamOptions options{.threads = options_.optimizer_threads};
  try {
    if (work.state_precision == core::StatePrecision::kBf16) {
      auto* m = reinterpret_cast<uint16_t*>(moments);
      adam_step_bf16_moments(master, grad32, {m, n}, {m + n, n}, view<uint16_t>(*work.param16_out), work.precision,
                             work.hyper, work.step, work.grad_scale, options);
    } else {
      auto* m = reinterpret_cast<float*>(moments);
      adam_step(master, grad32, {m, n}, {m + n, n}, view<uint16_t>(*work.param16_out), work.precision, work.hyper,
                work.step, work.grad_scale, options);
    }
  } catch (const std::exception& e) {
    return core::fail({{}, std::string("optimizer step failed: ") + e.what(), ""});
  }
  return {};
}

core::Result<void> CpuBackend::widen(core::Lane, const Buffer& src16, const Buffer& dst32, int64_t dst_offset,
                                     core::Precision precision) {
  if (auto side = one_side("widening", {&src16, &dst32}); !side) return std::unexpected(side.error());
  const std::span<const uint16_t> in = view<const uint16_t>(src16);
  const std::span<float> out = view<float>(dst32);
  if (dst_offset < 0 || dst_offset + static_cast<int64_t>(in.size()) > static_cast<int64_t>(out.size()))
    return size_mismatch("widening", src16, dst32);
  model::from_half(precision, in, out.subspan(static_cast<size_t>(dst_offset), in.size()));
  return {};
}

core::Result<void> CpuBackend::narrow(core::Lane, const Buffer& src32, int64_t src_offset,
                                      const Buffer& dst16, core::Precision precision) {
  if (auto side = one_side("narrowing", {&src32, &dst16}); !side) return std::unexpected(side.error());
  const std::span<const float> in = view<const float>(src32);
  const std::span<uint16_t> out = view<uint16_t>(dst16);
  if (src_offset < 0 || src_offset + static_cast<int64_t>(out.size()) > static_cast<int64_t>(in.size()))
    return size_mismatch("narrowing", src32, dst16);
  model::to_half(precision, in.subspan(static_cast<size_t>(src_offset), out.size()), out);
  return {};
}

core::Result<void> CpuBackend::accumulate(core::Lane, const Buffer& acc16, const Buffer& add16,
                                          core::Precision precision) {
  if (auto side = one_side("accumulation", {&acc16, &add16}); !side) return std::unexpected(side.error());
  if (acc16.bytes != add16.bytes) return size_mismatch("accumulation", acc16, add16);
  const std::span<uint16_t> acc = view<uint16_t>(acc16);
  const std::span<const uint16_t> add = view<const uint16_t>(add16);
  model::accumulate_half(precision, acc, add);
  return {};
}

core::Result<void> CpuBackend::zero(core::Lane, const Buffer& buffer) {
  if (buffer.bytes > 0) std::memset(host(buffer), 0, static_cast<size_t>(buffer.bytes));
  return {};
}

core::Result<GradientStats> CpuBackend::gradient_stats(core::Lane, const Buffer& grad16,
                                                       core::Precision precision) {
  GradientStats stats;
  const std::span<const uint16_t> bits = view<const uint16_t>(grad16);
  stats.finite = precision == core::Precision::kBf16 ? stats.squares.add_bf16_bits(bits)
                                                      : stats.squares.add_fp16_bits(bits);
  return stats;
}

// Every call has finished its work when it returns, so an event has
// completed when it is recorded and a wait has nothing to wait for.
core::Result<Event> CpuBackend::record(core::Lane lane) {
  return Event{.lane = lane, .sequence = ++events_recorded_};
}
core::Result<void> CpuBackend::wait(core::Lane, const Event&) {
  return {};
}

core::Result<void> CpuBackend::reserve_region(const std::string& region, int64_t bytes) {
  if (!store_)
    return core::fail(
        {{}, "the plan keeps '" + region + "' on NVMe but no NVMe directory was given", "--nvme-dir DIR"});
  Extent extent;
  try {
    extent = store_->reserve(region, core::Bytes(bytes));
  } catch (const IoError& e) {
    return core::fail({{}, e.what(), ""});
  }
  std::lock_guard lock(regions_mutex_);
  regions_[region] = extent;
  in_use_[static_cast<size_t>(core::Tier::kNvme)].fetch_add(bytes);
  return {};
}

int64_t CpuBackend::bytes_moved(core::Lane lane) const {
  return moved_[static_cast<size_t>(lane)].load();
}

core::Result<core::QueueDepth> CpuBackend::block_io(core::Lane lane, const BlockIo& io, bool write) {
  Extent extent;
  {
    std::lock_guard lock(regions_mutex_);
    auto it = regions_.find(io.region);
    if (it == regions_.end())
      return core::fail({{}, "no NVMe region '" + io.region + "' (a bug in stowage)", ""});
    extent = it->second;
  }
  core::QueueDepth depth;
  try {
    depth = write ? store_->write(extent, io.data) : store_->read(extent, io.data);
  } catch (const IoError& e) {
    return core::fail({{}, e.what(), ""});
  }
  moved_[static_cast<size_t>(lane)] += static_cast<int64_t>(io.data.size());
  return depth;
}

core::Result<core::QueueDepth> CpuBackend::block_write(core::Lane lane, const BlockIo& io) {
  return block_io(lane, io, true);
}
core::Result<core::QueueDepth> CpuBackend::block_read(core::Lane lane, const BlockIo& io) {
  return block_io(lane, io, false);
}

}  // namespace stowage::executor
