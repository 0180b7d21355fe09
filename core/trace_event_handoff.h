// Hands the trace walker's events (core/trace_events.h) to its visitor on a
// second thread, a batch at a time, while the walk reads on: on two cores
// the visitor's work (the GUI's model, compare's ops) overlaps the parse
// instead of adding to it (issue 18: a million-op trace opens in under 2 s).
// The visitor sees every event once, in order, on one thread at a time.
// Internal to the walker.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "core/trace_events.h"

namespace stowage::core {

// Events copied in order: the first `size` are filled; slots are reused, so
// that their vectors keep their capacity.
struct TraceEventRun {
  std::vector<TraceEvent> events;
  size_t size = 0;
  TraceEvent& add(const TraceEvent& event) {
    if (size == events.size()) {
      events.push_back(event);
    } else {
      events[size] = event;
    }
    return events[size++];
  }
};

class TraceEventHandoff {
 public:
  // `text` is the walked text: events handed over count their lines in it
  // with the visitor's own LineCounter (the walk's is not shared).
  TraceEventHandoff(TraceEventVisitor& visitor, std::string_view text);
  ~TraceEventHandoff();  // finish()
  TraceEventHandoff(const TraceEventHandoff&) = delete;
  TraceEventHandoff& operator=(const TraceEventHandoff&) = delete;

  // Copies `event` for the visitor (its views stay valid: they view the
  // text or the parser, which outlive the walk). False once the visitor has
  // thrown: the walk should stop.
  [[nodiscard]] bool add(const TraceEvent& event);
  // Hands over the events of `run`, numbered from `index_base` on, by
  // trading buffers instead of copying them: `run` comes back empty, its
  // slots another batch's. False once the visitor has thrown.
  [[nodiscard]] bool add_run(TraceEventRun& run, size_t index_base);
  // Whether the visitor has thrown (finish() returns what).
  [[nodiscard]] bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // Returns when the visitor has seen every event added, so that the caller
  // may call the visitor itself (the header comes on the walk's thread).
  void drain();
  // drain(), then stops the thread; what the visitor threw, if it did.
  [[nodiscard]] std::exception_ptr finish();

 private:
  using Batch = TraceEventRun;
  static constexpr size_t kBatchEvents = 2048;

  void send();  // hands `filling_` over, waiting while the previous one is pending
  void run();   // the visitor's thread

  TraceEventVisitor& visitor_;
  LineCounter lines_;  // used by the visitor's thread only
  Batch filling_;      // the walk's thread only
  std::mutex mutex_;
  std::condition_variable changed_;
  Batch pending_;  // guarded: handed over, not yet taken
  bool has_pending_ = false, busy_ = false, stop_ = false;
  std::exception_ptr thrown_;         // guarded
  std::atomic<bool> failed_ = false;  // thrown_ is set: read by add() and failed() without the lock
  std::thread thread_;                // last: starts once the rest is built
};

}  // namespace stowage::core
