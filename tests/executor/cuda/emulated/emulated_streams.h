// The emulated device's streams (cuda_emulation.h): work enqueued on a
// stream the code created runs only when the host waits for it, or when
// work the host waits for waits for it (an event). So the device is as slow
// as it may be: a kernel that reads what another stream writes, with no
// event between, runs before that write, as it may on a GPU when the host
// races ahead (--enqueue-only), and the tests of the CUDA backend see the
// wrong numbers. What a GPU would also make the host wait for (a copy
// into pageable memory, cudaFree, cudaFreeHost) waits here too; the legacy
// default stream runs its work at once (the project's streams are
// non-blocking, so nothing orders the two).
//
// One mutex orders the streams' work: a host thread that waits runs the
// work, one item at a time, in each stream's order.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace stowage::cuda_emulation {

// A point in a stream's work: what an event records.
struct StreamPoint {
  void* queue = nullptr;                     // the stream's (nullptr: the default stream, whose work has run)
  uint64_t upto = 0;                         // the items enqueued before it
  std::chrono::steady_clock::time_point at;  // the host's time when the work before it had run
  std::atomic<bool> reached = false;         // set after `at`; read by any host thread
};

cudaStream_t create_stream();
// Runs what is enqueued on it, then destroys it.
void destroy_stream(cudaStream_t stream);

// Runs `work` on `stream`: at once on the default stream (nullptr), else
// when something waits for the stream.
void enqueue(cudaStream_t stream, std::function<void()> work);

// A point after everything enqueued on `stream` so far.
std::shared_ptr<StreamPoint> mark(cudaStream_t stream);
// Runs the work of the point's stream up to it.
void run_until(const std::shared_ptr<StreamPoint>& point);
// Makes `stream`'s later work wait for the point (cudaStreamWaitEvent).
void wait_for(cudaStream_t stream, std::shared_ptr<StreamPoint> point);

// Runs everything enqueued on `stream`, or on every stream.
void run_stream(cudaStream_t stream);
void run_all_streams();

}  // namespace stowage::cuda_emulation
