// A timeline: when each op of a schedule ran and how much memory each tier
// held over time. The simulator predicts one and the executor measures one;
// both report through a TimelineSink (STYLE.md §14).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/schedule.h"

namespace stowage::core {

// Nanoseconds since the start of the schedule. Integer, so the same inputs
// give a byte-identical timeline (STYLE.md §5).
using SimTime = int64_t;

// The device queue an NVMe op kept: block requests of its direction in
// flight (its own and other ops') from its first request to its last
// completion; the most at once, and the time-weighted mean. Measured by the
// executor; the plan's nvme_queue_depth is what it should reach.
struct QueueDepth {
  int max = 0;
  double mean = 0;
};

struct OpSpan {
  SimTime start = 0;
  SimTime end = 0;
  int slot = 0;  // which of a lane's concurrent slots ran it (0 for streams)
  std::optional<QueueDepth> queue_depth;  // NVMe ops of a measured timeline
};

struct MemorySample {
  SimTime time;
  Tier tier;
  Bytes bytes;  // in use on the tier from `time` on, per rank
};

struct Timeline {
  std::vector<OpSpan> spans;          // indexed by OpId
  std::vector<MemorySample> memory;   // in time order
};

class TimelineSink {
 public:
  virtual ~TimelineSink() = default;
  virtual void op_started(OpId op, SimTime at, int slot) = 0;
  virtual void op_finished(OpId op, SimTime at) = 0;
  virtual void memory_changed(Tier tier, SimTime at, Bytes in_use) = 0;
  // Between an NVMe op's start and finish, what its I/O kept in flight.
  virtual void op_queue_depth(OpId /*op*/, QueueDepth /*depth*/) {}
  // An op's span as the device's clock measured it, after the host's
  // op_started and op_finished (a backend that only enqueues).
  virtual void op_retimed(OpId /*op*/, SimTime /*start*/, SimTime /*end*/) {}
};

// Collects everything into a Timeline.
class TimelineRecorder final : public TimelineSink {
 public:
  explicit TimelineRecorder(size_t op_count) { timeline_.spans.resize(op_count); }
  // Room for more ops, for a run whose schedules come one after another.
  void grow(size_t op_count) { timeline_.spans.resize(op_count); }
  void op_started(OpId op, SimTime at, int slot) override {
    timeline_.spans[static_cast<size_t>(op)].start = at;
    timeline_.spans[static_cast<size_t>(op)].slot = slot;
  }
  void op_finished(OpId op, SimTime at) override { timeline_.spans[static_cast<size_t>(op)].end = at; }
  void op_retimed(OpId op, SimTime start, SimTime end) override {
    timeline_.spans[static_cast<size_t>(op)].start = start;
    timeline_.spans[static_cast<size_t>(op)].end = end;
  }
  // The memory samples from `first` on, replaced (a run's retimed segment's).
  void replace_memory_from(size_t first, std::vector<MemorySample> samples) {
    timeline_.memory.resize(std::min(first, timeline_.memory.size()));
    timeline_.memory.insert(timeline_.memory.end(), samples.begin(), samples.end());
  }
  void op_queue_depth(OpId op, QueueDepth depth) override {
    timeline_.spans[static_cast<size_t>(op)].queue_depth = depth;
  }
  void memory_changed(Tier tier, SimTime at, Bytes in_use) override {
    timeline_.memory.push_back({at, tier, in_use});
  }
  [[nodiscard]] const Timeline& timeline() const { return timeline_; }
  Timeline take() { return std::move(timeline_); }

 private:
  Timeline timeline_;
};

}  // namespace stowage::core
