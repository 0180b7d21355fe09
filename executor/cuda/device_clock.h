// The device's clock on the host's (steady_clock nanoseconds), for op times
// measured by CUDA events (CudaBackend::mark, marked_at under enqueue_only).
// A timed event's host time is an anchor's host time plus the device time
// between them. cudaEventElapsedTime gives float milliseconds, which
// coarsen as the span grows (about 70 us ten minutes after the anchor), so
// the clock takes a fresh anchor once the current one is older than
// `reanchor_after`: an event on a stream of its own, idle, so it completes
// at once and the host's time after waiting for it is its time to within
// the wait's return (microseconds), and no lane's work is waited for. A
// mark keeps the anchor current when it was made, which completed before
// the mark was enqueued, so their span is never negative.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "executor/cuda/cuda_event.h"
#include "executor/cuda/cuda_stream.h"

namespace stowage::executor::cuda {

class DeviceClock {
 public:
  // Anchors at once. Throws CudaError.
  explicit DeviceClock(std::chrono::nanoseconds reanchor_after = std::chrono::seconds(30));

  // A timed point enqueued on `stream`: when everything issued to it
  // before has run. Throws CudaError.
  [[nodiscard]] std::shared_ptr<const void> mark(cudaStream_t stream);
  // The host time of a mark from this clock, waiting for it to complete.
  // Throws CudaError.
  [[nodiscard]] int64_t host_ns(const std::shared_ptr<const void>& mark) const;
  // How many anchors it has taken (the first included), for its tests.
  [[nodiscard]] int64_t anchors() const;

 private:
  struct Anchor {
    CudaEvent event{EventTiming::kTimed};
    int64_t ns = 0;
  };
  struct Mark {
    std::shared_ptr<const CudaEvent> event;
    std::shared_ptr<const Anchor> anchor;
  };
  std::shared_ptr<const Anchor> anchor_now();  // under mutex_

  std::chrono::nanoseconds reanchor_after_;
  CudaStream idle_;  // the anchors' own stream: nothing else runs on it
  std::shared_ptr<EventPool> events_ = std::make_shared<EventPool>(EventTiming::kTimed);
  mutable std::mutex mutex_;
  std::shared_ptr<const Anchor> anchor_;
  int64_t anchors_ = 0;
};

}  // namespace stowage::executor::cuda
