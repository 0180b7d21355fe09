// StreamOrderedRelease.
#include "executor/cuda/stream_ordered_release.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "executor/cuda/cuda_error.h"

namespace stowage::executor::cuda {
namespace {

// Whether the event has completed; a fault it met is thrown. "Not ready"
// is an answer, not a fault, but the runtime may also keep it as the
// thread's last error, which the next launch's check (check_launch) would
// then report as that kernel's failure: it is cleared here.
bool completed(const CudaEvent& event) {
  const cudaError_t status = cudaEventQuery(event.get());
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  STOWAGE_CUDA(status);
  return true;
}

}  // namespace

void StreamOrderedRelease::park(std::function<void()> give_back) {
  Parked p{.after = {}, .give_back = std::move(give_back)};
  p.after.reserve(core::kAllLanes.size());
  for (core::Lane lane : core::kAllLanes) {
    std::shared_ptr<const CudaEvent> event = events_->take();
    event->record(streams_[lane]);
    p.after.push_back(std::move(event));
  }
  std::lock_guard lock(mutex_);
  parked_.push_back(std::move(p));
}

bool StreamOrderedRelease::collect(Until until) {
  std::vector<std::function<void()>> ready;
  {
    std::lock_guard lock(mutex_);
    while (!parked_.empty()) {
      Parked& front = parked_.front();
      bool done = true;
      for (const std::shared_ptr<const CudaEvent>& e : front.after) {
        if (until == Until::kUnwaited) break;
        if (until == Until::kAll) {
          e->synchronize();
        } else if (!completed(*e)) {
          done = false;
          break;
        }
      }
      // A later release's events were recorded after this one's on every
      // stream, so none of them can have completed before it.
      if (!done) break;
      ready.push_back(std::move(front.give_back));
      parked_.pop_front();
    }
  }
  for (std::function<void()>& give_back : ready) give_back();
  return !ready.empty();
}

}  // namespace stowage::executor::cuda
