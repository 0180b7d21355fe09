#include "executor/cuda/device_clock.h"

#include <cmath>

namespace stowage::executor::cuda {
namespace {

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

DeviceClock::DeviceClock(std::chrono::nanoseconds reanchor_after) : reanchor_after_(reanchor_after) {
  const std::lock_guard lock(mutex_);
  (void)anchor_now();
}

std::shared_ptr<const DeviceClock::Anchor> DeviceClock::anchor_now() {
  if (anchor_ == nullptr || steady_ns() - anchor_->ns > reanchor_after_.count()) {
    auto fresh = std::make_shared<Anchor>();
    fresh->event.record(idle_.get());
    fresh->event.synchronize();
    fresh->ns = steady_ns();
    anchor_ = std::move(fresh);
    ++anchors_;
  }
  return anchor_;
}

std::shared_ptr<const void> DeviceClock::mark(cudaStream_t stream) {
  auto m = std::make_shared<Mark>();
  {
    const std::lock_guard lock(mutex_);
    m->anchor = anchor_now();
  }
  m->event = events_->take();
  m->event->record(stream);
  return m;
}

int64_t DeviceClock::host_ns(const std::shared_ptr<const void>& mark) const {
  const auto& m = *static_cast<const Mark*>(mark.get());
  m.event->synchronize();
  return m.anchor->ns + std::llround(static_cast<double>(elapsed_ms(m.anchor->event, *m.event)) * 1e6);
}

int64_t DeviceClock::anchors() const {
  const std::lock_guard lock(mutex_);
  return anchors_;
}

}  // namespace stowage::executor::cuda
