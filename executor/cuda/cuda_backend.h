// The CUDA backend (issue 15): runs a schedule on one GPU. Device memory
// is one cudaMalloc arena capped at the plan's GPU capacity (DeviceArena),
// the host tier is page-locked (cudaHostAlloc, pooled as the CPU backend
// pools its blocks), each lane has its own stream, copies are
// cudaMemcpyAsync on it, and the element-wise work (widen, narrow,
// accumulate, zero, the gradient verdict) and the optimizer step of a
// partition whose states stay on the device are the kernels of this folder,
// which give the CPU backend's bits. What touches only host memory (the
// CPU optimizer, NVMe, host-to-host copies) is the CPU backend's work, and
// this backend hands it to one it owns.
//
// The model's layers run on the GPU too: a compute op installs this
// backend's layer kernels (cuda_layer_kernels.h: cuBLASLt fp32, bf16 or fp16 products
// and CUDA kernels, the CPU model's calls in its order) over the device
// buffers themselves. LayersOn::kHostMirrors runs them instead with the
// CPU's kernels (OpenBLAS) over page-locked host mirrors of the device
// buffers, copied down before and up after, on the op's lane: the CPU
// backend's losses bit for bit, a check of everything but the layer
// kernels (docs/gpu.md).
//
// Lanes order each other by events: the interpreter records one on the
// producer's stream for every edge of the schedule that crosses lanes and
// has the consumer's stream wait on it. By default each call still
// finishes its work before it returns (a stream synchronise), so the
// host-side op times the executor records are the device's to within a
// launch; with enqueue_only the host only enqueues (below), and ops are
// timed by events on their streams (mark, marked_at).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "executor/backend.h"
#include "executor/buffer_pool.h"
#include "executor/cpu_backend.h"
#include "executor/cuda/cuda_event.h"
#include "executor/cuda/cuda_layer_kernels.h"
#include "executor/cuda/cuda_stream.h"
#include "executor/cuda/device_arena.h"
#include "executor/cuda/device_clock.h"
#include "executor/cuda/device_memory.h"
#include "executor/cuda/stream_ordered_release.h"

namespace stowage::executor::cuda {

// Where a compute op's layer kernels run (see above).
enum class LayersOn : uint8_t { kDevice, kHostMirrors };

struct CudaBackendOptions {
  // Bytes per tier (gpu, cpu, nvme). The GPU arena is one cudaMalloc of the
  // gpu cap; 0 takes what the device has free, less kDeviceReserve.
  std::array<int64_t, 3> capacity{};
  int optimizer_threads = 1;              // threads of each CPU optimizer step
  std::optional<BlockStoreOptions> nvme;  // absent: no NVMe tier
  LayersOn layers = LayersOn::kDevice;
  // The layers' matrix products on the device: fp32 (the CPU backend's
  // math) or bf16 or fp16 operands with fp32 sums (row_major_gemm.h).
  ProductPrecision products = ProductPrecision::kFp32;
  // The host only enqueues: a call on device memory returns once its work
  // is on its lane's stream, work the host does itself (CPU Adam, NVMe,
  // host-tier element-wise calls) first waits for its lane's stream (and so
  // for the events it waits on), and released memory is reused only after
  // the work enqueued before the release (stream_ordered_release.h). The
  // host-side op times the executor records are then when ops were issued,
  // not when they ran: off by default. Not yet run on a GPU
  // (CudaBackend.EnqueuingOnlyTrainsAsSynchronisingDoes).
  bool enqueue_only = false;
};

// What the device keeps back from an uncapped arena: the context's own
// allocations (cuBLAS workspaces, kernel images, the driver's buffers).
inline constexpr int64_t kDeviceReserve = int64_t{1} << 30;

class CudaBackend final : public Backend {
 public:
  // Fails with a diagnostic when no device can be used (the reason CUDA
  // gives) or the arena cannot be had.
  static core::Result<std::unique_ptr<CudaBackend>> create(CudaBackendOptions options);
  ~CudaBackend() override;

  [[nodiscard]] std::string_view name() const override { return "cuda"; }
  [[nodiscard]] std::string device_name() const override { return device_name_; }
  [[nodiscard]] core::Result<Buffer> allocate(core::Tier tier, int64_t bytes, std::string what) override;
  void release(Buffer& buffer) override;
  [[nodiscard]] int64_t in_use(core::Tier tier) const override;
  [[nodiscard]] int64_t capacity(core::Tier tier) const override;
  [[nodiscard]] bool in_host_memory(core::Tier tier) const override { return tier == core::Tier::kCpu; }
  [[nodiscard]] core::Result<void> copy(core::Lane lane, const Buffer& dst, int64_t dst_offset,
                                        const Buffer& src, int64_t src_offset, int64_t bytes) override;
  [[nodiscard]] core::Result<void> compute(core::Lane lane, std::string_view what,
                                           const LayerBuffers& buffers,
                                           const std::function<void(const LayerWorkspace&)>& kernel) override;
  [[nodiscard]] core::Result<void> optimizer_step(core::Lane lane, const OptimizerWork& work) override;
  [[nodiscard]] core::Result<void> widen(core::Lane lane, const Buffer& src16, const Buffer& dst32,
                                         int64_t dst_offset, core::Precision precision) override;
  [[nodiscard]] core::Result<void> narrow(core::Lane lane, const Buffer& src32, int64_t src_offset,
                                          const Buffer& dst16, core::Precision precision) override;
  [[nodiscard]] core::Result<void> accumulate(core::Lane lane, const Buffer& acc16, const Buffer& add16,
                                              core::Precision precision) override;
  [[nodiscard]] core::Result<void> zero(core::Lane lane, const Buffer& buffer) override;
  [[nodiscard]] core::Result<GradientStats> gradient_stats(core::Lane lane, const Buffer& grad16,
                                                           core::Precision precision) override;
  [[nodiscard]] core::Result<Event> record(core::Lane lane) override;
  [[nodiscard]] core::Result<void> wait(core::Lane lane, const Event& event) override;
  // With enqueue_only, a timed event on the lane's stream, read on the
  // host's clock (device_clock.h: about 0.5 us, however long the run).
  [[nodiscard]] core::Result<std::optional<TimeMark>> mark(core::Lane lane) override;
  [[nodiscard]] core::Result<int64_t> marked_at(const TimeMark& mark) override;
  [[nodiscard]] int64_t bytes_moved(core::Lane lane) const override;
  [[nodiscard]] core::Result<void> reserve_region(const std::string& region, int64_t bytes) override;
  [[nodiscard]] core::Result<core::QueueDepth> block_write(core::Lane lane, const BlockIo& io) override;
  [[nodiscard]] core::Result<core::QueueDepth> block_read(core::Lane lane, const BlockIo& io) override;
  // Frees the page-locked host blocks kept for reuse (the host tier's and
  // the host mirrors'), once the streams are done with what was released,
  // and the host backend's: the held-out evaluation after the steps then
  // finds the host memory the steps used free.
  void give_back_kept() override;

  // Page-locked host bytes kept for reuse (the host tier's and the mirrors').
  [[nodiscard]] int64_t kept_host_bytes() const { return pinned_.kept_bytes() + mirror_pool_.kept_bytes(); }

  // "NVIDIA H200, sm_90, 139.8 GiB, driver 13.0, runtime 13.0"
  [[nodiscard]] const std::string& device() const { return device_; }

 private:
  CudaBackend(CudaBackendOptions options, std::unique_ptr<CpuBackend> host, int64_t arena_bytes);
  // A host mirror of a device buffer, for the model's host kernels; made at
  // its first compute op, freed with the buffer.
  std::span<float> mirror(const Buffer& device_buffer);
  core::Result<void> compute_on_device(std::string_view what, const LayerBuffers& buffers,
                                       const std::function<void(const LayerWorkspace&)>& kernel);
  void free_pinned(const std::vector<BufferPool::Block>& blocks);
  // After device work was enqueued on `lane`: unless enqueue_only, the host
  // waits for it. Throws CudaError.
  void finish(core::Lane lane);
  // Before work the host does itself for `lane`: with enqueue_only, what
  // the lane's stream holds (the events it waits on included) has finished.
  [[nodiscard]] core::Result<void> drain(core::Lane lane);
  // A copy's host side that is not page-locked: the copy finishes before
  // the call returns, as the caller may reuse or read it at once.
  [[nodiscard]] static bool pageable(const std::byte* host);
  // Memory a release gives back to its owner (the arena, the pinned pool):
  // at once, or with enqueue_only behind the work enqueued before it.
  void give_back(std::function<void()> to_owner);
  // enqueue_only: takes back what released memory no stream still uses
  // (`wait`: all of it, the host waiting for the streams).
  [[nodiscard]] core::Result<void> collect_released(bool wait);

  CudaBackendOptions options_;
  std::unique_ptr<CpuBackend> host_;  // the host-only work: CPU Adam, NVMe, host copies
  std::string device_;
  std::string device_name_;  // the driver's name, "NVIDIA H200"
  LaneStreams streams_;
  DeviceArena arena_;
  std::unique_ptr<CudaLayerKernels> layer_kernels_;  // on the compute lane's stream
  std::array<DeviceMemory, core::kLaneCount> bins_;  // each lane's gradient-verdict accumulator
  std::array<std::atomic<int64_t>, 2> in_use_{};      // gpu, cpu
  std::atomic<int64_t> cpu_peak_{0};
  BufferPool pinned_;  // host-tier blocks given back, cudaHostAlloc'ed
  // The host mirrors, page-locked like the host tier: pageable, their
  // copies went through the driver's staging buffer and slowed the other
  // lanes' copies beside them to 1 GB/s (docs/gpu.md, H200 runs 6-8). Kept
  // for reuse (the same sizes recur every layer) until the steps are over
  // (give_back_kept): they are at most the device buffers computed on.
  BufferPool mirror_pool_;
  std::mutex maps_mutex_;
  std::unordered_map<const std::byte*, BufferPool::Block> mirrors_;
  std::unordered_map<const std::byte*, DeviceRange> ranges_;  // a device buffer's arena range
  std::array<std::atomic<int64_t>, core::kLaneCount> moved_{};
  std::shared_ptr<EventPool> events_;  // the cross-lane edges' events
  std::atomic<uint64_t> events_recorded_{0};
  StreamOrderedRelease released_;  // enqueue_only: memory given back behind the work before it
  DeviceClock clock_;              // enqueue_only: op marks on the host's clock
};

}  // namespace stowage::executor::cuda
