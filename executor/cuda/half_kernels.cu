// half_kernels.h: grid-stride loops over half_bits.h.
#include "executor/cuda/half_kernels.h"

#include "executor/cuda/cuda_error.h"
#include "executor/cuda/launch_shape.h"
#include "executor/half_bits.h"

namespace stowage::executor::cuda {
namespace {

using core::Precision;

__device__ inline int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

template <Precision kPrecision>
__global__ void widen_kernel(const uint16_t* src16, float* dst32, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) dst32[i] = half_value_of<kPrecision>(src16[i]);
}

template <Precision kPrecision>
__global__ void narrow_kernel(const float* src32, uint16_t* dst16, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) dst16[i] = half_bits_of<kPrecision>(src32[i]);
}

template <Precision kPrecision>
__global__ void accumulate_kernel(uint16_t* acc16, const uint16_t* add16, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float sum =
        sum_or_default_nan(half_value_of<kPrecision>(acc16[i]), half_value_of<kPrecision>(add16[i]));
    acc16[i] = half_bits_of<kPrecision>(sum);
  }
}

}  // namespace

void launch_widen(const uint16_t* src16, float* dst32, int64_t n, Precision precision, cudaStream_t stream) {
  if (n <= 0) return;
  if (precision == Precision::kBf16)
    widen_kernel<Precision::kBf16><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(src16, dst32, n);
  else
    widen_kernel<Precision::kFp16><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(src16, dst32, n);
  check_launch("widen_kernel");
}

void launch_narrow(const float* src32, uint16_t* dst16, int64_t n, Precision precision, cudaStream_t stream) {
  if (n <= 0) return;
  if (precision == Precision::kBf16)
    narrow_kernel<Precision::kBf16><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(src32, dst16, n);
  else
    narrow_kernel<Precision::kFp16><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(src32, dst16, n);
  check_launch("narrow_kernel");
}

void launch_accumulate(uint16_t* acc16, const uint16_t* add16, int64_t n, Precision precision,
                       cudaStream_t stream) {
  if (n <= 0) return;
  if (precision == Precision::kBf16)
    accumulate_kernel<Precision::kBf16><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(acc16, add16, n);
  else
    accumulate_kernel<Precision::kFp16><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(acc16, add16, n);
  check_launch("accumulate_kernel");
}

void zero_async(void* data, int64_t bytes, cudaStream_t stream) {
  if (bytes <= 0) return;
  STOWAGE_CUDA(cudaMemsetAsync(data, 0, static_cast<size_t>(bytes), stream));
}

}  // namespace stowage::executor::cuda
