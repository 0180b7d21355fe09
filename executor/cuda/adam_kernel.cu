// adam_kernel.h: one thread per element in a grid-stride loop.
#include "executor/cuda/adam_kernel.h"

#include "executor/cuda/cuda_error.h"
#include "executor/cuda/launch_shape.h"
#include "executor/half_bits.h"

namespace stowage::executor::cuda {
namespace {

__device__ inline float load_moment(float x) {
  return x;
}
__device__ inline float load_moment(uint16_t bits) {
  return bf16_value(bits);
}
__device__ inline void store_moment(float& slot, float x) {
  slot = x;
}
__device__ inline void store_moment(uint16_t& slot, float x) {
  slot = bf16_bits(x);
}

template <core::OptimizerKind kOptimizer, core::Precision kPrecision, class Moment>
__global__ void adam_kernel(AdamPartitionOf<Moment> p, AdamStepConstants c) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n; i += stride) {
    float m = load_moment(p.m[i]);
    float v = load_moment(p.v[i]);
    const float grad = half_value_of<kPrecision>(p.grad16[i]);
    const float param = adam_update_one<kOptimizer>(c, p.master[i], grad, m, v);
    store_moment(p.m[i], m);
    store_moment(p.v[i], v);
    p.master[i] = param;
    p.param16[i] = half_bits_of<kPrecision>(param);
  }
}

template <core::OptimizerKind kOptimizer, class Moment>
void launch_for(const AdamPartitionOf<Moment>& p, const AdamStepConstants& c, core::Precision precision,
                cudaStream_t stream) {
  if (precision == core::Precision::kBf16)
    adam_kernel<kOptimizer, core::Precision::kBf16><<<blocks_for(p.n), kThreadsPerBlock, 0, stream>>>(p, c);
  else
    adam_kernel<kOptimizer, core::Precision::kFp16><<<blocks_for(p.n), kThreadsPerBlock, 0, stream>>>(p, c);
  check_launch("adam_kernel");
}

template <class Moment>
void launch(const AdamPartitionOf<Moment>& p, const AdamStepConstants& c, core::OptimizerKind optimizer,
            core::Precision precision, cudaStream_t stream) {
  if (p.n <= 0) return;
  if (optimizer == core::OptimizerKind::kAdam)
    launch_for<core::OptimizerKind::kAdam>(p, c, precision, stream);
  else
    launch_for<core::OptimizerKind::kAdamW>(p, c, precision, stream);
}

}  // namespace

void launch_adam(const AdamPartitionOf<float>& p, const AdamStepConstants& c, core::OptimizerKind optimizer,
                 core::Precision precision, cudaStream_t stream) {
  launch(p, c, optimizer, precision, stream);
}
void launch_adam(const AdamPartitionOf<uint16_t>& p, const AdamStepConstants& c,
                 core::OptimizerKind optimizer, core::Precision precision, cudaStream_t stream) {
  launch(p, c, optimizer, precision, stream);
}

}  // namespace stowage::executor::cuda
