// Two batches change hands: the walk fills one while the visitor's thread
// works through the other; a swap under the mutex passes them back and
// forth, so slots and their vectors are reused rather than reallocated.
#include "core/trace_event_handoff.h"

#include <utility>

namespace stowage::core {

TraceEventHandoff::TraceEventHandoff(TraceEventVisitor& visitor, std::string_view text)
    : visitor_(visitor), lines_(text), thread_([this] { run(); }) {}

TraceEventHandoff::~TraceEventHandoff() {
  static_cast<void>(finish());
}

bool TraceEventHandoff::add(const TraceEvent& event) {
  filling_.add(event).lines = &lines_;
  if (filling_.size == kBatchEvents) send();
  return !failed_.load(std::memory_order_relaxed);
}

bool TraceEventHandoff::add_run(TraceEventRun& run, size_t index_base) {
  for (size_t i = 0; i < run.size; ++i) {
    run.events[i].index += index_base;
    run.events[i].lines = &lines_;
  }
  if (filling_.size > 0) send();  // what came before goes first
  std::swap(filling_, run);
  run.size = 0;
  if (filling_.size > 0) send();
  return !failed_.load(std::memory_order_relaxed);
}

void TraceEventHandoff::send() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !has_pending_; });
  std::swap(filling_, pending_);  // filling_ gets the batch the visitor emptied last
  filling_.size = 0;
  has_pending_ = true;
  changed_.notify_all();
}

void TraceEventHandoff::drain() {
  if (filling_.size > 0) send();
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !has_pending_ && !busy_; });
}

std::exception_ptr TraceEventHandoff::finish() {
  if (!thread_.joinable()) return thrown_;
  drain();
  {
    const std::scoped_lock lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
  return thrown_;
}

void TraceEventHandoff::run() {
  Batch working;
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return has_pending_ || stop_; });
    if (!has_pending_) return;
    std::swap(working, pending_);
    has_pending_ = false, busy_ = true;
    const bool skip = thrown_ != nullptr;  // after a throw the walk stops; the rest is not shown
    changed_.notify_all();
    lock.unlock();
    std::exception_ptr thrown;
    if (!skip) {
      try {
        for (size_t i = 0; i < working.size; ++i) visitor_.event(working.events[i]);
      } catch (...) {
        thrown = std::current_exception();
      }
    }
    working.size = 0;
    lock.lock();
    if (thrown) thrown_ = thrown, failed_ = true;
    busy_ = false;
    changed_.notify_all();
  }
}

}  // namespace stowage::core
