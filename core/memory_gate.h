// When an op's memory effects apply, the one rule both interpreters follow
// (the simulator's engine, the executor's interpreter). Without a memory
// order (Schedule::memory_order empty) allocations apply as an op starts
// and frees as it ends. With one, each tier applies its effects in that
// order: an op whose allocations are not next on every tier they touch
// waits to start, as an allocator waits for the memory an earlier free
// returns; an op's frees that are not next are held until the effects
// before them have applied (they delay no work). A tier then goes through
// the same sequence of bytes in use, so the same peak, however fast each
// lane runs; an order taken from a prediction (core::memory_order_of)
// leaves that prediction as it was and can never wait for ever (every wait
// is on an event the prediction had already passed).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/schedule.h"

namespace stowage::core {

class MemoryGate {
 public:
  // `schedule` must outlive the gate; its memory order must be valid
  // (core::validate).
  explicit MemoryGate(const Schedule& schedule);

  // Called for each memory event as it applies, in order.
  using Apply = std::function<void(const MemoryStep&)>;

  // May `op` start now, as far as memory goes?
  [[nodiscard]] bool may_start(OpId op) const;
  // What `op` waits for when it may not start: the first effect before its
  // allocations, on a tier they touch, that has not applied yet.
  [[nodiscard]] std::optional<MemoryStep> waits_for(OpId op) const;
  // `op` starts (may_start was true): its allocations apply.
  void started(OpId op, const Apply& apply);
  // `op` ended: its frees apply now or once the effects before them have.
  void ended(OpId op, const Apply& apply);
  // `op` will never run (a run stopped before its step): its events count
  // as applied, with no effect, so nothing waits for them.
  void abandon(OpId op, const Apply& apply);

 private:
  static constexpr int32_t kNone = -1;
  struct Event {
    MemoryStep step;
    uint8_t tiers = 0;  // bit per Tier its effects touch
    bool ready = false;  // its op ended (a free) or was abandoned
    bool abandoned = false;
  };
  [[nodiscard]] bool next_on_its_tiers(int32_t event) const;
  void take(int32_t event, const Apply& apply);
  void drain(const Apply& apply);

  const Schedule& schedule_;
  bool ordered_ = false;
  std::vector<Event> events_;                   // Schedule::memory_order's
  std::vector<int32_t> start_of_, end_of_;      // event index by op, or kNone
  std::array<std::vector<int32_t>, 3> queue_;   // per tier: its events in order
  std::array<size_t, 3> next_{};                // per tier: the next to apply
};

// What is wrong with `schedule.memory_order` (empty when nothing): every op
// with allocations has one start step and every op with frees one end
// step, a start before its end, no step for an op without such effects,
// and the ops can all run under it (no allocation waits for an effect that
// can only come after it). core::validate includes it.
[[nodiscard]] std::vector<std::string> validate_memory_order(const Schedule& schedule);

}  // namespace stowage::core
