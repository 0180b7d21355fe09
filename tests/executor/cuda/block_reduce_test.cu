// block_reduce.cuh on its own: every thread of a block gets the block's
// total and maximum, and a reduction may reuse the shared array the one
// before it used at once (the barrier after each result is read makes that
// safe; no kernel of the project reuses one yet, so only this test would
// see that barrier go missing). Values are multiples of 1/1024 in [-1, 1],
// so every sum is exact in any order, and results are compared bit for
// bit. Runs on a GPU (label gpu) and emulated, in both orders (emulated/).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "executor/cuda/block_reduce.cuh"
#include "executor/cuda/launch_shape.h"
#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

// Two sums, then two maxima, each pair over one shared array.
__global__ void reduce_twice_kernel(const float* in, double* sums, float* maxes) {
  __shared__ double shared_sums[kThreadsPerBlock];
  __shared__ float shared_maxes[kThreadsPerBlock];
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const float v = in[i];
  sums[2 * i] = block_sum(v, shared_sums);
  sums[2 * i + 1] = block_sum(-2.0 * v, shared_sums);
  maxes[2 * i] = block_max(v, shared_maxes);
  maxes[2 * i + 1] = block_max(-v, shared_maxes);
}

TEST(BlockReduce, EveryThreadGetsItsBlocksTotalAndMaximumTwiceOverOneArray) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  const int blocks = 3;
  const int64_t n = int64_t{blocks} * kThreadsPerBlock;
  std::vector<float> in = random_floats(n, -1, 1, 61);
  for (float& v : in) v = std::round(v * 1024.0f) / 1024.0f;
  DeviceArray<float> gin(in);
  DeviceArray<double> gsums(std::vector<double>(static_cast<size_t>(2 * n)));
  DeviceArray<float> gmaxes(std::vector<float>(static_cast<size_t>(2 * n)));
  const float* pin = gin.get();  // locals: emulated, the arguments are captured by value
  double* psums = gsums.get();
  float* pmaxes = gmaxes.get();
  reduce_twice_kernel<<<blocks, kThreadsPerBlock>>>(pin, psums, pmaxes);
  STOWAGE_CUDA(cudaGetLastError());
  const std::vector<double> sums = gsums.to_host();
  const std::vector<float> maxes = gmaxes.to_host();
  for (int b = 0; b < blocks; ++b) {
    double total = 0;
    float largest = -INFINITY, smallest = INFINITY;
    for (int t = 0; t < kThreadsPerBlock; ++t) {
      const float v = in[static_cast<size_t>(b * kThreadsPerBlock + t)];
      total += v;
      largest = std::max(largest, v);
      smallest = std::min(smallest, v);
    }
    for (int t = 0; t < kThreadsPerBlock; ++t) {
      const auto i = static_cast<size_t>(b * kThreadsPerBlock + t);
      ASSERT_EQ(sums[2 * i], total) << "block " << b << " thread " << t;
      ASSERT_EQ(sums[2 * i + 1], -2.0 * total) << "block " << b << " thread " << t;
      ASSERT_EQ(maxes[2 * i], largest) << "block " << b << " thread " << t;
      ASSERT_EQ(maxes[2 * i + 1], -smallest) << "block " << b << " thread " << t;
    }
  }
}

}  // namespace
}  // namespace stowage::executor::cuda
