// The backend seam: what the executor needs from a machine to run a
// schedule's ops - memory on a tier, copies between tiers, a compute op, an
// optimizer step, events to order lanes, and block I/O. The CPU backend
// (executor/cpu_backend.h) runs anywhere; a CUDA backend plugs in here too.
// FaultyBackend (executor/faulty_backend.h) fails a chosen call, for tests.
//
// Calls are made from the executor's lane threads, one thread per lane (as
// CUDA streams are one queue each). A backend must accept concurrent calls
// from different lanes; calls from one lane arrive in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/diagnostic.h"
#include "core/schedule.h"
#include "core/tensor_class.h"
#include "core/timeline.h"
#include "executor/cpu_adam.h"
#include "executor/square_sum.h"

namespace stowage::executor {

// Memory on one tier. Device memory (Tier::kGpu) may not be addressable
// from the host on a real GPU; only the backend dereferences `data`, and
// the executor never does (the CPU backend's opaque_device_memory option
// makes a device pointer unusable outside the backend, which the tests run
// under). Host tiers are the executor's to read and write.
struct Buffer {
  std::byte* data = nullptr;
  int64_t bytes = 0;
  core::Tier tier = core::Tier::kCpu;
  std::string what;  // "param16 layers.3": who holds it, for messages and traces

  [[nodiscard]] explicit operator bool() const { return data != nullptr || bytes == 0; }
  template <class T>
  [[nodiscard]] std::span<T> as() const {
    return {reinterpret_cast<T*>(data), static_cast<size_t>(bytes) / sizeof(T)};
  }
};

// The kinds of backend call, for fault injection and statistics.
enum class CallKind : uint8_t { kAllocate, kCopy, kCompute, kOptimizer, kBlockRead, kBlockWrite };
inline constexpr int kCallKindCount = 6;
[[nodiscard]] std::string_view to_string(CallKind kind);

// One optimizer step on a partition, in the backend's memory. The gradient
// is 16-bit (the partition's grad16) and is widened by the backend.
struct OptimizerWork {
  // master32 [n] fp32 | adam_m [n] | adam_v [n], the moments fp32 or bf16 as
  // state_precision says: core::state_bytes_per_param (12 or 8 B) each.
  const Buffer* states = nullptr;
  core::StatePrecision state_precision = core::StatePrecision::kFp32;
  const Buffer* grad16 = nullptr;       // 2 B per parameter
  const Buffer* param16_out = nullptr;  // 2 B per parameter, written
  core::Precision precision = core::Precision::kBf16;
  AdamHyper hyper;
  int64_t step = 1;         // 1-based, for the bias corrections
  float grad_scale = 1.0f;  // the loss scale the gradients still carry
};

// Block I/O: the bytes of a named region on a tier-3 store.
struct BlockIo {
  std::string region;  // "states layers.3"
  std::span<std::byte> data;
};

// The device buffers of one layer's compute op, and the views of them its
// kernel gets from the backend: the fp32 parameter workspace; for a
// backward the fp32 gradient workspace; for a forward or recompute the
// region for what the layer keeps (its saved activations, as the schedule
// declares them); for both, the region the model's kernels take their
// temporaries from (model/kernel_scratch.h). Absent buffers give empty views.
struct LayerBuffers {
  const Buffer* params32 = nullptr;
  const Buffer* grads32 = nullptr;
  const Buffer* kept = nullptr;
  const Buffer* scratch = nullptr;
};
struct LayerWorkspace {
  std::span<float> params32;
  std::span<float> grads32;
  std::span<float> kept;
  std::span<float> scratch;
};
// The buffers' own addresses as views: what a backend whose layer kernels
// reach its device memory hands the kernel.
[[nodiscard]] inline LayerWorkspace device_views(const LayerBuffers& b) {
  auto of = [](const Buffer* x) { return x != nullptr ? x->as<float>() : std::span<float>(); };
  return {.params32 = of(b.params32), .grads32 = of(b.grads32), .kept = of(b.kept), .scratch = of(b.scratch)};
}

// A step's verdict from one tier's gradients: are all finite, and the sum
// of their squares (for the global norm; square_sum.h).
struct GradientStats {
  bool finite = true;
  SquareSum squares;
};

// Completes when everything a lane had issued before `record` has finished.
// `handle` is the backend's own (a CUDA event); copies share it, and it
// lives as long as one of them does.
struct Event {
  core::Lane lane = core::Lane::kGpuCompute;
  uint64_t sequence = 0;  // the backend's numbering of its records
  std::shared_ptr<const void> handle;
};

// A point in one lane's work, timed by the backend's device clock: when
// everything the lane issued before it has run. `handle` is the backend's.
struct TimeMark {
  core::Lane lane = core::Lane::kGpuCompute;
  std::shared_ptr<const void> handle;
};

class Backend {
 public:
  virtual ~Backend() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;
  // The device it runs on as its driver names it ("NVIDIA H200"), or
  // core::kCpuBackendDeviceName: what a measured trace says it ran on, to
  // find among its prediction's GPU's device_names (core/trace_origin.h).
  [[nodiscard]] virtual std::string device_name() const = 0;

  // Memory. allocate fails with a diagnostic naming `what`, the bytes asked,
  // the tier's use and its cap when the tier cannot hold it.
  [[nodiscard]] virtual core::Result<Buffer> allocate(core::Tier tier, int64_t bytes, std::string what) = 0;
  virtual void release(Buffer& buffer) = 0;  // idempotent; leaves buffer empty
  [[nodiscard]] virtual int64_t in_use(core::Tier tier) const = 0;
  [[nodiscard]] virtual int64_t capacity(core::Tier tier) const = 0;
  // Whether the tier's buffers are this host's memory (all but nvme on the
  // CPU backend; only cpu, pinned, on the CUDA backend): what a run must
  // find free in host RAM before it starts (host_memory.h).
  [[nodiscard]] virtual bool in_host_memory(core::Tier tier) const = 0;

  // A copy of `bytes` between buffers on any tiers, on `lane`.
  [[nodiscard]] virtual core::Result<void> copy(core::Lane lane, const Buffer& dst, int64_t dst_offset,
                                                const Buffer& src, int64_t src_offset, int64_t bytes) = 0;
  // A compute op (a layer's forward, recompute or backward) on `lane`, over
  // its device buffers. The kernel (the model's sequence of primitives) runs
  // on the calling thread with this backend's layer kernels installed
  // (model/layer_kernels.h), which alone touch the workspace's memory; an
  // exception it throws is a diagnostic naming `what`.
  [[nodiscard]] virtual core::Result<void> compute(
      core::Lane lane, std::string_view what, const LayerBuffers& buffers,
      const std::function<void(const LayerWorkspace&)>& kernel) = 0;
  [[nodiscard]] virtual core::Result<void> optimizer_step(core::Lane lane, const OptimizerWork& work) = 0;

  // Element-wise work on `lane`, with the rounding of model/half_convert.h,
  // so that where a tensor rests never changes the math. 16-bit buffers
  // hold `precision` values; sizes are checked. The buffers of one call
  // (the optimizer step's too) are all on the device or all on the host
  // (buffer_sides.h): a mix is refused as a bug.
  // dst32[dst_offset + i] = src16[i], widened exactly, for every i of src16.
  [[nodiscard]] virtual core::Result<void> widen(core::Lane lane, const Buffer& src16, const Buffer& dst32,
                                                 int64_t dst_offset, core::Precision precision) = 0;
  // dst16[i] = src32[src_offset + i], rounded to nearest even, for every i of dst16.
  [[nodiscard]] virtual core::Result<void> narrow(core::Lane lane, const Buffer& src32, int64_t src_offset,
                                                  const Buffer& dst16, core::Precision precision) = 0;
  // acc16[i] = round(acc16[i] + add16[i]), the sum in fp32.
  [[nodiscard]] virtual core::Result<void> accumulate(core::Lane lane, const Buffer& acc16,
                                                      const Buffer& add16, core::Precision precision) = 0;
  [[nodiscard]] virtual core::Result<void> zero(core::Lane lane, const Buffer& buffer) = 0;
  [[nodiscard]] virtual core::Result<GradientStats> gradient_stats(core::Lane lane, const Buffer& grad16,
                                                                   core::Precision precision) = 0;

  // Ordering between lanes: every edge of the schedule from an op on one
  // lane to an op on another is an event the producer's lane records after
  // the op and the consumer's lane waits on before its own (the
  // interpreter's rule; tests/executor/stream_order_checker.h holds it to
  // every buffer the lanes share). `wait` orders the work `lane` issues
  // after it behind the event; where that work is the host's own (the CPU
  // backend's every call), the event has completed when the call returns.
  [[nodiscard]] virtual core::Result<Event> record(core::Lane lane) = 0;
  [[nodiscard]] virtual core::Result<void> wait(core::Lane lane, const Event& event) = 0;

  // Op times from the device's clock, for a backend whose calls return
  // before their work has run (so that when the host issued an op is not
  // when it ran): `mark` enqueues a timed point on `lane`; `marked_at`
  // waits until that point is reached and gives its time on the host's
  // steady clock (ns). A backend whose calls finish before they return
  // gives no marks, and the host's own times are the ops' times.
  [[nodiscard]] virtual core::Result<std::optional<TimeMark>> mark(core::Lane /*lane*/) { return std::nullopt; }
  [[nodiscard]] virtual core::Result<int64_t> marked_at(const TimeMark& /*mark*/) {
    return core::fail({{}, "this backend gives no time marks (a bug in stowage)", ""});
  }

  // Bytes this backend has moved on `lane` so far (copies, block reads and
  // writes), counted as it moves them: what the progress line reports.
  [[nodiscard]] virtual int64_t bytes_moved(core::Lane lane) const = 0;
  // Abandons what is in flight: calls blocked in the backend return soon
  // with an error. Called when a run is being stopped (a failed op, the
  // watchdog); a backend whose calls always finish on their own ignores it.
  virtual void cancel() {}
  // Gives the system back the memory this backend keeps for reuse (freed
  // buffers it caches, as a GPU's caching allocator does; PyTorch's
  // empty_cache). Called when a run's steps are over, before the trainer
  // allocates on its own (the held-out evaluation).
  virtual void give_back_kept() {}

  // NVMe. A region is reserved once, then written and read whole. A read
  // or write returns the queue depth the device kept while it moved (for
  // the measured trace; a backend that cannot tell returns {}).
  [[nodiscard]] virtual core::Result<void> reserve_region(const std::string& region, int64_t bytes) = 0;
  [[nodiscard]] virtual core::Result<core::QueueDepth> block_write(core::Lane lane, const BlockIo& io) = 0;
  [[nodiscard]] virtual core::Result<core::QueueDepth> block_read(core::Lane lane, const BlockIo& io) = 0;
};

}  // namespace stowage::executor
