// The emulation itself (cuda_emulation.h), through the same translation as
// the project's kernels: every (block, thread) runs once with its built-in
// variables; __syncthreads orders a block's threads (a tree sum over
// shared memory gives the exact total; without the barriers it would not);
// a kernel whose template arguments are deduced from its arguments
// launches; a divergent barrier ends the process saying so.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "executor/cuda/block_reduce.cuh"

namespace stowage::executor::cuda {
namespace {

__global__ void record_kernel(int* seen, unsigned threads_per_block) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  seen[block * threads_per_block + thread] += 1;
}

TEST(CudaEmulation, EveryThreadOfEveryBlockRunsOnceWithItsIndices) {
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  std::vector<int> seen(12 * 24, 0);
  int* p = seen.data();
  record_kernel<<<grid, block>>>(p, 24u);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << i;
}

__global__ void block_sum_kernel(const double* in, double* out) {
  __shared__ double scratch[256];
  const double total = block_sum(in[blockIdx.x * blockDim.x + threadIdx.x], scratch);
  if (threadIdx.x == blockDim.x - 1) out[blockIdx.x] = total;
}

TEST(CudaEmulation, BarriersLetABlockSumOverSharedMemory) {
  std::vector<double> in(3 * 256);
  std::iota(in.begin(), in.end(), 1.0);
  std::vector<double> out(3, 0.0);
  const double* pin = in.data();
  double* pout = out.data();
  block_sum_kernel<<<3, 256, 0, nullptr>>>(pin, pout);
  for (int b = 0; b < 3; ++b) {
    const double first = 256.0 * b + 1, last = 256.0 * (b + 1);
    EXPECT_EQ(out[static_cast<size_t>(b)], (first + last) * 128) << b;
  }
}

template <int kScale, class T>
__global__ void scale_kernel(T* x, int64_t n) {
  for (int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x[i] *= kScale;
}

TEST(CudaEmulation, DeducedTemplateArgumentsLaunch) {
  std::vector<float> x(1000, 1.5f);
  float* p = x.data();
  scale_kernel<4><<<2, 128>>>(p, static_cast<int64_t>(x.size()));
  for (float v : x) EXPECT_EQ(v, 6.0f);
}

__global__ void divergent_kernel() {
  if (threadIdx.x % 2 == 0) __syncthreads();
}

__global__ void late_divergent_kernel() {
  // Thread 0 of block 0 reaches no barrier; a thread of a later block does.
  if (blockIdx.x == 1 && threadIdx.x == 5) __syncthreads();
}

TEST(CudaEmulationDeathTest, ADivergentBarrierEndsTheRunNamingIt) {
  EXPECT_DEATH(divergent_kernel<<<1, 8>>>(),
               "__syncthreads reached by some threads of a block after this one");
  EXPECT_DEATH(late_divergent_kernel<<<2, 8>>>(), "block 1,0,0 thread 5,0,0");
}

}  // namespace
}  // namespace stowage::executor::cuda
