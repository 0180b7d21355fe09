// Reductions over one thread block, for the row-wise kernels (one block a
// row): every thread passes its part and gets the block's result back.
// blockDim.x == kThreadsPerBlock (launch_shape.h), a power of two; shared
// holds kThreadsPerBlock values and is free again on return.
#pragma once

#include <cuda_runtime_api.h>

namespace stowage::executor::cuda {

__device__ inline double block_sum(double value, double* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const double total = shared[0];
  __syncthreads();
  return total;
}

__device__ inline float block_max(float value, float* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = fmaxf(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();
  return total;
}

}  // namespace stowage::executor::cuda
