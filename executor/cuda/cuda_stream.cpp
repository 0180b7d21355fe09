// CudaStream and LaneStreams.
#include "executor/cuda/cuda_stream.h"

#include <utility>

#include "executor/cuda/cuda_error.h"

namespace stowage::executor::cuda {

CudaStream::CudaStream() {
  STOWAGE_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaStream::~CudaStream() {
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);  // nobody to tell at teardown
}

CudaStream::CudaStream(CudaStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

CudaStream& CudaStream::operator=(CudaStream&& other) noexcept {
  if (this != &other) {
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void CudaStream::synchronize() const {
  STOWAGE_CUDA(cudaStreamSynchronize(stream_));
}

void LaneStreams::synchronize_all() const {
  for (const CudaStream& s : streams_) s.synchronize();
}

}  // namespace stowage::executor::cuda
