#include "executor/cuda/cuda_backend.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <utility>

#include "core/units.h"
#include "executor/adam_update.h"
#include "executor/buffer_sides.h"
#include "executor/cuda/adam_kernel.h"
#include "executor/cuda/cuda_device.h"
#include "executor/cuda/cuda_error.h"
#include "executor/cuda/cuda_event.h"
#include "executor/cuda/gradient_stats_kernel.h"
#include "executor/cuda/half_kernels.h"
#include "executor/memory_exhausted.h"

namespace stowage::executor::cuda {
namespace {

using core::Tier;

constexpr int64_t kPage = 4096;

int64_t round_up(int64_t bytes, int64_t to) {
  return (bytes + to - 1) / to * to;
}

void raise_to(std::atomic<int64_t>& peak, int64_t value) {
  int64_t seen = peak.load();
  while (value > seen && !peak.compare_exchange_weak(seen, value)) {
  }
}

bool on_device(const Buffer& b) {
  return b.tier == Tier::kGpu;
}

core::Result<void> bug(const std::string& what) {
  return core::fail({{}, what + " (a bug in stowage)", ""});
}

// Runs `body`, turning a CudaError (or any exception) into a diagnostic
// that names the backend call and the CUDA call that failed.
template <class F>
auto guarded(std::string_view call, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const std::exception& e) {
    return std::unexpected(core::Diagnostics{{{}, "cuda backend: " + std::string(call) + ": " + e.what(), ""}});
  }
}

int64_t device_arena_bytes(int64_t cap) {
  size_t free = 0, total = 0;
  STOWAGE_CUDA(cudaMemGetInfo(&free, &total));
  const int64_t available = std::max<int64_t>(0, static_cast<int64_t>(free) - kDeviceReserve);
  return cap > 0 ? std::min(cap, available) : available;
}

}  // namespace

core::Result<std::unique_ptr<CudaBackend>> CudaBackend::create(CudaBackendOptions options) {
  const CudaPresence presence = cuda_presence();
  if (!presence.present())
    return core::fail({{}, "cuda backend: no CUDA device: " + presence.absent_because, "--backend cpu"});
  CpuBackendOptions host{.lock_host_memory = false, .optimizer_threads = options.optimizer_threads};
  host.capacity[static_cast<size_t>(Tier::kNvme)] = options.capacity[static_cast<size_t>(Tier::kNvme)];
  host.nvme = options.nvme;
  auto cpu = CpuBackend::create(std::move(host));
  if (!cpu) return std::unexpected(cpu.error());
  return guarded("setting up the device", [&]() -> core::Result<std::unique_ptr<CudaBackend>> {
    const int64_t cap = options.capacity[static_cast<size_t>(Tier::kGpu)];
    const int64_t arena = device_arena_bytes(cap);
    if (cap > 0 && arena < cap) {
      return core::fail({{},
                         "cuda backend: the plan caps device memory at " + core::format_bytes(core::Bytes(cap)) +
                             " but the device has " + core::format_bytes(core::Bytes(arena)) +
                             " free beyond what the context keeps",
                         "--device-memory"});
    }
    return std::unique_ptr<CudaBackend>(new CudaBackend(std::move(options), std::move(*cpu), arena));
  });
}

CudaBackend::CudaBackend(CudaBackendOptions options, std::unique_ptr<CpuBackend> host, int64_t arena_bytes)
    : options_(std::move(options)),
      host_(std::move(host)),
      device_(describe_device(0)),
      device_name_(cuda::device_name(0)),
      arena_(arena_bytes),
      events_(std::make_shared<EventPool>()),
      released_(streams_, events_) {
  for (DeviceMemory& b : bins_) b = DeviceMemory(static_cast<int64_t>(sizeof(SquareSumBins)));
  layer_kernels_ = std::make_unique<CudaLayerKernels>(streams_[core::Lane::kGpuCompute], options_.products);
}

CudaBackend::~CudaBackend() {
  try {
    streams_.synchronize_all();
    released_.collect(StreamOrderedRelease::Until::kAll);
  } catch (const CudaError&) {
    // A fault already reported by the call that met it: no stream will run
    // again, so what is parked goes back unwaited, and the owners free the rest.
    released_.collect(StreamOrderedRelease::Until::kUnwaited);
  }
  free_pinned(pinned_.trim(0));
  free_pinned(mirror_pool_.trim(0));
  for (const auto& [device, block] : mirrors_) cudaFreeHost(block.data);
}

void CudaBackend::give_back_kept() {
  // What a release parked behind enqueued work comes back first, so that it
  // is freed too. A failure there is the run's, reported by the op that met
  // it; the blocks already kept are no stream's and are freed regardless.
  (void)collect_released(true);
  free_pinned(pinned_.trim(0));
  free_pinned(mirror_pool_.trim(0));
  host_->give_back_kept();
}

void CudaBackend::free_pinned(const std::vector<BufferPool::Block>& blocks) {
  for (const BufferPool::Block& b : blocks) cudaFreeHost(b.data);  // a failure here has no one to tell
}

void CudaBackend::finish(core::Lane lane) {
  if (!options_.enqueue_only) STOWAGE_CUDA(cudaStreamSynchronize(streams_[lane]));
}

core::Result<void> CudaBackend::drain(core::Lane lane) {
  if (!options_.enqueue_only) return {};
  // A fault of any device work enqueued before surfaces at the first wait
  // after it, whatever that waits for: the message says so.
  const std::string call = "waiting for " + std::string(core::to_string(lane)) +
                           " (with --enqueue-only a device fault shows at the next wait; rerun without it to "
                           "have the failing call named)";
  return guarded(call, [&]() -> core::Result<void> {
    STOWAGE_CUDA(cudaStreamSynchronize(streams_[lane]));
    return {};
  });
}

bool CudaBackend::pageable(const std::byte* host) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, host) != cudaSuccess) {
    (void)cudaGetLastError();  // not an error of the stream's: take it off the thread
    return true;
  }
  return attributes.type == cudaMemoryTypeUnregistered;
}

void CudaBackend::give_back(std::function<void()> to_owner) {
  if (!options_.enqueue_only) return to_owner();
  try {
    released_.park(to_owner);
  } catch (const CudaError&) {
    // No event to park behind (none could be made or recorded): wait for
    // every stream instead, so that no work enqueued still uses the memory;
    // if even that fails, the device has failed and none of it will run.
    try {
      streams_.synchronize_all();
    } catch (const CudaError&) {
    }
    to_owner();
  }
}

core::Result<void> CudaBackend::collect_released(bool wait) {
  if (!options_.enqueue_only) return {};
  return guarded("reusing released memory", [&]() -> core::Result<void> {
    released_.collect(wait ? StreamOrderedRelease::Until::kAll : StreamOrderedRelease::Until::kCompleted);
    return {};
  });
}

core::Result<Buffer> CudaBackend::allocate(core::Tier tier, int64_t bytes, std::string what) {
  if (tier == Tier::kNvme)
    return core::fail({{}, "cannot allocate '" + what + "' on nvme", "nvme holds regions (reserve_region)"});
  Buffer b{.bytes = bytes, .tier = tier, .what = std::move(what)};
  const size_t t = static_cast<size_t>(tier);
  if (tier == Tier::kGpu) {
    if (bytes == 0) return b;
    if (auto r = collect_released(false); !r) return std::unexpected(r.error());
    auto range = arena_.allocate(bytes);
    if (!range && options_.enqueue_only) {
      // What is short may be parked behind work still running: wait for it.
      if (auto r = collect_released(true); !r) return std::unexpected(r.error());
      range = arena_.allocate(bytes);
    }
    if (!range) return core::fail(memory_exhausted(tier, b.what, range.error()));
    b.data = range->data;
    in_use_[t] += bytes;
    std::lock_guard lock(maps_mutex_);
    ranges_[b.data] = *range;
    return b;
  }
  // The host tier: page-locked, so that copies to and from it are DMA at the
  // link's rate; blocks given back are kept for the next of their size.
  const int64_t cap = options_.capacity[t];
  const int64_t before = in_use_[t].fetch_add(bytes);
  if (cap > 0 && before + bytes > cap) {
    in_use_[t].fetch_sub(bytes);
    return core::fail(memory_exhausted(tier, b.what, {.bytes = bytes, .in_use = before, .capacity = cap}));
  }
  if (bytes == 0) return b;
  raise_to(cpu_peak_, before + bytes);
  const int64_t rounded = round_up(bytes, kPage);
  if (auto r = collect_released(false); !r) {
    in_use_[t].fetch_sub(bytes);
    return std::unexpected(r.error());
  }
  b.data = pinned_.take(rounded);
  if (b.data == nullptr) {
    free_pinned(pinned_.trim(cpu_peak_.load() - in_use_[t].load()));
    void* p = nullptr;
    cudaError_t status = cudaHostAlloc(&p, static_cast<size_t>(rounded), cudaHostAllocDefault);
    if (status != cudaSuccess && pinned_.kept_bytes() > 0) {
      free_pinned(pinned_.trim(0));
      status = cudaHostAlloc(&p, static_cast<size_t>(rounded), cudaHostAllocDefault);
    }
    if (status != cudaSuccess) {
      in_use_[t].fetch_sub(bytes);
      return core::fail({{},
                         "cudaHostAlloc of " + core::format_bytes(core::Bytes(rounded)) + " for '" + b.what +
                             "' failed: " + describe_cuda_error(status),
                         ""});
    }
    b.data = static_cast<std::byte*>(p);
  }
  return b;
}

void CudaBackend::release(Buffer& buffer) {
  if (buffer.data != nullptr && on_device(buffer)) {
    std::optional<DeviceRange> range;
    {
      std::lock_guard lock(maps_mutex_);
      if (auto m = mirrors_.find(buffer.data); m != mirrors_.end()) {
        mirror_pool_.keep(m->second);
        mirrors_.erase(m);
      }
      if (auto it = ranges_.find(buffer.data); it != ranges_.end()) {
        range = it->second;
        ranges_.erase(it);
      }
    }
    if (range) give_back([this, r = *range] { arena_.release(r); });
  } else if (buffer.data != nullptr) {
    give_back([this, block = BufferPool::Block{.data = buffer.data, .bytes = round_up(buffer.bytes, kPage)}] {
      pinned_.keep(block);
    });
  }
  if ((buffer.data != nullptr || buffer.bytes > 0) && buffer.tier != Tier::kNvme)
    in_use_[static_cast<size_t>(buffer.tier)].fetch_sub(buffer.bytes);
  buffer.data = nullptr;
  buffer.bytes = 0;
}

int64_t CudaBackend::in_use(core::Tier tier) const {
  return tier == Tier::kNvme ? host_->in_use(tier) : in_use_[static_cast<size_t>(tier)].load();
}

int64_t CudaBackend::capacity(core::Tier tier) const {
  return tier == Tier::kGpu ? arena_.capacity() : options_.capacity[static_cast<size_t>(tier)];
}

core::Result<void> CudaBackend::copy(core::Lane lane, const Buffer& dst, int64_t dst_offset, const Buffer& src,
                                     int64_t src_offset, int64_t bytes) {
  if (dst_offset < 0 || src_offset < 0 || bytes < 0 || dst_offset + bytes > dst.bytes ||
      src_offset + bytes > src.bytes) {
    return bug("copy of " + std::to_string(bytes) + " bytes from '" + src.what + "' to '" + dst.what +
               "' is out of bounds");
  }
  if (bytes == 0) return {};
  if (!on_device(dst) && !on_device(src)) {
    if (auto r = drain(lane); !r) return r;
    std::memcpy(dst.data + dst_offset, src.data + src_offset, static_cast<size_t>(bytes));
  } else {
    auto moved = guarded("copy to '" + dst.what + "'", [&]() -> core::Result<void> {
      const cudaStream_t stream = streams_[lane];
      // Unified addressing tells the direction from the pointers.
      STOWAGE_CUDA(cudaMemcpyAsync(dst.data + dst_offset, src.data + src_offset, static_cast<size_t>(bytes),
                                   cudaMemcpyDefault, stream));
      const std::byte* host = !on_device(dst) ? dst.data : !on_device(src) ? src.data : nullptr;
      if (host != nullptr && pageable(host)) {
        STOWAGE_CUDA(cudaStreamSynchronize(stream));
      } else {
        finish(lane);
      }
      return {};
    });
    if (!moved) return moved;
  }
  moved_[static_cast<size_t>(lane)] += bytes;
  return {};
}

std::span<float> CudaBackend::mirror(const Buffer& device_buffer) {
  const size_t n = static_cast<size_t>(device_buffer.bytes) / sizeof(float);
  {
    std::lock_guard lock(maps_mutex_);
    if (auto it = mirrors_.find(device_buffer.data); it != mirrors_.end())
      return {reinterpret_cast<float*>(it->second.data), n};
  }
  // A buffer is computed on by one lane at a time, so no other thread makes
  // this mirror meanwhile.
  BufferPool::Block block{.data = nullptr, .bytes = round_up(device_buffer.bytes, kPage)};
  block.data = mirror_pool_.take(block.bytes);
  if (block.data == nullptr) {
    void* p = nullptr;
    STOWAGE_CUDA(cudaHostAlloc(&p, static_cast<size_t>(block.bytes), cudaHostAllocDefault));
    block.data = static_cast<std::byte*>(p);
  }
  std::lock_guard lock(maps_mutex_);
  mirrors_[device_buffer.data] = block;
  return {reinterpret_cast<float*>(block.data), n};
}

core::Result<void> CudaBackend::compute_on_device(std::string_view what, const LayerBuffers& buffers,
                                                  const std::function<void(const LayerWorkspace&)>& kernel) {
  return guarded("compute '" + std::string(what) + "'", [&]() -> core::Result<void> {
    const model::InstalledKernels installed(*layer_kernels_);
    try {
      kernel(device_views(buffers));
    } catch (const CudaError&) {
      throw;
    } catch (const std::exception& e) {
      return core::fail({{}, "compute '" + std::string(what) + "' failed: " + e.what(), ""});
    }
    finish(core::Lane::kGpuCompute);
    return {};
  });
}

core::Result<void> CudaBackend::compute(core::Lane lane, std::string_view what, const LayerBuffers& buffers,
                                        const std::function<void(const LayerWorkspace&)>& kernel) {
  if (options_.layers == LayersOn::kDevice) {
    if (lane != core::Lane::kGpuCompute) return bug("compute '" + std::string(what) + "' off the compute lane");
    return compute_on_device(what, buffers, kernel);
  }
  LayerWorkspace w;
  const cudaStream_t stream = streams_[lane];
  auto staged = [&](const Buffer* b, std::span<float>& view, bool down) {
    if (b == nullptr || b->bytes == 0) return;
    if (!on_device(*b)) {
      view = b->as<float>();
      return;
    }
    view = mirror(*b);
    if (down) STOWAGE_CUDA(cudaMemcpyAsync(view.data(), b->data, static_cast<size_t>(b->bytes),
                                           cudaMemcpyDeviceToHost, stream));
  };
  auto up = [&](const Buffer* b, std::span<float> view) {
    if (b == nullptr || b->bytes == 0 || !on_device(*b)) return;
    STOWAGE_CUDA(cudaMemcpyAsync(b->data, view.data(), static_cast<size_t>(b->bytes), cudaMemcpyHostToDevice,
                                 stream));
  };
  return guarded("compute '" + std::string(what) + "'", [&]() -> core::Result<void> {
    // The parameters and the (zeroed) gradients come down; what the layer
    // keeps and its temporaries are written before they are read.
    staged(buffers.params32, w.params32, true);
    staged(buffers.grads32, w.grads32, true);
    staged(buffers.kept, w.kept, false);
    staged(buffers.scratch, w.scratch, false);
    STOWAGE_CUDA(cudaStreamSynchronize(stream));
    try {
      // On the mirrors, with the CPU's layer kernels (none installed:
      // model/layer_kernels.h's default).
      kernel(w);
    } catch (const CudaError&) {
      throw;
    } catch (const std::exception& e) {
      return core::fail({{}, "compute '" + std::string(what) + "' failed: " + e.what(), ""});
    }
    up(buffers.grads32, w.grads32);
    up(buffers.kept, w.kept);
    STOWAGE_CUDA(cudaStreamSynchronize(stream));
    return {};
  });
}

core::Result<void> CudaBackend::optimizer_step(core::Lane lane, const OptimizerWork& work) {
  const core::Result<Side> side = one_side("optimizer step", {work.states, work.grad16, work.param16_out});
  if (!side) return std::unexpected(side.error());
  if (*side == Side::kHost) {
    if (auto r = drain(lane); !r) return r;
    return host_->optimizer_step(lane, work);
  }
  const int64_t n = work.grad16->bytes / 2;
  if (work.states->bytes != n * core::state_bytes_per_param(work.state_precision) ||
      work.param16_out->bytes != work.grad16->bytes) {
    return bug("optimizer step of '" + work.states->what + "' (" + std::to_string(work.states->bytes) +
               " B) and '" + work.grad16->what + "' (" + std::to_string(work.grad16->bytes) +
               " B): the sizes do not match");
  }
  return guarded("optimizer step of '" + work.states->what + "'", [&]() -> core::Result<void> {
    const cudaStream_t stream = streams_[lane];
    const AdamStepConstants c = adam_step_constants(work.hyper.config, work.step, work.grad_scale);
    auto* master = reinterpret_cast<float*>(work.states->data);
    std::byte* moments = work.states->data + 4 * n;
    const auto* grad = reinterpret_cast<const uint16_t*>(work.grad16->data);
    auto* param16 = reinterpret_cast<uint16_t*>(work.param16_out->data);
    if (work.state_precision == core::StatePrecision::kBf16) {
      auto* m = reinterpret_cast<uint16_t*>(moments);
      launch_adam(AdamPartitionOf<uint16_t>{master, m, m + n, grad, param16, n}, c, work.hyper.optimizer,
                  work.precision, stream);
    } else {
      auto* m = reinterpret_cast<float*>(moments);
      launch_adam(AdamPartitionOf<float>{master, m, m + n, grad, param16, n}, c, work.hyper.optimizer,
                  work.precision, stream);
    }
    finish(lane);
    return {};
  });
}

core::Result<void> CudaBackend::widen(core::Lane lane, const Buffer& src16, const Buffer& dst32,
                                      int64_t dst_offset, core::Precision precision) {
  const core::Result<Side> side = one_side("widening", {&src16, &dst32});
  if (!side) return std::unexpected(side.error());
  if (*side == Side::kHost) {
    if (auto r = drain(lane); !r) return r;
    return host_->widen(lane, src16, dst32, dst_offset, precision);
  }
  const int64_t n = src16.bytes / 2;
  if (dst_offset < 0 || 4 * (dst_offset + n) > dst32.bytes)
    return bug("widening '" + src16.what + "' into '" + dst32.what + "': the sizes do not match");
  return guarded("widening '" + src16.what + "'", [&]() -> core::Result<void> {
    launch_widen(reinterpret_cast<const uint16_t*>(src16.data), reinterpret_cast<float*>(dst32.data) + dst_offset,
                 n, precision, streams_[lane]);
    finish(lane);
    return {};
  });
}

core::Result<void> CudaBackend::narrow(core::Lane lane, const Buffer& src32, int64_t src_offset,
                                       const Buffer& dst16, core::Precision precision) {
  const core::Result<Side> side = one_side("narrowing", {&src32, &dst16});
  if (!side) return std::unexpected(side.error());
  if (*side == Side::kHost) {
    if (auto r = drain(lane); !r) return r;
    return host_->narrow(lane, src32, src_offset, dst16, precision);
  }
  const int64_t n = dst16.bytes / 2;
  if (src_offset < 0 || 4 * (src_offset + n) > src32.bytes)
    return bug("narrowing '" + src32.what + "' into '" + dst16.what + "': the sizes do not match");
  return guarded("narrowing into '" + dst16.what + "'", [&]() -> core::Result<void> {
    launch_narrow(reinterpret_cast<const float*>(src32.data) + src_offset,
                  reinterpret_cast<uint16_t*>(dst16.data), n, precision, streams_[lane]);
    finish(lane);
    return {};
  });
}

core::Result<void> CudaBackend::accumulate(core::Lane lane, const Buffer& acc16, const Buffer& add16,
                                           core::Precision precision) {
  const core::Result<Side> side = one_side("accumulation", {&acc16, &add16});
  if (!side) return std::unexpected(side.error());
  if (*side == Side::kHost) {
    if (auto r = drain(lane); !r) return r;
    return host_->accumulate(lane, acc16, add16, precision);
  }
  if (acc16.bytes != add16.bytes)
    return bug("accumulation of '" + add16.what + "' into '" + acc16.what + "': the sizes do not match");
  return guarded("accumulating into '" + acc16.what + "'", [&]() -> core::Result<void> {
    launch_accumulate(reinterpret_cast<uint16_t*>(acc16.data), reinterpret_cast<const uint16_t*>(add16.data),
                      acc16.bytes / 2, precision, streams_[lane]);
    finish(lane);
    return {};
  });
}

core::Result<void> CudaBackend::zero(core::Lane lane, const Buffer& buffer) {
  if (!on_device(buffer)) {
    if (auto r = drain(lane); !r) return r;
    return host_->zero(lane, buffer);
  }
  return guarded("zeroing '" + buffer.what + "'", [&]() -> core::Result<void> {
    zero_async(buffer.data, buffer.bytes, streams_[lane]);
    finish(lane);
    return {};
  });
}

core::Result<GradientStats> CudaBackend::gradient_stats(core::Lane lane, const Buffer& grad16,
                                                        core::Precision precision) {
  if (!on_device(grad16)) {
    if (auto r = drain(lane); !r) return std::unexpected(r.error());
    return host_->gradient_stats(lane, grad16, precision);
  }
  return guarded("gradient statistics of '" + grad16.what + "'", [&]() -> core::Result<GradientStats> {
    const cudaStream_t stream = streams_[lane];
    auto* bins = reinterpret_cast<SquareSumBins*>(bins_[static_cast<size_t>(lane)].data());
    zero_async(bins, sizeof(SquareSumBins), stream);
    launch_square_sum_bins(reinterpret_cast<const uint16_t*>(grad16.data), grad16.bytes / 2, precision, bins,
                           stream);
    SquareSumBins host;
    STOWAGE_CUDA(cudaMemcpyAsync(&host, bins, sizeof host, cudaMemcpyDeviceToHost, stream));
    STOWAGE_CUDA(cudaStreamSynchronize(stream));
    GradientStats stats;
    stats.finite = stats.squares.add_bins(host, precision);
    return stats;
  });
}

// A CUDA event on the lane's stream, waited on by the other lane's stream
// (the host does not block). Every call above still synchronises its
// stream before it returns, so today the event has completed when it is
// recorded; the events are what lets a call stop doing that (docs/backend.md).
core::Result<Event> CudaBackend::record(core::Lane lane) {
  return guarded("recording an event on " + std::string(core::to_string(lane)), [&]() -> core::Result<Event> {
    std::shared_ptr<const CudaEvent> event = events_->take();
    event->record(streams_[lane]);
    return Event{.lane = lane, .sequence = ++events_recorded_, .handle = std::move(event)};
  });
}

core::Result<void> CudaBackend::wait(core::Lane lane, const Event& event) {
  if (event.handle == nullptr) return bug("an event recorded by another backend");
  return guarded("waiting on " + std::string(core::to_string(lane)), [&]() -> core::Result<void> {
    static_cast<const CudaEvent*>(event.handle.get())->wait_on(streams_[lane]);
    return {};
  });
}

core::Result<std::optional<TimeMark>> CudaBackend::mark(core::Lane lane) {
  if (!options_.enqueue_only) return std::nullopt;  // each call waits for its work: the host's times stand
  return guarded("marking a time on " + std::string(core::to_string(lane)),
                 [&]() -> core::Result<std::optional<TimeMark>> {
                   return TimeMark{.lane = lane, .handle = clock_.mark(streams_[lane])};
                 });
}

core::Result<int64_t> CudaBackend::marked_at(const TimeMark& mark) {
  if (mark.handle == nullptr) return std::unexpected(bug("a time mark made by another backend").error());
  return guarded("reading a time mark",
                 [&]() -> core::Result<int64_t> { return clock_.host_ns(mark.handle); });
}

int64_t CudaBackend::bytes_moved(core::Lane lane) const {
  return moved_[static_cast<size_t>(lane)].load() + host_->bytes_moved(lane);
}

core::Result<void> CudaBackend::reserve_region(const std::string& region, int64_t bytes) {
  return host_->reserve_region(region, bytes);
}
core::Result<core::QueueDepth> CudaBackend::block_write(core::Lane lane, const BlockIo& io) {
  if (auto r = drain(lane); !r) return std::unexpected(r.error());
  return host_->block_write(lane, io);
}
core::Result<core::QueueDepth> CudaBackend::block_read(core::Lane lane, const BlockIo& io) {
  if (auto r = drain(lane); !r) return std::unexpected(r.error());
  return host_->block_read(lane, io);
}

}  // namespace stowage::executor::cuda
