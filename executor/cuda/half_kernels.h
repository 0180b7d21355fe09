// The executor's 16-bit element-wise work on the GPU (backend.h's widen,
// narrow, accumulate, zero) over half_bits.h's conversions, which the CPU
// backend's model/half_convert runs too: the same bits on both
// (tests/executor/cuda/half_kernels_test.cpp). Device arrays; enqueued on
// `stream`; each throws CudaError when its launch or call fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/training_spec.h"

namespace stowage::executor::cuda {

// dst32[i] = src16[i] widened exactly, i < n.
void launch_widen(const uint16_t* src16, float* dst32, int64_t n, core::Precision precision,
                  cudaStream_t stream);
// dst16[i] = src32[i] rounded to nearest even (NaN kept NaN), i < n.
void launch_narrow(const float* src32, uint16_t* dst16, int64_t n, core::Precision precision,
                   cudaStream_t stream);
// acc16[i] = round(acc16[i] + add16[i]), the sum in fp32, a NaN sum the default NaN.
void launch_accumulate(uint16_t* acc16, const uint16_t* add16, int64_t n, core::Precision precision,
                       cudaStream_t stream);
// `bytes` zero bytes at `data` (cudaMemsetAsync).
void zero_async(void* data, int64_t bytes, cudaStream_t stream);

}  // namespace stowage::executor::cuda
