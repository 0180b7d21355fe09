// CudaEvent.
#include "executor/cuda/cuda_event.h"

#include <utility>

#include "executor/cuda/cuda_error.h"

namespace stowage::executor::cuda {

CudaEvent::CudaEvent(EventTiming timing) {
  const unsigned flags = timing == EventTiming::kTimed ? cudaEventDefault : cudaEventDisableTiming;
  STOWAGE_CUDA(cudaEventCreateWithFlags(&event_, flags));
}

CudaEvent::~CudaEvent() {
  if (event_ != nullptr) (void)cudaEventDestroy(event_);  // nobody to tell at teardown
}

CudaEvent::CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    if (event_ != nullptr) (void)cudaEventDestroy(event_);
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void CudaEvent::record(cudaStream_t stream) const {
  STOWAGE_CUDA(cudaEventRecord(event_, stream));
}
void CudaEvent::wait_on(cudaStream_t stream) const {
  STOWAGE_CUDA(cudaStreamWaitEvent(stream, event_, 0));
}
void CudaEvent::synchronize() const {
  STOWAGE_CUDA(cudaEventSynchronize(event_));
}

std::shared_ptr<const CudaEvent> EventPool::take() {
  std::unique_ptr<CudaEvent> event;
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      event = std::move(free_.back());
      free_.pop_back();
    }
  }
  if (!event) event = std::make_unique<CudaEvent>(timing_);
  // A wait already enqueued on an event is not moved by recording it again,
  // so an event may go back as soon as nobody will wait on it any more.
  return {event.release(), [pool = shared_from_this()](const CudaEvent* e) {
            std::lock_guard lock(pool->mutex_);
            pool->free_.emplace_back(const_cast<CudaEvent*>(e));
          }};
}

float elapsed_ms(const CudaEvent& start, const CudaEvent& end) {
  float ms = 0;
  STOWAGE_CUDA(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return ms;
}

}  // namespace stowage::executor::cuda
