// Adam/AdamW on the GPU for a partition whose optimizer stays on the device
// (issue 15 item 2): fp32 master weights, fp32 or bf16 moments, the 16-bit
// gradient widened exactly, the 16-bit parameter copy written. Each element
// is adam_update_one (executor/adam_update.h), the function the CPU
// optimizer's scalar path runs, with correctly rounded fma, sqrt and
// division on both: the same bits as CpuBackend::optimizer_step on the same
// inputs (tests/executor/cuda/adam_kernel_test.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/training_spec.h"
#include "executor/adam_update.h"

namespace stowage::executor::cuda {

// Device arrays of n elements each, not overlapping. Moment is float
// (fp32 moments) or uint16_t (bf16 bit patterns, core::StatePrecision::kBf16).
template <class Moment>
struct AdamPartitionOf {
  float* master = nullptr;
  Moment* m = nullptr;
  Moment* v = nullptr;
  const uint16_t* grad16 = nullptr;  // `precision` bits, still multiplied by the loss scale
  uint16_t* param16 = nullptr;       // written: master rounded to `precision`
  int64_t n = 0;
};

// Bytes one step moves per parameter: master, m and v read and written, the
// 16-bit gradient read and the 16-bit copy written (28 with fp32 moments, 20
// with bf16). bench/gpu/cuda_probe prices the kernel against the HBM copy by it.
template <class Moment>
inline constexpr int64_t kAdamKernelBytesPerParam = 2 * (4 + 2 * static_cast<int64_t>(sizeof(Moment))) + 2 +
                                                    2;

// Enqueues one step on `stream`; constants from adam_step_constants (the
// grad_scale's unscaling is in them). Throws CudaError when the launch fails.
void launch_adam(const AdamPartitionOf<float>& p, const AdamStepConstants& c, core::OptimizerKind optimizer,
                 core::Precision precision, cudaStream_t stream);
void launch_adam(const AdamPartitionOf<uint16_t>& p, const AdamStepConstants& c,
                 core::OptimizerKind optimizer, core::Precision precision, cudaStream_t stream);

}  // namespace stowage::executor::cuda
