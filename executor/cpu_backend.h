// The CPU backend: runs a schedule on this machine alone. "GPU memory" is
// host memory under a cap (the plan's GPU capacity, or less with
// --device-memory), so an infeasible plan fails here exactly as it would on
// the GPU; buffers are page-aligned, large ones each at its own page colour
// (host_pages.h), and host tiers page-locked where the system
// allows (mlock); copies are memcpy on the calling lane's thread; compute
// runs the model's kernels (OpenBLAS); the optimizer is executor/cpu_adam;
// NVMe is an io_uring + O_DIRECT block store (executor/nvme/).
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "core/trace_origin.h"
#include "executor/backend.h"
#include "executor/buffer_pool.h"
#include "executor/model/cpu_layer_kernels.h"
#include "executor/nvme/block_store.h"

namespace stowage::executor {

struct CpuBackendOptions {
  std::array<int64_t, 3> capacity{};      // bytes per tier (gpu, cpu, nvme); 0 = no cap
  bool lock_host_memory = true;           // mlock host-tier buffers (pinned memory)
  int optimizer_threads = 1;              // threads of each optimizer step
  std::optional<BlockStoreOptions> nvme;  // absent: no NVMe tier
  // Hand out device buffers whose `data` is not a usable host address (as a
  // GPU's would not be), so that any dereference outside the backend faults
  // at once: what the tests run under to show the executor never touches
  // device memory (backend.h).
  bool opaque_device_memory = false;
};

class CpuBackend final : public Backend {
 public:
  static core::Result<std::unique_ptr<CpuBackend>> create(CpuBackendOptions options);
  ~CpuBackend() override;
  void give_back_kept() override;

  [[nodiscard]] std::string_view name() const override { return "cpu"; }
  [[nodiscard]] std::string device_name() const override { return std::string(core::kCpuBackendDeviceName); }
  [[nodiscard]] core::Result<Buffer> allocate(core::Tier tier, int64_t bytes, std::string what) override;
  void release(Buffer& buffer) override;
  [[nodiscard]] int64_t in_use(core::Tier tier) const override;
  [[nodiscard]] int64_t capacity(core::Tier tier) const override;
  // The device tier is host memory too: the CPU backend stands in for a GPU.
  [[nodiscard]] bool in_host_memory(core::Tier tier) const override { return tier != core::Tier::kNvme; }
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
  [[nodiscard]] int64_t bytes_moved(core::Lane lane) const override;
  [[nodiscard]] core::Result<void> reserve_region(const std::string& region, int64_t bytes) override;
  [[nodiscard]] core::Result<core::QueueDepth> block_write(core::Lane lane, const BlockIo& io) override;
  [[nodiscard]] core::Result<core::QueueDepth> block_read(core::Lane lane, const BlockIo& io) override;

  // Whether host buffers could be locked (false when RLIMIT_MEMLOCK refused).
  [[nodiscard]] bool host_memory_locked() const { return locked_.load(); }
  [[nodiscard]] const BlockStore* block_store() const { return store_ ? &*store_ : nullptr; }
  // Memory of `tier` released and kept for reuse (BufferPool), not in use:
  // at most the tier's peak in use (when a new block is made; releases may
  // add to it until the next), so that the tier never maps more than twice
  // its peak.
  [[nodiscard]] int64_t kept_bytes(core::Tier tier) const;
  // Blocks of `tier` mapped afresh (no kept block of the size), since creation.
  [[nodiscard]] int64_t fresh_blocks(core::Tier tier) const {
    return fresh_blocks_[static_cast<size_t>(tier)].load();
  }

 private:
  explicit CpuBackend(CpuBackendOptions options);
  // Where `b` really is in this process (undoes opaque_device_memory).
  [[nodiscard]] std::byte* host(const Buffer& b) const;
  template <class T>
  [[nodiscard]] std::span<T> view(const Buffer& b) const {
    return {reinterpret_cast<T*>(host(b)), static_cast<size_t>(b.bytes) / sizeof(T)};
  }
  core::Result<core::QueueDepth> block_io(core::Lane lane, const BlockIo& io, bool write);
  // Gives blocks back to the system: unlocked (host tier) and freed.
  void free_blocks(core::Tier tier, const std::vector<BufferPool::Block>& blocks);
  void free_kept();  // every kept block of the host tiers

  CpuBackendOptions options_;
  // What a compute op's layer runs on: OpenBLAS and the model's loops, over
  // the device buffers (mapped back to host addresses where they are opaque).
  model::CpuLayerKernels kernels_;
  std::optional<BlockStore> store_;
  std::mutex regions_mutex_;
  std::map<std::string, Extent> regions_;
  std::array<std::atomic<int64_t>, 3> in_use_{};
  // The most each tier had in use at once: its pool keeps at most that.
  std::array<std::atomic<int64_t>, 3> peak_{};
  std::array<std::atomic<int64_t>, 3> fresh_blocks_{};
  std::array<BufferPool, 2> pools_;  // gpu and cpu; nvme has no blocks
  std::array<std::atomic<int64_t>, core::kLaneCount> moved_{};
  std::atomic<bool> locked_{true};
  std::atomic<uint64_t> events_recorded_{0};
};

}  // namespace stowage::executor
