// Memory given back while work already enqueued may still use it. When the
// host only enqueues (CudaBackendOptions::enqueue_only), the executor
// releases a buffer as soon as the last op using it has been *issued*; the
// arena must not hand that range to the next allocation, which another
// stream may write at once, until that work has run. So a release is parked
// behind an event recorded on every lane's stream at the time (everything
// issued until then), and its memory goes back when they have completed, as
// cudaFreeAsync orders a free on its stream.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "executor/cuda/cuda_event.h"
#include "executor/cuda/cuda_stream.h"

namespace stowage::executor::cuda {

class StreamOrderedRelease {
 public:
  StreamOrderedRelease(const LaneStreams& streams, std::shared_ptr<EventPool> events)
      : streams_(streams), events_(std::move(events)) {}

  // Holds `give_back` (returning memory to its owner) until everything
  // enqueued so far on any lane has finished. Throws CudaError.
  void park(std::function<void()> give_back);

  enum class Until : uint8_t { kCompleted, kAll, kUnwaited };
  // Gives back what waits on nothing any more (kCompleted: the host does
  // not block), everything parked (kAll: the host waits for it), or
  // everything parked at once (kUnwaited: only after a device fault, when
  // no stream will run again). Returns whether anything was given back.
  // Throws CudaError (kUnwaited makes no CUDA call).
  bool collect(Until until);

 private:
  struct Parked {
    std::vector<std::shared_ptr<const CudaEvent>> after;  // one per lane's stream
    std::function<void()> give_back;
  };
  const LaneStreams& streams_;
  std::shared_ptr<EventPool> events_;
  std::mutex mutex_;
  std::deque<Parked> parked_;  // in the order released: each lane's events complete in it
};

}  // namespace stowage::executor::cuda
