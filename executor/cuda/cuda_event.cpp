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

float elapsed_ms(const CudaEvent& start, const CudaEvent& end) {
  float ms = 0;
  STOWAGE_CUDA(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return ms;
}

}  // namespace stowage::executor::cuda
