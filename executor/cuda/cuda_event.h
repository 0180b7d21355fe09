// CUDA events, owned: the cross-lane edges of a schedule (recorded on the
// producing lane's stream, waited on by the consumer's, so the host only
// enqueues) and, with timing, an op's start and end for the measured
// timeline (issue 15 item 5).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace stowage::executor::cuda {

enum class EventTiming : uint8_t {
  kUntimed,  // cudaEventDisableTiming: the cheapest, for ordering only
  kTimed,    // can be measured with elapsed_ms
};

class CudaEvent {
 public:
  // Throws CudaError naming cudaEventCreateWithFlags.
  explicit CudaEvent(EventTiming timing = EventTiming::kUntimed);
  ~CudaEvent();
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&& other) noexcept;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  [[nodiscard]] cudaEvent_t get() const { return event_; }
  // Completes when everything issued to `stream` before this call has.
  void record(cudaStream_t stream) const;
  // Work issued to `stream` after this call waits for the event (the host does not).
  void wait_on(cudaStream_t stream) const;
  void synchronize() const;  // blocks the host until the event completes

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds from `start` to `end`, both timed, recorded and complete
// (cudaEventElapsedTime: resolution about 0.5 us). Throws CudaError.
[[nodiscard]] float elapsed_ms(const CudaEvent& start, const CudaEvent& end);

}  // namespace stowage::executor::cuda
