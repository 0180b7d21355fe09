// The emulation itself (cuda_emulation.h), through the same translation as
// the project's kernels: every (block, thread) runs once with its built-in
// variables, in the order STOWAGE_CUDA_EMULATION_ORDER names (CI runs these
// in both); __syncthreads orders a block's threads (a tree sum over
// shared memory gives the exact total; without the barriers it would not),
// and a read a barrier should guard goes wrong in one of the orders; grids
// launched from several host threads run one at a time; a stream's work
// runs when the host waits for it, after the events it waits on; a kernel
// whose template arguments are deduced from its arguments launches; a
// divergent barrier ends the process saying so; a write past an
// allocation's end faults, and fresh device memory reads as NaN.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <numeric>
#include <thread>
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

__global__ void turn_kernel(unsigned* turns, unsigned* next, unsigned threads_per_block) {
  turns[blockIdx.x * threads_per_block + threadIdx.x] = (*next)++;  // one thread runs at a time
}

TEST(CudaEmulation, BlocksAndThreadsRunInTheConfiguredOrder) {
  const unsigned blocks = 3, threads = 5;
  std::vector<unsigned> turns(blocks * threads);
  unsigned next = 0;
  unsigned* pturns = turns.data();
  unsigned* pnext = &next;
  turn_kernel<<<blocks, threads>>>(pturns, pnext, threads);
  for (unsigned i = 0; i < turns.size(); ++i) {
    const unsigned expected = cuda_emulation::emulation_order() == cuda_emulation::Order::kForward
                                  ? i
                                  : static_cast<unsigned>(turns.size()) - 1 - i;
    EXPECT_EQ(turns[i], expected) << i;
  }
}

// Thread 0 reads what thread 5 writes, with no barrier between: on a GPU
// either may go first, so the answer is a race.
__global__ void unguarded_read_kernel(int* out) {
  __shared__ int value;
  if (threadIdx.x == 0) value = -1;
  __syncthreads();
  if (threadIdx.x == 5) value = 42;
  if (threadIdx.x == 0) *out = value;  // a __syncthreads belongs before this
}

TEST(CudaEmulation, AMissingBarrierGivesTheWrongAnswerInOneOrder) {
  int out = 0;
  int* pout = &out;
  unguarded_read_kernel<<<1, 8>>>(pout);
  // Forward, the reader runs before the writer; reverse, after it.
  EXPECT_EQ(out, cuda_emulation::emulation_order() == cuda_emulation::Order::kForward ? -1 : 42);
}

__global__ void index_kernel(unsigned* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned before = blockIdx.x * 1000 + threadIdx.x;
  for (int spin = 0; spin < 50; ++spin) out[i] = before;  // time for another launch
  __syncthreads();  // a switch: a grid run meanwhile would leave its own built-ins
  if (blockIdx.x * 1000 + threadIdx.x != before) out[i] = ~0u;
}

// The backend's lanes are host threads, each launching on its own stream;
// on a GPU their kernels may run at once. Emulated, a grid runs on the
// launching thread, and the built-in variables and __shared__ statics are
// the process's: so grids run one at a time, whichever thread launches.
TEST(CudaEmulation, LaunchesFromSeveralHostThreadsRunOneGridAtATime) {
  std::vector<std::thread> launchers;
  std::vector<std::vector<unsigned>> outs(4);
  for (unsigned l = 0; l < outs.size(); ++l) {
    launchers.emplace_back([&outs, l] {
      const unsigned blocks = 3 + l, threads = 32 * (l + 1);
      for (int round = 0; round < 20; ++round) {
        outs[l].assign(blocks * threads, 0);
        unsigned* p = outs[l].data();
        index_kernel<<<blocks, threads>>>(p);
        for (unsigned i = 0; i < outs[l].size(); ++i) {
          if (outs[l][i] != i / threads * 1000 + i % threads) {
            ADD_FAILURE() << "launcher " << l << " round " << round << " element " << i << ": " << outs[l][i];
            return;
          }
        }
      }
    });
  }
  for (std::thread& t : launchers) t.join();
}

__global__ void set_kernel(int* x, int value) {
  *x = value;
}
__global__ void copy_kernel(const int* from, int* to) {
  *to = *from;
}

// The lanes' streams run their work when the host waits for it, and a
// stream waiting on an event runs the event's stream up to it first: so a
// read of another stream's write with no event between sees the value
// before the write (as a GPU may, when the host has raced ahead).
TEST(CudaEmulation, AStreamsWorkRunsWhenWaitedForAfterTheEventsItWaitsOn) {
  cudaStream_t writer = nullptr, reader = nullptr;
  cudaEvent_t written = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&writer, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&written, cudaEventDisableTiming), cudaSuccess);
  int* x = nullptr;
  int* y = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&x), sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&y), sizeof(int)), cudaSuccess);
  *x = 0;
  *y = -1;

  set_kernel<<<1, 1, 0, writer>>>(x, 1);
  copy_kernel<<<1, 1, 0, reader>>>(x, y);  // no event: a race
  EXPECT_EQ(*y, -1) << "enqueued work ran before anything waited for it";
  ASSERT_EQ(cudaStreamSynchronize(reader), cudaSuccess);
  EXPECT_EQ(*y, 0) << "the read ran after the write it did not wait for";
  ASSERT_EQ(cudaStreamSynchronize(writer), cudaSuccess);
  EXPECT_EQ(*x, 1);

  set_kernel<<<1, 1, 0, writer>>>(x, 2);
  ASSERT_EQ(cudaEventRecord(written, writer), cudaSuccess);
  EXPECT_EQ(cudaEventQuery(written), cudaErrorNotReady);
  ASSERT_EQ(cudaStreamWaitEvent(reader, written, 0), cudaSuccess);
  set_kernel<<<1, 1, 0, writer>>>(x, 3);  // after the event: not waited for
  copy_kernel<<<1, 1, 0, reader>>>(x, y);
  ASSERT_EQ(cudaStreamSynchronize(reader), cudaSuccess);
  EXPECT_EQ(*y, 2);
  EXPECT_EQ(cudaEventQuery(written), cudaSuccess);

  ASSERT_EQ(cudaFree(x), cudaSuccess);  // waits for the device, as the runtime's does
  EXPECT_EQ(cudaFree(y), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(written), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(reader), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(writer), cudaSuccess);
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
  // The first thread run (in either order) reaches no barrier; one thread
  // of one block, run later, does.
  if (blockIdx.x == 1 && threadIdx.x == 5) __syncthreads();
}

TEST(CudaEmulationDeathTest, ADivergentBarrierEndsTheRunNamingIt) {
  EXPECT_DEATH(divergent_kernel<<<1, 8>>>(), "__syncthreads reached by .*would hang");
  EXPECT_DEATH(late_divergent_kernel<<<3, 8>>>(), "block 1,0,0 thread 5,0,0");
}

__global__ void write_at_kernel(float* p, int64_t i) {
  p[i] = 1.0f;
}

// Device memory as the emulation hands it out: 256-byte aligned, its
// rounded end against an inaccessible page, so that a kernel running past
// it faults here (on a GPU it would corrupt a neighbour, or fault only
// under compute-sanitizer); and not zeros, which a GPU does not promise
// either: a read before a write is NaN.
TEST(CudaEmulationDeathTest, AWritePastAnAllocationsEndFaults) {
  float* p = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), 256 * sizeof(float)), cudaSuccess);  // 1 KiB: no rounding
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
  write_at_kernel<<<1, 1>>>(p, 255);  // the last element: fine
  EXPECT_DEATH(write_at_kernel<<<1, 1>>>(p, 256), "");
  EXPECT_EQ(cudaFree(p), cudaSuccess);
}

TEST(CudaEmulation, FreshDeviceMemoryReadsAsNaN) {
  float* p = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), 7 * sizeof(float)), cudaSuccess);
  std::vector<float> host(7, 0.0f);
  ASSERT_EQ(cudaMemcpy(host.data(), p, 7 * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (float v : host) EXPECT_TRUE(std::isnan(v));
  EXPECT_EQ(cudaFree(p), cudaSuccess);
}

}  // namespace
}  // namespace stowage::executor::cuda
