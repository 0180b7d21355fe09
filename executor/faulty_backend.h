// A backend that fails on purpose: it forwards every call to another
// backend, except the Nth call of one kind, which fails with a chosen
// message (an I/O error, device memory exhausted...) or hangs until the run
// is cancelled (a stuck driver call). Element-wise calls are never failed. Tests use it to check that a
// failing op stops the run with a clear message and loses nothing, and that the watchdog reports a hang
// instead of waiting forever.
#pragma once

#include <atomic>
#include <chrono>
#include <thread>

#include "executor/forwarding_backend.h"

namespace stowage::executor {

enum class FaultEffect : uint8_t { kFail, kHang };

struct Fault {
  CallKind kind = CallKind::kBlockWrite;
  int64_t nth = 1;  // 1-based: the first call of `kind` is 1
  std::string message = "injected fault";
  FaultEffect effect = FaultEffect::kFail;
};

class FaultyBackend final : public ForwardingBackend {
 public:
  FaultyBackend(Backend& inner, Fault fault) : ForwardingBackend(inner), fault_(std::move(fault)) {}

  [[nodiscard]] std::string_view name() const override { return "faulty"; }
  // Calls of each kind so far, failed ones included.
  [[nodiscard]] int64_t calls(CallKind kind) const { return calls_[static_cast<size_t>(kind)].load(); }

  [[nodiscard]] core::Result<Buffer> allocate(core::Tier tier, int64_t bytes, std::string what) override {
    if (auto f = trip(CallKind::kAllocate, what); !f) return std::unexpected(f.error());
    return inner_.allocate(tier, bytes, std::move(what));
  }
  [[nodiscard]] core::Result<void> copy(core::Lane lane, const Buffer& dst, int64_t dst_offset,
                                        const Buffer& src, int64_t src_offset, int64_t bytes) override {
    if (auto f = trip(CallKind::kCopy, dst.what); !f) return f;
    return inner_.copy(lane, dst, dst_offset, src, src_offset, bytes);
  }
  [[nodiscard]] core::Result<void> compute(
      core::Lane lane, std::string_view what, const LayerBuffers& buffers,
      const std::function<void(const LayerWorkspace&)>& kernel) override {
    if (auto f = trip(CallKind::kCompute, what); !f) return f;
    return inner_.compute(lane, what, buffers, kernel);
  }
  [[nodiscard]] core::Result<void> optimizer_step(core::Lane lane, const OptimizerWork& work) override {
    if (auto f = trip(CallKind::kOptimizer, "optimizer"); !f) return f;
    return inner_.optimizer_step(lane, work);
  }
  void cancel() override {
    cancelled_ = true;
    inner_.cancel();
  }
  [[nodiscard]] core::Result<core::QueueDepth> block_write(core::Lane lane, const BlockIo& io) override {
    if (auto f = trip(CallKind::kBlockWrite, io.region); !f) return std::unexpected(f.error());
    return inner_.block_write(lane, io);
  }
  [[nodiscard]] core::Result<core::QueueDepth> block_read(core::Lane lane, const BlockIo& io) override {
    if (auto f = trip(CallKind::kBlockRead, io.region); !f) return std::unexpected(f.error());
    return inner_.block_read(lane, io);
  }

 private:
  core::Result<void> trip(CallKind kind, std::string_view what) {
    const int64_t n = ++calls_[static_cast<size_t>(kind)];
    if (kind != fault_.kind || n != fault_.nth) return {};
    if (fault_.effect == FaultEffect::kHang) {
      while (!cancelled_) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return core::fail({{},
                         "injected hang, cancelled (" + std::string(to_string(kind)) + " call " +
                             std::to_string(n) + ", '" + std::string(what) + "')",
                         ""});
    }
    return core::fail({{},
                       fault_.message + " (" + std::string(to_string(kind)) + " call " + std::to_string(n) +
                           ", '" + std::string(what) + "')",
                       ""});
  }

  Fault fault_;
  std::array<std::atomic<int64_t>, kCallKindCount> calls_{};
  std::atomic<bool> cancelled_{false};
};

}  // namespace stowage::executor
