// gradient_stats_kernel.h: each block bins its share in shared memory, then
// adds its non-empty bins to the global ones (256 atomics a block at most).
#include "executor/cuda/gradient_stats_kernel.h"

#include "executor/cuda/cuda_error.h"
#include "executor/cuda/launch_shape.h"

namespace stowage::executor::cuda {
namespace {

using Counter = unsigned long long;  // what atomicAdd takes; uint64_t is unsigned long here
static_assert(sizeof(Counter) == sizeof(uint64_t));

template <core::Precision kPrecision>
__device__ inline SquareTerm square_term(uint16_t x) {
  if constexpr (kPrecision == core::Precision::kBf16)
    return bf16_square_term(x);
  else
    return fp16_square_term(x);
}

template <core::Precision kPrecision>
__global__ void square_sum_bins_kernel(const uint16_t* grad16, int64_t n, SquareSumBins* out) {
  __shared__ Counter bins[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) bins[b] = 0;
  __syncthreads();
  Counter truncated = 0;
  unsigned saturated = 0;
  unsigned not_finite = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const SquareTerm t = square_term<kPrecision>(grad16[i]);
    switch (t.kind) {
      case SquareTermKind::kBinned:
        atomicAdd(&bins[t.exponent], static_cast<Counter>(t.amount));
        break;
      case SquareTermKind::kTruncated:
        truncated += t.amount;
        break;
      case SquareTermKind::kSaturates:
        saturated = 1;
        break;
      case SquareTermKind::kNotFinite:
        saturated = 1;
        not_finite = 1;
        break;
      case SquareTermKind::kVanishes:
        break;
    }
  }
  if (truncated != 0) atomicAdd(reinterpret_cast<Counter*>(&out->truncated), truncated);
  if (saturated != 0) atomicOr(&out->saturated, 1u);
  if (not_finite != 0) atomicOr(&out->not_finite, 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) {
    if (bins[b] != 0) atomicAdd(reinterpret_cast<Counter*>(&out->by_exponent[b]), bins[b]);
  }
}

}  // namespace

void launch_square_sum_bins(const uint16_t* grad16, int64_t n, core::Precision precision, SquareSumBins* bins,
                            cudaStream_t stream) {
  if (n <= 0) return;
  if (precision == core::Precision::kBf16)
    square_sum_bins_kernel<core::Precision::kBf16>
        <<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(grad16, n, bins);
  else
    square_sum_bins_kernel<core::Precision::kFp16>
        <<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(grad16, n, bins);
  check_launch("square_sum_bins_kernel");
}

}  // namespace stowage::executor::cuda
