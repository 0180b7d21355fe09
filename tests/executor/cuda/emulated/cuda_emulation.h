// The CUDA the project's kernels use, on the host: forced into every .cu
// file compiled for emulation (-include), after translate_launches.py has
// rewritten its <<<...>>> launches into launch_kernel calls.
//
// Why: the kernels are written on machines without a GPU, and a GPU is lent
// rarely and for minutes. Run here, each kernel's test against its CPU twin
// finds what does not depend on the GPU itself: indexing, grid-stride and
// launch shapes, block reductions, a missing or divergent __syncthreads,
// the arguments every call passes, a missing event between streams (a
// stream's work runs only when waited for: emulated_streams.h). What it
// cannot find: races that neither order below exposes (threads interleaved
// within a phase, warps in lockstep), streams running at once, the
// device's own rounding of library math. Those stay for the GPU run
// (bench/gpu/check.sh).
//
// A launch runs its blocks one after another; a block's threads run one
// after another, each to its next __syncthreads or its end, as fibers
// (emulated_blocks.cpp). `__shared__` variables become function statics:
// one block runs at a time, so one copy is what a block shares. Blocks and
// threads run in index order, or in reverse order under
// STOWAGE_CUDA_EMULATION_ORDER=reverse: a GPU may run them in any order, so
// a read of what another thread writes without a barrier between (or of
// what another block writes) gives the right answer in at most one of the
// two orders when the writer's turn decides it, and CI runs the tests in
// both.
#pragma once

#include <cuda_runtime_api.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <math.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "tests/executor/cuda/emulated/emulated_streams.h"

// The toolkit's host_defines.h gives these attributes a host compiler
// ignores or rejects; here they become plain C++.
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __forceinline__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline

// The built-in variables, set by the emulated launch for the thread it runs.
inline uint3 threadIdx;
inline uint3 blockIdx;
inline dim3 blockDim;
inline dim3 gridDim;

namespace stowage::cuda_emulation {

// The order a launch runs its blocks, and a block's threads between
// barriers, in: index order, or its reverse. From
// STOWAGE_CUDA_EMULATION_ORDER (forward, the default, or reverse), read
// once; any other value ends the process with exit status 2.
enum class Order : uint8_t { kForward, kReverse };
Order emulation_order();

// Runs `thread` once for every thread of every block of the grid, setting
// the built-in variables; __syncthreads suspends it until the block's
// other threads reach the barrier too. A barrier that some threads of a
// block reach and others do not (undefined on a GPU, a hang or worse)
// ends the process with a message naming the block and the threads.
void run_grid(dim3 grid, dim3 block, const std::function<void()>& thread);

// The barrier of the block being run.
void sync_block();

// What `kernel<<<grid, block, shared, stream>>>(args...)` becomes, with
// `thread` calling kernel(args...) (its arguments captured at the launch),
// run when its stream runs (emulated_streams.h).
inline void launch_kernel(const std::function<void()>& thread, dim3 grid, dim3 block,
                          size_t /*dynamic_shared*/ = 0, cudaStream_t stream = nullptr) {
  enqueue(stream, [thread, grid, block] { run_grid(grid, block, thread); });
}

}  // namespace stowage::cuda_emulation

inline void __syncthreads() {
  ::stowage::cuda_emulation::sync_block();
}

// One thread runs at a time, so the atomics are plain read-modify-writes.
template <class T>
T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}
template <class T>
T atomicOr(T* address, T value) {
  const T old = *address;
  *address = old | value;
  return old;
}
