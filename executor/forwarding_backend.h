// A backend that forwards every call to another one: the base of backends
// that change a few calls and pass the rest through (faulty_backend.h, the
// tests' slow or counting backends), so each overrides only what it changes.
#pragma once

#include "executor/backend.h"

namespace stowage::executor {

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(Backend& inner) : inner_(inner) {}

  [[nodiscard]] std::string_view name() const override { return inner_.name(); }
  [[nodiscard]] std::string device_name() const override { return inner_.device_name(); }
  [[nodiscard]] core::Result<Buffer> allocate(core::Tier tier, int64_t bytes, std::string what) override {
    return inner_.allocate(tier, bytes, std::move(what));
  }
  void release(Buffer& buffer) override { inner_.release(buffer); }
  [[nodiscard]] int64_t in_use(core::Tier tier) const override { return inner_.in_use(tier); }
  [[nodiscard]] int64_t capacity(core::Tier tier) const override { return inner_.capacity(tier); }
  [[nodiscard]] bool in_host_memory(core::Tier tier) const override { return inner_.in_host_memory(tier); }
  [[nodiscard]] core::Result<void> copy(core::Lane lane, const Buffer& dst, int64_t dst_offset,
                                        const Buffer& src, int64_t src_offset, int64_t bytes) override {
    return inner_.copy(lane, dst, dst_offset, src, src_offset, bytes);
  }
  [[nodiscard]] core::Result<void> compute(
      core::Lane lane, std::string_view what, const LayerBuffers& buffers,
      const std::function<void(const LayerWorkspace&)>& kernel) override {
    return inner_.compute(lane, what, buffers, kernel);
  }
  [[nodiscard]] core::Result<void> optimizer_step(core::Lane lane, const OptimizerWork& work) override {
    return inner_.optimizer_step(lane, work);
  }
  [[nodiscard]] core::Result<void> widen(core::Lane lane, const Buffer& src16, const Buffer& dst32,
                                         int64_t dst_offset, core::Precision precision) override {
    return inner_.widen(lane, src16, dst32, dst_offset, precision);
  }
  [[nodiscard]] core::Result<void> narrow(core::Lane lane, const Buffer& src32, int64_t src_offset,
                                          const Buffer& dst16, core::Precision precision) override {
    return inner_.narrow(lane, src32, src_offset, dst16, precision);
  }
  [[nodiscard]] core::Result<void> accumulate(core::Lane lane, const Buffer& acc16, const Buffer& add16,
                                              core::Precision precision) override {
    return inner_.accumulate(lane, acc16, add16, precision);
  }
  [[nodiscard]] core::Result<void> zero(core::Lane lane, const Buffer& buffer) override {
    return inner_.zero(lane, buffer);
  }
  [[nodiscard]] core::Result<GradientStats> gradient_stats(core::Lane lane, const Buffer& grad16,
                                                           core::Precision precision) override {
    return inner_.gradient_stats(lane, grad16, precision);
  }
  [[nodiscard]] core::Result<Event> record(core::Lane lane) override { return inner_.record(lane); }
  [[nodiscard]] core::Result<void> wait(core::Lane lane, const Event& event) override {
    return inner_.wait(lane, event);
  }
  [[nodiscard]] core::Result<std::optional<TimeMark>> mark(core::Lane lane) override { return inner_.mark(lane); }
  [[nodiscard]] core::Result<int64_t> marked_at(const TimeMark& mark) override { return inner_.marked_at(mark); }
  [[nodiscard]] int64_t bytes_moved(core::Lane lane) const override { return inner_.bytes_moved(lane); }
  void cancel() override { inner_.cancel(); }
  void give_back_kept() override { inner_.give_back_kept(); }
  [[nodiscard]] core::Result<void> reserve_region(const std::string& region, int64_t bytes) override {
    return inner_.reserve_region(region, bytes);
  }
  [[nodiscard]] core::Result<core::QueueDepth> block_write(core::Lane lane, const BlockIo& io) override {
    return inner_.block_write(lane, io);
  }
  [[nodiscard]] core::Result<core::QueueDepth> block_read(core::Lane lane, const BlockIo& io) override {
    return inner_.block_read(lane, io);
  }

 protected:
  Backend& inner_;
};

}  // namespace stowage::executor
