// cuda_emulation.h's grid: blocks one after another, a block's threads as
// fibers (ucontext) switched at __syncthreads. Most kernels never reach a
// barrier, and switching contexts costs a system call, so a block's thread
// 0 runs as a fiber first: if it ends without a barrier, a correct kernel's
// other threads reach none either (a __syncthreads must be reached by all
// of a block's threads or none), and every other thread of the grid runs as
// a plain call. One that then reaches a barrier is the divergence that
// would hang a GPU, and is reported.
#include <ucontext.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "tests/executor/cuda/emulated/cuda_emulation.h"

namespace stowage::cuda_emulation {
namespace {

constexpr size_t kStackBytes = 256 * 1024;  // the sanitizers' frames included

enum class State { kRunning, kAtBarrier, kDone };

struct Fiber {
  ucontext_t context{};
  std::unique_ptr<char[]> stack;
  State state = State::kRunning;
};

struct Grid {
  const std::function<void()>* thread = nullptr;
  ucontext_t scheduler{};
  std::vector<Fiber> fibers;  // one per thread of the block, stacks reused block to block
  int current = -1;           // the fiber running, or -1 for a plain call
  bool barrier_seen = false;  // by thread 0 of the first block
};

Grid* running = nullptr;  // the grid being run (launches do not nest)

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr,
               "cuda emulation: %s (block %u,%u,%u thread %u,%u,%u): on a GPU this barrier would hang or "
               "corrupt the block\n",
               what, blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z);
  std::abort();
}

void set_thread(const dim3& block, unsigned t) {
  threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
}

void fiber_entry() {
  Grid& g = *running;
  (*g.thread)();
  g.fibers[static_cast<size_t>(g.current)].state = State::kDone;
  // Returning resumes uc_link: the scheduler.
}

void start_fiber(Grid& g, unsigned t) {
  Fiber& f = g.fibers[t];
  if (!f.stack) f.stack = std::make_unique<char[]>(kStackBytes);
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = f.stack.get();
  f.context.uc_stack.ss_size = kStackBytes;
  f.context.uc_link = &g.scheduler;
  makecontext(&f.context, fiber_entry, 0);
  f.state = State::kRunning;
}

void resume(Grid& g, const dim3& block, unsigned t) {
  set_thread(block, t);
  g.current = static_cast<int>(t);
  swapcontext(&g.scheduler, &g.fibers[t].context);
  g.current = -1;
}

// The block's threads as fibers, phase by phase: each running fiber runs to
// its next barrier or its end; when all have, those at the barrier run on.
// A phase that ends with some threads at a barrier and others ended is a
// divergent barrier. Fibers already at a barrier wait for the next phase.
void run_phases(Grid& g, const dim3& block, unsigned threads) {
  for (;;) {
    for (unsigned t = 0; t < threads; ++t) {
      if (g.fibers[t].state == State::kRunning) resume(g, block, t);
    }
    unsigned waiting = 0;
    for (unsigned t = 0; t < threads; ++t) waiting += g.fibers[t].state == State::kAtBarrier ? 1 : 0;
    if (waiting == 0) return;
    for (unsigned t = 0; t < threads; ++t) {
      if (g.fibers[t].state == State::kDone) {
        set_thread(block, t);
        fail("__syncthreads reached by some threads of a block after this one had ended");
      }
      g.fibers[t].state = State::kRunning;
    }
  }
}

}  // namespace

void sync_block() {
  Grid* g = running;
  if (g == nullptr) fail("__syncthreads outside a kernel");
  if (g->current < 0) fail("__syncthreads reached by a thread although thread 0 of block 0 reached none");
  g->barrier_seen = true;
  Fiber& f = g->fibers[static_cast<size_t>(g->current)];
  f.state = State::kAtBarrier;
  swapcontext(&f.context, &g->scheduler);
}

void run_grid(dim3 grid, dim3 block, const std::function<void()>& thread) {
  const unsigned threads = block.x * block.y * block.z;
  const unsigned blocks = grid.x * grid.y * grid.z;
  if (threads == 0 || blocks == 0 || threads > 1024) {
    std::fprintf(stderr, "cuda emulation: a launch of %u blocks of %u threads (a GPU refuses it)\n", blocks, threads);
    std::abort();
  }
  if (running != nullptr) fail("a launch from inside a kernel");
  Grid g;
  g.thread = &thread;
  g.fibers.resize(threads);
  running = &g;
  gridDim = grid;
  blockDim = block;
  for (unsigned b = 0; b < blocks; ++b) {
    blockIdx = {b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y)};
    if (b == 0) {
      // Thread 0 alone first, as a fiber: does the kernel reach a barrier?
      start_fiber(g, 0);
      resume(g, block, 0);
      if (g.fibers[0].state == State::kAtBarrier) {
        // It does: thread 0 waits at its first barrier for the others.
        for (unsigned t = 1; t < threads; ++t) start_fiber(g, t);
        run_phases(g, block, threads);
        continue;
      }
      for (unsigned t = 1; t < threads; ++t) {
        set_thread(block, t);
        thread();
      }
    } else if (g.barrier_seen) {
      for (unsigned t = 0; t < threads; ++t) start_fiber(g, t);
      run_phases(g, block, threads);
    } else {
      for (unsigned t = 0; t < threads; ++t) {
        set_thread(block, t);
        thread();
      }
    }
  }
  running = nullptr;
}

}  // namespace stowage::cuda_emulation
