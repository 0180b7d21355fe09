// CUDA events, owned: the cross-lane edges of a schedule (recorded on the
// producing lane's stream, waited on by the consumer's, so the host only
// enqueues) and, with timing, an op's start and end for the measured
// timeline (issue 15 item 5).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

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

// Events for the schedule's cross-lane edges (untimed) or for op times
// (timed), reused: a run records hundreds a step, and creating each anew
// would cost a driver call apiece.
class EventPool : public std::enable_shared_from_this<EventPool> {
 public:
  explicit EventPool(EventTiming timing = EventTiming::kUntimed) : timing_(timing) {}
  // Make pools with std::make_shared: each event handed out keeps its pool.
  // An event from the pool; it goes back when its last copy is dropped.
  // Throws CudaError naming cudaEventCreateWithFlags.
  [[nodiscard]] std::shared_ptr<const CudaEvent> take();

 private:
  EventTiming timing_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<CudaEvent>> free_;
};

// Milliseconds from `start` to `end`, both timed, recorded and complete
// (cudaEventElapsedTime: resolution about 0.5 us). Throws CudaError.
[[nodiscard]] float elapsed_ms(const CudaEvent& start, const CudaEvent& end);

}  // namespace stowage::executor::cuda
