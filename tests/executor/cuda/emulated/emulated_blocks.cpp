// cuda_emulation.h's grid: blocks one after another, a block's threads as
// fibers (Boost.Context: glibc's swapcontext makes a system call a switch,
// which was three quarters of training the tiny GPT here) switched at
// __syncthreads. Most kernels never reach a barrier, so the first thread
// run (of the first block run) runs as a fiber first: if it ends without a
// barrier, a correct kernel's other threads reach none either (a
// __syncthreads must be reached by all of a block's threads or none), and
// every other thread of the grid runs as a plain call. One that then
// reaches a barrier is the divergence that would hang a GPU, and is
// reported.
//
// The order blocks and threads run in is forward (index order) or reverse
// (STOWAGE_CUDA_EMULATION_ORDER). A missing barrier or a block reading what
// another block writes changes a result in one order or the other, where a
// GPU would run them in either (cuda_emulation.h).
#include <boost/context/fiber.hpp>
#include <boost/context/pooled_fixedsize_stack.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "tests/executor/cuda/emulated/cuda_emulation.h"

namespace stowage::cuda_emulation {
namespace {

constexpr size_t kStackBytes = 64 * 1024;  // a kernel's frames and the std::function's

enum class State { kRunning, kAtBarrier, kDone };

namespace context = boost::context;

// One thread of the block for the whole grid: it runs the kernel for each
// block the scheduler resumes it in, and stops at each barrier and end.
struct Fiber {
  context::fiber self;       // the thread, where it stopped
  context::fiber scheduler;  // what resumes the grid when it stops
  State state = State::kRunning;
};

Order order_from_environment() {
  const char* value = std::getenv("STOWAGE_CUDA_EMULATION_ORDER");
  if (value == nullptr || std::strcmp(value, "forward") == 0) return Order::kForward;
  if (std::strcmp(value, "reverse") == 0) return Order::kReverse;
  std::fprintf(stderr, "cuda emulation: STOWAGE_CUDA_EMULATION_ORDER=%s: not an order (forward or reverse)\n",
               value);
  std::exit(2);
}

// 0, 1, ..., n - 1 in the order they run.
std::vector<unsigned> run_order(unsigned n) {
  std::vector<unsigned> out(n);
  for (unsigned i = 0; i < n; ++i) out[i] = emulation_order() == Order::kForward ? i : n - 1 - i;
  return out;
}

struct Grid {
  Grid(const std::function<void()>& body, const dim3& block)
      : thread(&body), stacks(kStackBytes), order(run_order(block.x * block.y * block.z)) {
    const unsigned threads = block.x * block.y * block.z;
    fibers.resize(threads);
    index.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
      index.push_back({t % block.x, (t / block.x) % block.y, t / (block.x * block.y)});
  }
  const std::function<void()>* thread;
  context::pooled_fixedsize_stack stacks;
  std::vector<Fiber> fibers;    // started on first use
  std::vector<uint3> index;     // threadIdx of each
  std::vector<unsigned> order;  // the threads of a block, in the order they run
  int current = -1;             // the fiber running, or -1 for a plain call
  bool barrier_seen = false;    // by the first thread run
  bool finished = false;        // the fibers leave their loops
};

// The built-in variables and __shared__ statics are the process's, and the
// backend's lanes launch from several host threads: one grid runs at a
// time (on a GPU, kernels of different streams may overlap; running them
// one after another is one of the orders it may choose).
std::mutex one_grid_at_a_time;
Grid* running = nullptr;              // the grid being run, under the mutex
thread_local bool launching = false;  // this host thread is running a grid

constexpr const char* kWouldHang = ": on a GPU this barrier would hang or corrupt the block";

[[noreturn]] void fail(const char* what, const char* consequence = "") {
  std::fprintf(stderr, "cuda emulation: %s (block %u,%u,%u thread %u,%u,%u)%s\n", what, blockIdx.x,
               blockIdx.y, blockIdx.z, threadIdx.x, threadIdx.y, threadIdx.z, consequence);
  std::abort();
}

// The block's threads but the first run, in the order they run.
std::vector<unsigned> all_but_the_first(const Grid& g) {
  return {g.order.begin() + 1, g.order.end()};
}

// Runs thread t as a fiber to its next barrier or its end (starting it
// first, or for a new block).
void resume(Grid& g, unsigned t) {
  Fiber& f = g.fibers[t];
  if (!f.self) {
    f.self = context::fiber(std::allocator_arg, g.stacks, [&g, t](context::fiber&& scheduler) {
      Fiber& me = g.fibers[t];
      me.scheduler = std::move(scheduler);
      while (!g.finished) {
        (*g.thread)();
        me.state = State::kDone;
        me.scheduler = std::move(me.scheduler).resume();
      }
      return std::move(me.scheduler);
    });
  }
  threadIdx = g.index[t];
  f.state = State::kRunning;
  g.current = static_cast<int>(t);
  f.self = std::move(f.self).resume();
  g.current = -1;
}

// The block's threads as fibers, phase by phase: each runs to its next
// barrier or its end; when all wait at a barrier, they run on. A phase
// that ends with some at a barrier and others ended is a divergent
// barrier. `runnable` run in the first phase (any other thread is already
// waiting at the barrier).
void run_phases(Grid& g, std::vector<unsigned> runnable) {
  const size_t threads = g.fibers.size();
  std::vector<unsigned> waiting;
  size_t already_waiting = threads - runnable.size();
  for (;;) {
    waiting.clear();
    bool ended = false;
    for (unsigned t : runnable) {
      resume(g, t);
      if (g.fibers[t].state == State::kAtBarrier) {
        waiting.push_back(t);
      } else {
        ended = true;
      }
    }
    if (waiting.empty() && already_waiting == 0) return;
    if (ended) {
      for (unsigned t = 0; t < threads; ++t) {
        if (g.fibers[t].state == State::kDone) {
          threadIdx = g.index[t];
          fail("__syncthreads reached by some threads of a block after this one had ended", kWouldHang);
        }
      }
    }
    if (already_waiting != 0) waiting = g.order;
    already_waiting = 0;
    runnable.swap(waiting);
  }
}

// The block's threads from the `skip`th run on, as plain calls.
void run_plain(Grid& g, size_t skip) {
  for (size_t i = skip; i < g.order.size(); ++i) {
    threadIdx = g.index[g.order[i]];
    (*g.thread)();
  }
}

}  // namespace

Order emulation_order() {
  static const Order order = order_from_environment();
  return order;
}

void sync_block() {
  if (!launching) fail("__syncthreads outside a kernel");
  Grid* g = running;
  if (g->current < 0)
    fail("__syncthreads reached by a thread although the first thread run reached none", kWouldHang);
  g->barrier_seen = true;
  Fiber& f = g->fibers[static_cast<size_t>(g->current)];
  f.state = State::kAtBarrier;
  f.scheduler = std::move(f.scheduler).resume();
}

void run_grid(dim3 grid, dim3 block, const std::function<void()>& thread) {
  const unsigned threads = block.x * block.y * block.z;
  const unsigned blocks = grid.x * grid.y * grid.z;
  if (threads == 0 || blocks == 0 || threads > 1024) {
    std::fprintf(stderr, "cuda emulation: a launch of %u blocks of %u threads (a GPU refuses it)\n", blocks,
                 threads);
    std::abort();
  }
  if (launching) fail("a launch from inside a kernel");
  const std::lock_guard lock(one_grid_at_a_time);
  launching = true;
  Grid g(thread, block);
  running = &g;
  gridDim = grid;
  blockDim = block;
  const std::vector<unsigned> block_order = run_order(blocks);
  for (unsigned b : block_order) {
    blockIdx = {b % grid.x, (b / grid.x) % grid.y, b / (grid.x * grid.y)};
    if (b == block_order.front()) {
      // The first thread alone first, as a fiber: does the kernel reach a barrier?
      const unsigned first = g.order.front();
      resume(g, first);
      if (g.fibers[first].state == State::kAtBarrier) {
        run_phases(g, all_but_the_first(g));  // the first waits at its first barrier
      } else {
        run_plain(g, 1);
      }
    } else if (g.barrier_seen) {
      run_phases(g, g.order);
    } else {
      run_plain(g, 0);
    }
  }
  // Each started fiber waits in its loop after its last block: let it end.
  g.finished = true;
  for (Fiber& f : g.fibers) {
    if (f.self) f.self = std::move(f.self).resume();
  }
  running = nullptr;
  launching = false;
}

}  // namespace stowage::cuda_emulation
