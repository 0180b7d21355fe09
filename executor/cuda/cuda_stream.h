// CUDA streams, owned: one per lane (core::Lane), as the schedule's lanes
// each run their ops in order and in parallel with the others. Non-blocking
// streams, so that nothing on the legacy default stream serialises them.
#pragma once

#include <cuda_runtime_api.h>

#include <array>

#include "core/schedule.h"

namespace stowage::executor::cuda {

class CudaStream {
 public:
  // Throws CudaError naming cudaStreamCreateWithFlags.
  CudaStream();
  ~CudaStream();
  CudaStream(CudaStream&& other) noexcept;
  CudaStream& operator=(CudaStream&& other) noexcept;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  [[nodiscard]] cudaStream_t get() const { return stream_; }
  // Blocks the calling thread until everything issued so far has finished;
  // throws CudaError with the first asynchronous failure (a kernel fault).
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
};

// One stream per lane, indexed by the lane.
class LaneStreams {
 public:
  LaneStreams() = default;  // creates core::kLaneCount streams; throws CudaError
  [[nodiscard]] cudaStream_t operator[](core::Lane lane) const {
    return streams_[static_cast<size_t>(lane)].get();
  }
  void synchronize_all() const;

 private:
  std::array<CudaStream, core::kLaneCount> streams_;
};

}  // namespace stowage::executor::cuda
