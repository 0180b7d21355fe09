// The interpreter: runs one lowered schedule on a backend, op by op, one
// thread per lane (as a GPU runs one queue per CUDA stream), each lane in
// the schedule's issue order and every op after its dependencies. It gives
// each op kind its meaning on real memory - a layer's forward or backward,
// a copy over "PCIe", a block read or write, an Adam step - and reports
// every op's start and end and every allocation to a TimelineSink, so the
// measured timeline has the same shape as the simulator's prediction.
//
// It holds each op to what the schedule declares: an op that allocates or
// frees other bytes than its memory effects, or a compute op whose model
// does other matrix-product FLOPs than the op's (model/matmul.h), fails the
// run naming the op. It never touches device memory itself: every access
// is a backend call (docs/backend.md).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/schedule.h"
#include "core/tied_head.h"
#include "core/timeline.h"
#include "executor/backend.h"
#include "executor/layer_compute.h"
#include "executor/loss_scaler.h"
#include "executor/partition_homes.h"

namespace stowage::executor {

struct InterpretOptions {
  int64_t first_step = 0;      // global number of the schedule's step 0 (after a resume)
  int64_t time_origin_ns = 0;  // steady_clock time that is 0 on the timeline
  core::OpId first_op = 0;     // added to op ids reported to the sink
  core::Precision precision = core::Precision::kBf16;
  AdamHyper hyper;
  // The loss scaler as the schedule's step 0 finds it (fp16), and the
  // optimizer steps skipped for overflow before it.
  LossScaler scaler;
  bool dynamic_scaling = false;
  int64_t skipped_before = 0;
  int64_t accumulation = 1;  // micro-steps per step: their gradients are averaged
  double max_grad_norm = 0;  // clip to this global norm; 0: no clipping
  // The schedule's model's tied head (core::tied_head of the workload it
  // was lowered for): the final layer's compute ops widen the embedding
  // layer's parameters after their own, which lowering fetched for them.
  std::optional<core::TiedHead> tied_head;
  // Set (by a signal handler, say) to ask the run to stop: every step whose
  // update has begun finishes, nothing later starts. May be null.
  const std::atomic<int>* stop = nullptr;
  // Stop the run with a report of every lane when no op has finished for
  // this long (a hang is never silent).
  std::chrono::nanoseconds watchdog = std::chrono::seconds(60);
  core::TimelineSink* sink = nullptr;  // may be null; called under a lock
  // Called when a step's last op has finished, from the lane that ran it.
  std::function<void(int64_t step)> step_done;
  // Checkpoint ops: `snapshot` copies partition j's state after global
  // `step` into `into` (host memory the schedule allocates, its size the
  // op's bytes); `checkpoint` writes the snapshots of that step, by
  // partition. A failure stops the run like any failed op.
  std::function<core::Result<void>(int64_t step, size_t partition, std::span<std::byte> into)> snapshot;
  std::function<core::Result<void>(int64_t step, const std::vector<std::span<const std::byte>>& snapshots)>
      checkpoint;
};

class Interpreter {
 public:
  Interpreter(const core::Schedule& schedule, Backend& backend, PartitionHomes& homes, LayerCompute& model,
              InterpretOptions options);
  ~Interpreter();

  // Runs every op; the first failure stops all lanes and is returned with
  // the op it happened in. Homes are left as the last finished ops left them.
  [[nodiscard]] core::Result<void> run();

  // Whether any gradient of step s was not finite (fp16 overflow).
  [[nodiscard]] bool overflowed(int step) const;
  // The loss scaler after the schedule's last step, or after step `step`.
  [[nodiscard]] LossScaler final_scaler() const;
  [[nodiscard]] LossScaler scaler_after(int step) const;
  // Steps of this schedule up to and including `step` whose update was skipped.
  [[nodiscard]] int64_t skipped_through(int step) const;
  // How a run asked to stop ended: the schedule step after which nothing
  // ran, and whether the state is exactly that after it (every update up
  // to it landed), so that a checkpoint of it is good.
  struct Stopped {
    int after_step = -1;  // -1: before the first step's update
    bool consistent = false;
  };
  [[nodiscard]] std::optional<Stopped> stopped() const;
  // Steps whose speculative updates were rolled back and replayed.
  [[nodiscard]] int64_t replayed_steps() const;
  // Whether ops' spans came from the backend's clock (Backend::mark): the
  // memory samples the sink got are then at the host's times, and the
  // caller replays the schedule's effects over the new spans instead.
  [[nodiscard]] bool retimed() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace stowage::executor
