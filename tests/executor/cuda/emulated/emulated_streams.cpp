// emulated_streams.h: each stream a queue of work, run by the host thread
// that waits for it. A wait on another stream's point runs that stream up
// to the point first; the point was enqueued before the wait, so the work
// it needs cannot be waiting on the work that runs it (no cycle).
#include "tests/executor/cuda/emulated/emulated_streams.h"

#include <deque>
#include <mutex>
#include <set>
#include <utility>

namespace stowage::cuda_emulation {
namespace {

struct Queue {
  std::deque<std::function<void()>> work;  // not yet started, in order
  uint64_t enqueued = 0;                   // items ever enqueued
  [[nodiscard]] uint64_t started() const { return enqueued - work.size(); }
};

// Recursive: an item that waits for another stream runs that stream's work
// on the same thread.
std::recursive_mutex streams_mutex;
std::set<Queue*>& queues() {
  static std::set<Queue*> all;
  return all;
}

void push(Queue& q, std::function<void()> work) {
  q.work.push_back(std::move(work));
  ++q.enqueued;
}

// Taken off before it runs: an item that runs other streams sees its own
// as started.
void run_queue_until(Queue& q, uint64_t upto) {
  while (q.started() < upto) {
    std::function<void()> item = std::move(q.work.front());
    q.work.pop_front();
    item();
  }
}

void reach(StreamPoint& point) {
  point.at = std::chrono::steady_clock::now();
  point.reached = true;
}

}  // namespace

cudaStream_t create_stream() {
  const std::scoped_lock lock(streams_mutex);
  auto* q = new Queue;
  queues().insert(q);
  return reinterpret_cast<cudaStream_t>(q);
}

void destroy_stream(cudaStream_t stream) {
  const std::scoped_lock lock(streams_mutex);
  auto* q = reinterpret_cast<Queue*>(stream);
  run_queue_until(*q, q->enqueued);
  queues().erase(q);
  delete q;
}

void enqueue(cudaStream_t stream, std::function<void()> work) {
  if (stream == nullptr) {
    work();
    return;
  }
  const std::scoped_lock lock(streams_mutex);
  push(*reinterpret_cast<Queue*>(stream), std::move(work));
}

std::shared_ptr<StreamPoint> mark(cudaStream_t stream) {
  auto point = std::make_shared<StreamPoint>();
  if (stream == nullptr) {
    reach(*point);
    return point;
  }
  const std::scoped_lock lock(streams_mutex);
  auto* q = reinterpret_cast<Queue*>(stream);
  push(*q, [point] { reach(*point); });
  point->queue = q;
  point->upto = q->enqueued;
  return point;
}

void run_until(const std::shared_ptr<StreamPoint>& point) {
  const std::scoped_lock lock(streams_mutex);
  // A reached point's stream may be gone (destroyed after running it all).
  if (!point->reached) run_queue_until(*static_cast<Queue*>(point->queue), point->upto);
}

void wait_for(cudaStream_t stream, std::shared_ptr<StreamPoint> point) {
  enqueue(stream, [point = std::move(point)] { run_until(point); });
}

void run_stream(cudaStream_t stream) {
  if (stream == nullptr) return;
  const std::scoped_lock lock(streams_mutex);
  auto* q = reinterpret_cast<Queue*>(stream);
  run_queue_until(*q, q->enqueued);
}

void run_all_streams() {
  // Work is enqueued only by the host, under this lock: running one
  // stream's may run others' but adds to none, so one pass empties all.
  const std::scoped_lock lock(streams_mutex);
  for (Queue* q : queues()) run_queue_until(*q, q->enqueued);
}

}  // namespace stowage::cuda_emulation
