#include "executor/interpreter.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

#include "core/memory_gate.h"
#include "executor/compute_footprint.h"
#include "executor/gradient_divisor.h"
#include "executor/lane_order.h"
#include "executor/model/kernel_scratch.h"
#include "executor/model/matmul.h"
#include "executor/square_sum.h"

namespace stowage::executor {
namespace {

using core::Lane;
using core::Op;
using core::OpKind;
using core::Tier;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Buffers in flight for one partition, in the order their producers ran,
// each tagged with the schedule step it belongs to. Producers and consumers
// of one kind of buffer follow the schedule's dependencies, so first in is
// first out; a reader that needs one step's buffer asks by step.
class BufferQueue {
 public:
  void push(int step, Buffer b) {
    std::lock_guard lock(mutex_);
    queue_.push_back({step, std::move(b)});
  }
  // The oldest buffer, left in place (a consumer that does not free it).
  core::Result<Buffer*> front(std::string_view what) {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return missing(what);
    return &queue_.front().buffer;
  }
  core::Result<Buffer*> back(std::string_view what) {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return missing(what);
    return &queue_.back().buffer;
  }
  // The newest buffer of schedule step `step`, left in place.
  core::Result<Buffer*> of_step(int step, std::string_view what) {
    std::lock_guard lock(mutex_);
    for (auto it = queue_.rbegin(); it != queue_.rend(); ++it) {
      if (it->step == step) return &it->buffer;
    }
    return missing(what);
  }
  // Removes and returns the newest buffer of schedule step `step`.
  core::Result<Buffer> take(int step, std::string_view what) {
    std::lock_guard lock(mutex_);
    for (auto it = queue_.rbegin(); it != queue_.rend(); ++it) {
      if (it->step != step) continue;
      Buffer b = std::move(it->buffer);
      queue_.erase(std::next(it).base());
      return b;
    }
    return missing(what);
  }
  core::Result<Buffer> pop(std::string_view what) {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return missing(what);
    Buffer b = std::move(queue_.front().buffer);
    queue_.pop_front();
    return b;
  }
  std::vector<Buffer> drain() {
    std::lock_guard lock(mutex_);
    std::vector<Buffer> out;
    for (Entry& e : queue_) out.push_back(std::move(e.buffer));
    queue_.clear();
    return out;
  }

 private:
  struct Entry {
    int step = 0;
    Buffer buffer;
  };
  static std::unexpected<core::Diagnostics> missing(std::string_view what) {
    return core::fail(
        {{}, "no " + std::string(what) + " in flight (a bug in stowage's schedule or executor)", ""});
  }
  std::mutex mutex_;
  std::deque<Entry> queue_;  // deque: references stay valid while others are pushed
};

struct PartitionFlight {
  BufferQueue fetched;        // param16 on the device, fetched for compute
  BufferQueue staged_params;  // param16 read from NVMe, on the host
  BufferQueue staged_states;  // master32|m|v read from NVMe, on the host
  BufferQueue grads_device;   // grad16 accumulated on the device
  BufferQueue grads_out;      // grad16 of one micro-step, waiting to be offloaded
  BufferQueue grads_host;     // grad16 accumulated on the host
  BufferQueue updated;        // param16 the CPU optimizer wrote (or offload_params staged), to publish
  BufferQueue updated_device;  // param16 a GPU optimizer wrote for a home off the GPU, to offload
};

// What one op allocated and released on each tier through the interpreter:
// checked against the op's memory effects when it ends, so the executor
// allocates exactly where the schedule says (a difference is a bug).
struct OpTally {
  std::array<int64_t, 3> allocated{}, released{};
};
thread_local OpTally* current_tally = nullptr;

// A compute op must do the FLOPs lowering declared for it, which the
// simulator times: the workload and the model count the same products.
core::Result<void> check_flops(const Op& op, int64_t computed) {
  if (static_cast<double>(computed) == op.flops.count()) return {};
  return core::fail({{},
                     "computed " + std::to_string(computed) +
                         " matrix-product FLOPs where the schedule declares " +
                         std::to_string(static_cast<int64_t>(op.flops.count())) +
                         " (a bug: the executor's model and the workload disagree on FLOPs)",
                     ""});
}

}  // namespace

struct Interpreter::State {
  const core::Schedule& schedule;
  Backend& backend;
  PartitionHomes& homes;
  LayerCompute& model;
  InterpretOptions options;

  std::vector<std::vector<size_t>> partitions_of_layer;
  std::vector<int64_t> layer_params;
  // Each layer's footprint, asked once: sizing it lays out what the layer
  // keeps, which is no work for every compute op.
  std::vector<core::ComputeFootprint> footprints;
  std::vector<PartitionFlight> flight;
  std::map<std::tuple<int, int, int>, std::vector<Buffer>> activations;  // (step, micro, layer)
  std::mutex activations_mutex;
  std::map<int, std::vector<Buffer>> snapshots;  // by step, then partition: a checkpoint being taken
  std::mutex snapshots_mutex;
  // Speculative updates (Policy::speculative_update): what accept() needs
  // to roll a partition's update back and replay it.
  struct Speculation {
    size_t partition = 0;
    Buffer backup;  // master32 | adam_m | adam_v before the update
    Buffer grads;   // the step's 16-bit gradients
  };
  std::map<int, std::vector<Speculation>> speculations;  // by step: updates not yet accepted
  std::atomic<int64_t> replayed_steps{0};
  // Stopping on request (options.stop): the last step an update has begun,
  // the step after which no op starts once asked, and how it ended.
  int updating_step = -1;
  std::optional<int> stop_after;
  std::optional<Interpreter::Stopped> stopped;
  std::mutex speculation_mutex;

  std::vector<uint8_t> done;
  // The schedule's edges across lanes, as the backend's events (backend.h):
  // an op that ops on other lanes depend on records one on its lane when it
  // ends, before it counts as done; each of those dependents has its own
  // lane wait on it before it starts, and the last of them lets it go.
  std::vector<Event> events;                 // by op
  std::vector<std::atomic<int>> waiting_on;  // by op: dependents on other lanes yet to wait
  // Where the backend only enqueues, each op's start and end as marks in
  // its lane's work (Backend::mark), resolved to the device's times when
  // the op's step has been issued, and reported as the op's span.
  std::vector<std::optional<TimeMark>> start_marks, end_marks;  // by op
  std::vector<std::vector<core::OpId>> ops_of_step;
  std::atomic<bool> retimed{false};
  // Per lane: its ops in issue order and the next to issue; per op: the
  // lane slot running it (for the watchdog's report).
  std::array<std::vector<core::OpId>, core::kLaneCount> lane_ops;
  std::array<size_t, core::kLaneCount> lane_next{};
  std::vector<int64_t> started_ns;  // 0 until the op starts
  // Per NVMe op: the device queue depth its I/O kept, for the sink; written
  // and read by the lane thread that runs the op.
  std::vector<std::optional<core::QueueDepth>> queue_depths;
  int64_t last_progress_ns = 0;  // when an op last finished (or the run began)
  int running_threads = 0;
  bool failed = false;
  core::Diagnostics error;
  std::mutex mutex;
  // Each lane's threads wait on their lane's variable for its next op, and
  // are woken only when that op may start (wake_ready_lanes). Waking every
  // lane thread at every op's start and end, as one shared variable did,
  // cost each op 0.1-0.5 ms on this 2-vCPU machine: a 1 KiB copy measured
  // 120-450 us, as the woken threads took the cores from the one running.
  std::array<std::condition_variable, core::kLaneCount> lane_ready;
  std::condition_variable changed;  // the watchdog: a thread left, a failure, a stop
  std::mutex sink_mutex;
  std::vector<std::atomic<int64_t>> remaining_in_step;
  std::vector<std::atomic<bool>> overflow;  // a gradient of step s was not finite
  std::vector<SquareSum> sum_squares;       // of step s's (still scaled) gradients, by the check ops
  std::mutex verdict_mutex;

  State(const core::Schedule& s, Backend& b, PartitionHomes& h, LayerCompute& m, InterpretOptions o)
      : schedule(s),
        backend(b),
        homes(h),
        model(m),
        options(std::move(o)),
        flight(h.all().size()),
        done(s.ops.size(), 0),
        events(s.ops.size()),
        waiting_on(s.ops.size()),
        start_marks(s.ops.size()),
        end_marks(s.ops.size()),
        ops_of_step(static_cast<size_t>(s.steps)),
        started_ns(s.ops.size(), 0),
        queue_depths(s.ops.size()),
        remaining_in_step(static_cast<size_t>(s.steps)),
        overflow(static_cast<size_t>(s.steps)),
        sum_squares(static_cast<size_t>(s.steps)),
        gate(s) {}

  [[nodiscard]] int64_t global(int step) const { return options.first_step + step; }
  // The parameter version the optimizer of `step` writes.
  [[nodiscard]] int64_t next_version(int step) const { return global(step) + homes.versions(); }
  PartitionHome& home(const Op& op) { return homes[static_cast<size_t>(op.partition)]; }
  PartitionFlight& in_flight(const Op& op) { return flight[static_cast<size_t>(op.partition)]; }

  // Memory in use by tier as the schedule's effects say, applied when the
  // memory gate lets them (core/memory_gate.h: allocations as ops start,
  // frees as they end or when the effects before them have applied), by
  // the rule the simulator applies them: what the run reports. The
  // backend's own buffers stay within it (OpTally, and allocate() checks),
  // allocated and released within the ops' spans.
  std::array<int64_t, 3> in_use{};
  core::MemoryGate gate;  // with `mutex` held
  // An op's start or end, and the memory effects the gate applies with it,
  // at one instant under one lock: the trace's op spans order the memory
  // samples exactly as they happened, so replaying the spans through the
  // schedule's effects (core::memory_events) gives the samples back.
  // Called with `mutex` held.
  void op_boundary(const Op& op, bool start, int slot) {
    std::lock_guard lock(sink_mutex);
    const int64_t at = now_ns() - options.time_origin_ns;
    if (start && options.sink != nullptr) options.sink->op_started(options.first_op + op.id, at, slot);
    const core::MemoryGate::Apply apply = [&](const core::MemoryStep& step) { apply_memory(step, at); };
    if (start) {
      gate.started(op.id, apply);
      return;
    }
    gate.ended(op.id, apply);
    if (options.sink != nullptr) {
      if (const auto& depth = queue_depths[static_cast<size_t>(op.id)])
        options.sink->op_queue_depth(options.first_op + op.id, *depth);
      options.sink->op_finished(options.first_op + op.id, at);
    }
  }
  // Ops that will never run (a stopped run's later steps not yet begun):
  // nothing waits for their memory. Called with `mutex` held.
  void abandon_after(int step) {
    std::lock_guard lock(sink_mutex);
    const int64_t at = now_ns() - options.time_origin_ns;
    const core::MemoryGate::Apply apply = [&](const core::MemoryStep& m) { apply_memory(m, at); };
    for (const Op& op : schedule.ops) {
      if (op.step > step && started_ns[static_cast<size_t>(op.id)] == 0) gate.abandon(op.id, apply);
    }
  }
  void apply_memory(const core::MemoryStep& step, int64_t at) {  // with sink_mutex held
    const Op& op = schedule.op(step.op);
    std::array<bool, 3> touched{};
    for (const core::MemoryEffect& e : step.start ? op.allocs : op.frees) {
      in_use[static_cast<size_t>(e.tier)] += (step.start ? 1 : -1) * e.bytes.count();
      touched[static_cast<size_t>(e.tier)] = true;
    }
    for (Tier tier : core::kAllTiers) {
      if (touched[static_cast<size_t>(tier)]) report_memory(tier, at);
    }
  }
  void report_memory(Tier tier, int64_t at) {  // with sink_mutex held
    if (options.sink == nullptr) return;
    options.sink->memory_changed(tier, at, core::Bytes(in_use[static_cast<size_t>(tier)]));
  }
  core::Result<void> check_tally(const Op& op, const OpTally& tally) const;
  core::Result<Buffer> allocate(Tier tier, int64_t bytes, std::string what) {
    auto b = backend.allocate(tier, bytes, std::move(what));
    if (b && current_tally != nullptr) current_tally->allocated[static_cast<size_t>(tier)] += bytes;
    return b;
  }
  void release(Buffer& b) {
    if (b.data != nullptr && current_tally != nullptr)
      current_tally->released[static_cast<size_t>(b.tier)] += b.bytes;
    backend.release(b);
  }

  core::Result<void> execute(const Op& op);
  core::Result<void> wait_for_other_lanes(const Op& op);
  // A mark of `op`'s start or end in its lane's work, where the backend gives marks.
  core::Result<void> mark(const Op& op, std::vector<std::optional<TimeMark>>& marks) {
    auto m = backend.mark(op.lane);
    if (!m) return std::unexpected(m.error());
    marks[static_cast<size_t>(op.id)] = std::move(*m);
    return {};
  }
  // Once step `step`'s ops have all been issued: their spans from the
  // device's clock (waiting for them to run), then the marks let go.
  core::Result<void> retime_step(int step);
  core::Result<void> record_for_other_lanes(const Op& op);
  // An NVMe op's own block I/O: keeps the depth it achieved for the trace.
  core::Result<void> moved(const Op& op, core::Result<core::QueueDepth> io) {
    if (!io) return std::unexpected(io.error());
    queue_depths[static_cast<size_t>(op.id)] = *io;
    return {};
  }
  // Block I/O done on behalf of another op (a replay's write-back).
  static core::Result<void> moved_aside(core::Result<core::QueueDepth> io) {
    if (!io) return std::unexpected(io.error());
    return {};
  }
  core::Result<void> compute(const Op& op);
  // The partitions whose param16 a compute op of `layer` widens, each with
  // the element offset of its first parameter in the fp32 workspace.
  [[nodiscard]] std::vector<std::pair<size_t, int64_t>> widened_partitions(int layer) const;
  core::Result<void> fetch(const Op& op);
  core::Result<void> publish(const Op& op);
  core::Result<void> offload_params(const Op& op);
  core::Result<void> offload(const Op& op);
  core::Result<void> optimize(const Op& op);
  core::Result<void> read_states(const Op& op);
  core::Result<void> write_states(const Op& op);
  core::Result<void> read_params(const Op& op);
  core::Result<void> write_params(const Op& op);
  core::Result<void> check_gradients(const Op& op);
  core::Result<void> snapshot(const Op& op);
  core::Result<void> accept(const Op& op);
  core::Result<void> replay(const Op& op, Speculation& x, bool skip, float divisor);
  OptimizerWork adam_work(const Op& op, const Buffer& states, const Buffer& grads, const Buffer& param16_out,
                          float divisor) const;
  // The divisor a speculative update assumes: no clipping.
  float carried_divisor(int step) const {
    return static_cast<float>(gradient_divisor(scale_of(step), options.accumulation, 0, 0));
  }
  core::Result<void> commit_checkpoint(const Op& op);
  // What the optimizer of `step` divides its 16-bit gradients by
  // (executor/gradient_divisor.h); final once the step's check ops ran,
  // which every optimizer op waits for.
  float gradient_divisor_of(int step) {
    double squares = 0;
    {
      std::lock_guard lock(verdict_mutex);
      squares = sum_squares[static_cast<size_t>(step)].value();
    }
    return static_cast<float>(
        gradient_divisor(scale_of(step), options.accumulation, squares, options.max_grad_norm));
  }
  // The loss scale of schedule step `step`: a pure function of the scaler
  // at step 0 and the overflows before `step`, which are final by then
  // (under fp16 each step's first backward waits for the previous step's
  // gradient check, a dependency of the schedule).
  float scale_of(int step) const {
    if (!options.dynamic_scaling) return 1.0f;
    return static_cast<float>(before(step).scaler.scale);
  }
  int64_t skipped_before(int step) const { return before(step).skipped; }
  // The scaler and the skipped steps as schedule step `step` finds them,
  // folded over the (final) verdicts before it once and kept: every op of a
  // long run asks, and refolding from step 0 each time is quadratic.
  struct Before {
    LossScaler scaler;
    int64_t skipped = 0;
  };
  Before before(int step) const {
    std::lock_guard lock(before_mutex);
    if (befores.empty()) befores.push_back({options.scaler, 0});
    while (static_cast<int>(befores.size()) <= step) {
      const bool overflowed = overflow[befores.size() - 1].load();
      Before next = befores.back();
      if (options.dynamic_scaling) next.scaler.update(overflowed);
      next.skipped += overflowed ? 1 : 0;
      befores.push_back(next);
    }
    return befores[static_cast<size_t>(step)];
  }
  mutable std::vector<Before> befores;  // by step
  mutable std::mutex before_mutex;
  void run_lane(Lane lane, int slot);
  void fail_with(const Op& op, core::Diagnostics d);
  [[nodiscard]] bool leaving(size_t lane) const;
  [[nodiscard]] bool may_proceed(size_t lane) const;
  void wake_ready_lanes();
  void wake_all_lanes();
  void wake_everyone();
  // Called with `mutex` held when nothing finished for options.watchdog:
  // every lane's running op and what its next op waits on.
  core::Diagnostics hang_report(int64_t now) const;
};

std::vector<std::pair<size_t, int64_t>> Interpreter::State::widened_partitions(int layer) const {
  std::vector<std::pair<size_t, int64_t>> out;
  for (size_t j : partitions_of_layer[static_cast<size_t>(layer)]) out.emplace_back(j, homes[j].part.first_param);
  const std::optional<core::TiedHead>& tied = options.tied_head;
  if (tied && tied->layer == layer) {
    // The tied head's table: the embedding layer's parameters, after the
    // layer's own (LayerCompute's contract; lowering fetched them for this op).
    for (size_t j : partitions_of_layer[static_cast<size_t>(tied->source)])
      out.emplace_back(j, layer_params[static_cast<size_t>(layer)] + homes[j].part.first_param);
  }
  return out;
}

core::Result<void> Interpreter::State::compute(const Op& op) {
  const auto layer = static_cast<size_t>(op.layer);
  const core::Precision p = options.precision;
  const std::vector<std::pair<size_t, int64_t>> widened = widened_partitions(op.layer);
  auto params = allocate(Tier::kGpu, 4 * widened_params(options.tied_head, layer_params, op.layer),
                         "fp32 workspace " + op.name);
  if (!params) return std::unexpected(params.error());
  // Widen the 16-bit parameters the op computes with, partition by
  // partition, from where they rest on the device or from their fetched copies.
  core::Result<void> result;
  for (const auto& [j, offset] : widened) {
    PartitionHome& h = homes[j];
    const Buffer* source = nullptr;
    if (h.policy.param16 == Tier::kGpu) {
      source = &h.param16[homes.slot(global(op.step))];
    } else {
      auto f = flight[j].fetched.front("fetched param16 " + h.name);
      if (!f) {
        release(*params);
        return std::unexpected(f.error());
      }
      source = *f;
    }
    if (result) result = backend.widen(op.lane, *source, *params, offset, p);
  }
  // The region the model's kernels draw their temporaries from, of the
  // size the layer declares for this kind of op.
  const bool backward = op.kind == OpKind::kBackward;
  const core::ComputeFootprint& footprint = footprints[layer];
  auto scratch = allocate(Tier::kGpu, (backward ? footprint.backward_scratch : footprint.forward_scratch).count(),
                          "kernel scratch " + op.name);
  if (!scratch) {
    release(*params);
    return std::unexpected(scratch.error());
  }
  const std::tuple key{op.step, op.micro_step, op.layer};
  int64_t computed = 0;  // the model's matrix-product FLOPs (model/matmul.h)
  if (!result) {
  } else if (op.kind == OpKind::kForward || op.kind == OpKind::kRecompute) {
    // What the layer keeps goes into a device region of the size the
    // schedule declares, allocated here and released at its backward.
    const std::string_view tag = op.kind == OpKind::kForward ? "activations " : "recomputed ";
    int64_t declared = 0;
    for (const core::MemoryEffect& e : op.allocs) {
      if (e.tensor.starts_with(tag)) declared += e.bytes.count();
    }
    auto region = allocate(Tier::kGpu, declared, std::string(tag) + op.name);
    if (!region) {
      release(*scratch);
      release(*params);
      return std::unexpected(region.error());
    }
    int64_t kept = 0;
    result = backend.compute(
        op.lane, op.name, {.params32 = &*params, .kept = &*region, .scratch = &*scratch},
        [&](const LayerWorkspace& w) {
          const model::ScratchRegion temporaries(w.scratch);
          const int64_t before = model::matmul_flops_on_this_thread();
          kept = op.kind == OpKind::kForward
                     ? model.forward(global(op.step), op.micro_step, op.layer, w.params32, w.kept)
                     : model.recompute(global(op.step), op.micro_step, op.layer, w.params32, w.kept);
          computed = model::matmul_flops_on_this_thread() - before;
        });
    if (result && kept != declared) {
      result = core::fail({{},
                           "kept " + std::to_string(kept) + " B where the schedule declares " +
                               std::to_string(declared) +
                               " B (a bug: the executor and lowering disagree on memory)",
                           ""});
    }
    std::lock_guard lock(activations_mutex);
    activations[key].push_back(std::move(*region));
  } else {
    auto grads = allocate(Tier::kGpu, 4 * layer_params[layer], "fp32 gradients " + op.name);
    if (!grads) {
      release(*scratch);
      release(*params);
      return std::unexpected(grads.error());
    }
    const float scale = scale_of(op.step);
    result = backend.zero(op.lane, *grads);
    if (result) {
      result = backend.compute(
          op.lane, op.name, {.params32 = &*params, .grads32 = &*grads, .scratch = &*scratch},
          [&](const LayerWorkspace& w) {
            const model::ScratchRegion temporaries(w.scratch);
            const int64_t before = model::matmul_flops_on_this_thread();
            model.backward(global(op.step), op.micro_step, op.layer, w.params32, w.grads32, scale);
            computed = model::matmul_flops_on_this_thread() - before;
          });
    }
    {
      std::lock_guard lock(activations_mutex);
      for (Buffer& a : activations[key]) release(a);
      activations.erase(key);
    }
    // The layer's gradient, partition by partition, in 16 bits: into the
    // device accumulator, or out towards the host.
    for (size_t j : partitions_of_layer[layer]) {
      if (!result) break;
      PartitionHome& h = homes[j];
      auto out = allocate(Tier::kGpu, 2 * h.params(), "grad16 " + h.name);
      if (!out) {
        result = std::unexpected(out.error());
        break;
      }
      result = backend.narrow(op.lane, *grads, h.part.first_param, *out, p);
      if (!result) {
        release(*out);
        break;
      }
      // Later micro-steps' gradients are added into the device accumulator
      // and released, as lowering declares.
      const bool accumulate = h.policy.gradients == Tier::kGpu && op.micro_step > 0;
      if (accumulate) {
        auto acc = flight[j].grads_device.of_step(op.step, "grad16 " + h.name);
        result = acc ? backend.accumulate(op.lane, **acc, *out, p) : std::unexpected(acc.error());
        release(*out);
        continue;
      }
      (h.policy.gradients == Tier::kGpu ? flight[j].grads_device : flight[j].grads_out)
          .push(op.step, std::move(*out));
    }
    release(*grads);
  }
  release(*scratch);
  release(*params);
  if (result) result = check_flops(op, computed);
  // A forward or backward frees the fetched copies it used; a recompute
  // leaves them for its backward.
  if (op.kind != OpKind::kRecompute) {
    for (const auto& w : widened) {
      const size_t j = w.first;
      if (homes[j].policy.param16 == Tier::kGpu) continue;
      auto f = flight[j].fetched.pop("fetched param16");
      if (f) release(*f);
    }
  }
  return result;
}

core::Result<void> Interpreter::State::fetch(const Op& op) {
  PartitionHome& h = home(op);
  Buffer staged;
  const Buffer* source = &h.param16[homes.slot(global(op.step))];
  if (h.policy.param16 == Tier::kNvme) {
    auto s = in_flight(op).staged_params.pop("staged param16 " + h.name);
    if (!s) return std::unexpected(s.error());
    staged = std::move(*s);
    source = &staged;
  }
  auto device = allocate(Tier::kGpu, 2 * h.params(), "fetched param16 " + h.name);
  if (!device) return std::unexpected(device.error());
  auto copied = backend.copy(op.lane, *device, 0, *source, 0, device->bytes);
  if (staged.data != nullptr) release(staged);
  if (!copied) {
    release(*device);
    return copied;
  }
  in_flight(op).fetched.push(op.step, std::move(*device));
  return {};
}

core::Result<void> Interpreter::State::publish(const Op& op) {
  PartitionHome& h = home(op);
  auto updated = in_flight(op).updated.pop("updated param16 " + h.name);
  if (!updated) return std::unexpected(updated.error());
  const Buffer& target = h.param16[homes.slot(next_version(op.step))];
  auto copied = backend.copy(op.lane, target, 0, *updated, 0, target.bytes);
  release(*updated);
  return copied;
}

// A GPU optimizer's updated parameters leave the device: into their CPU
// home, or into a host buffer that write_params stores on NVMe.
core::Result<void> Interpreter::State::offload_params(const Op& op) {
  PartitionHome& h = home(op);
  PartitionFlight& f = in_flight(op);
  auto updated = f.updated_device.pop("updated param16 " + h.name + " on the device");
  if (!updated) return std::unexpected(updated.error());
  core::Result<void> result;
  if (h.policy.param16 == Tier::kNvme) {
    auto host = allocate(Tier::kCpu, updated->bytes, "updated param16 " + h.name);
    if (!host)
      result = std::unexpected(host.error());
    else if (result = backend.copy(op.lane, *host, 0, *updated, 0, updated->bytes); result)
      f.updated.push(op.step, std::move(*host));
    else
      release(*host);
  } else {
    const Buffer& target = h.param16[homes.slot(next_version(op.step))];
    result = backend.copy(op.lane, target, 0, *updated, 0, target.bytes);
  }
  release(*updated);
  return result;
}

core::Result<void> Interpreter::State::offload(const Op& op) {
  PartitionHome& h = home(op);
  PartitionFlight& f = in_flight(op);
  auto out = f.grads_out.pop("grad16 " + h.name + " to offload");
  if (!out) return std::unexpected(out.error());
  core::Result<void> result;
  if (op.micro_step == 0) {
    auto host = allocate(Tier::kCpu, out->bytes, "grad16 " + h.name + " cpu");
    if (!host)
      result = std::unexpected(host.error());
    else if (result = backend.copy(op.lane, *host, 0, *out, 0, out->bytes); result)
      f.grads_host.push(op.step, std::move(*host));
    else
      release(*host);
  } else {
    // Accumulate on the host, rounding as the device accumulator does, so
    // that where gradients rest never changes the math.
    auto acc = f.grads_host.of_step(op.step, "grad16 " + h.name + " cpu");
    auto landed = allocate(Tier::kCpu, out->bytes, "grad16 " + h.name + " landing");
    if (!acc)
      result = std::unexpected(acc.error());
    else if (!landed)
      result = std::unexpected(landed.error());
    else if (result = backend.copy(op.lane, *landed, 0, *out, 0, out->bytes); result)
      result = backend.accumulate(op.lane, **acc, *landed, options.precision);
    if (landed) release(*landed);
  }
  release(*out);
  return result;
}

core::Result<void> Interpreter::State::optimize(const Op& op) {
  PartitionHome& h = home(op);
  PartitionFlight& f = in_flight(op);
  Buffer* states = &h.states;
  if (h.policy.optimizer_states == Tier::kNvme) {
    auto s = f.staged_states.front("staged states " + h.name);
    if (!s) return std::unexpected(s.error());
    states = *s;
  }
  // A speculative update (it allocates a rollback copy) runs before the
  // step's verdict: the gradients stay in flight for the check, and for a
  // replay until accept() takes them.
  const core::MemoryEffect* const rollback = core::rollback_copy(op);
  const bool speculative = rollback != nullptr;
  BufferQueue& grad_queue = h.policy.gradients == Tier::kGpu ? f.grads_device : f.grads_host;
  Buffer kept_grads;
  Buffer* grads = &kept_grads;
  if (speculative) {
    auto g = grad_queue.of_step(op.step, "grad16 " + h.name);
    if (!g) return std::unexpected(g.error());
    grads = *g;
  } else {
    auto g = grad_queue.pop("grad16 " + h.name);
    if (!g) return std::unexpected(g.error());
    kept_grads = std::move(*g);
  }
  // Where the new 16-bit parameters go: straight home when the optimizer
  // runs where they rest, else to a buffer beside the optimizer that a
  // later op publishes (a host buffer for a CPU optimizer, a device buffer
  // that offload_params copies off for a GPU one).
  const bool on_gpu = h.policy.optimizer == core::OptimizerDevice::kGpu;
  const bool direct = (h.policy.param16 == Tier::kCpu && !on_gpu) || (h.policy.param16 == Tier::kGpu && on_gpu);
  Buffer updated;
  const Buffer* out = &h.param16[homes.slot(next_version(op.step))];
  if (!direct) {
    auto u = allocate(on_gpu ? Tier::kGpu : Tier::kCpu, 2 * h.params(), "updated param16 " + h.name);
    if (!u) {
      if (!speculative) release(kept_grads);
      return std::unexpected(u.error());
    }
    updated = std::move(*u);
    out = &updated;
  }
  core::Result<void> result;
  // A speculative update keeps the states it overwrites and assumes no
  // overflow and no clipping until accept() knows.
  Buffer backup;
  if (speculative) {
    auto b = allocate(rollback->tier, rollback->bytes.count(), "rollback copy " + h.name);
    if (b) {
      backup = std::move(*b);
      result = backend.copy(op.lane, backup, 0, *states, 0, backup.bytes);
    } else {
      result = std::unexpected(b.error());
    }
  }
  if (!result) {
  } else if (speculative) {
    result = backend.optimizer_step(op.lane, adam_work(op, *states, *grads, *out, carried_divisor(op.step)));
  } else if (overflow[static_cast<size_t>(op.step)].load()) {
    // fp16 overflow: the step is skipped (GradScaler), parameters republished unchanged.
    result = backend.narrow(op.lane, *states, 0, *out, options.precision);
  } else {
    result =
        backend.optimizer_step(op.lane, adam_work(op, *states, *grads, *out, gradient_divisor_of(op.step)));
  }
  if (speculative && result) {
    std::lock_guard lock(speculation_mutex);
    speculations[op.step].push_back({static_cast<size_t>(op.partition), std::move(backup), {}});
  } else {
    if (backup.data != nullptr) release(backup);
    if (!speculative) release(kept_grads);
  }
  if (updated.data != nullptr) {
    if (result)
      (on_gpu ? f.updated_device : f.updated).push(op.step, std::move(updated));
    else
      release(updated);
  }
  return result;
}

core::Result<void> Interpreter::State::check_gradients(const Op& op) {
  // This lane's share of the verdict: the gradients resting on its tier.
  const Tier tier = op.lane == Lane::kCpuOptim ? Tier::kCpu : Tier::kGpu;
  SquareSum squares;
  bool finite = true;
  for (size_t j = 0; j < homes.all().size(); ++j) {
    PartitionHome& h = homes[j];
    if (h.policy.gradients != tier) continue;
    BufferQueue& q = tier == Tier::kGpu ? flight[j].grads_device : flight[j].grads_host;
    auto g = q.of_step(op.step, "grad16 " + h.name + " of step " + std::to_string(op.step));
    if (!g) return std::unexpected(g.error());
    auto stats = backend.gradient_stats(op.lane, **g, options.precision);
    if (!stats) return std::unexpected(stats.error());
    finite &= stats->finite;
    squares.add(stats->squares);
  }
  std::lock_guard lock(verdict_mutex);
  sum_squares[static_cast<size_t>(op.step)].add(squares);
  if (!finite) overflow[static_cast<size_t>(op.step)].store(true);
  return {};
}

core::Result<void> Interpreter::State::snapshot(const Op& op) {
  PartitionHome& h = home(op);
  auto copy = allocate(Tier::kCpu, op.bytes.count(), "checkpoint snapshot " + h.name);
  if (!copy) return std::unexpected(copy.error());
  if (options.snapshot) {
    if (auto r = options.snapshot(global(op.step), static_cast<size_t>(op.partition), copy->as<std::byte>());
        !r) {
      release(*copy);
      return r;
    }
  }
  std::lock_guard lock(snapshots_mutex);
  std::vector<Buffer>& of_step = snapshots[op.step];
  of_step.resize(homes.all().size());
  of_step[static_cast<size_t>(op.partition)] = std::move(*copy);
  return {};
}

core::Result<void> Interpreter::State::commit_checkpoint(const Op& op) {
  std::vector<Buffer> taken;
  {
    std::lock_guard lock(snapshots_mutex);
    taken = std::move(snapshots[op.step]);
    snapshots.erase(op.step);
  }
  std::vector<std::span<const std::byte>> views;
  for (const Buffer& b : taken) views.push_back(b.as<const std::byte>());
  core::Result<void> r =
      options.checkpoint ? options.checkpoint(global(op.step), views) : core::Result<void>{};
  for (Buffer& b : taken) release(b);
  return r;
}

OptimizerWork Interpreter::State::adam_work(const Op& op, const Buffer& states, const Buffer& grads,
                                            const Buffer& param16_out, float divisor) const {
  return {.states = &states,
          .state_precision = homes[static_cast<size_t>(op.partition)].state_precision,
          .grad16 = &grads,
          .param16_out = &param16_out,
          .precision = options.precision,
          .hyper = options.hyper,
          .step = global(op.step) + 1 - (options.skipped_before + skipped_before(op.step)),
          .grad_scale = divisor};
}

core::Result<void> Interpreter::State::accept(const Op& op) {
  std::vector<Speculation> taken;
  {
    std::lock_guard lock(speculation_mutex);
    taken = std::move(speculations[op.step]);
    speculations.erase(op.step);
  }
  // The speculation held when nothing overflowed and clipping left the
  // gradients as they were: the same divisor, hence the same arithmetic.
  const bool skip = overflow[static_cast<size_t>(op.step)].load();
  const float divisor = gradient_divisor_of(op.step);
  const bool held = !skip && divisor == carried_divisor(op.step);
  if (!held && !taken.empty()) ++replayed_steps;
  core::Result<void> result;
  for (Speculation& x : taken) {
    PartitionHome& h = homes[x.partition];
    PartitionFlight& f = flight[x.partition];
    auto g =
        (h.policy.gradients == Tier::kGpu ? f.grads_device : f.grads_host).take(op.step, "grad16 " + h.name);
    if (g) {
      x.grads = std::move(*g);
    } else if (result) {
      result = std::unexpected(g.error());
    }
    if (!held && result) {
      // A replay is the rare path: its scratch is not in the schedule.
      OpTally* const tally = std::exchange(current_tally, nullptr);
      result = replay(op, x, skip, divisor);
      current_tally = tally;
    }
    release(x.backup);
    release(x.grads);
  }
  return result;
}

// A failed speculation of partition x.partition: its states back from the
// rollback copy, then the update done again with the verdict (skipped:
// parameters republished unchanged), written where states and parameters
// rest. Rare, so its scratch is not in the schedule. The new parameters
// come out beside the optimizer (on the device for a GPU one, whose states
// and gradients are there), and NVMe takes them from host memory.
core::Result<void> Interpreter::State::replay(const Op& op, Speculation& x, bool skip, float divisor) {
  PartitionHome& h = homes[x.partition];
  Buffer staged, fresh, fresh_on_host;
  Buffer* states = &h.states;
  auto cleanup = [&] {
    if (staged.data != nullptr) release(staged);
    if (fresh.data != nullptr) release(fresh);
    if (fresh_on_host.data != nullptr) release(fresh_on_host);
  };
  if (h.policy.optimizer_states == Tier::kNvme) {
    auto s = allocate(Tier::kCpu, h.state_bytes(), "replayed states " + h.name);
    if (!s) return std::unexpected(s.error());
    staged = std::move(*s);
    states = &staged;
  }
  const bool on_gpu = h.policy.optimizer == core::OptimizerDevice::kGpu;
  auto p = allocate(on_gpu ? Tier::kGpu : Tier::kCpu, 2 * h.params(), "replayed param16 " + h.name);
  if (!p) {
    cleanup();
    return std::unexpected(p.error());
  }
  fresh = std::move(*p);
  if (on_gpu && h.policy.param16 == Tier::kNvme) {
    auto q = allocate(Tier::kCpu, 2 * h.params(), "replayed param16 " + h.name + " for nvme");
    if (!q) {
      cleanup();
      return std::unexpected(q.error());
    }
    fresh_on_host = std::move(*q);
  }
  core::Result<void> r = backend.copy(op.lane, *states, 0, x.backup, 0, x.backup.bytes);
  if (r && skip) {
    r = backend.narrow(op.lane, *states, 0, fresh, options.precision);
  } else if (r) {
    Op as_update = op;
    as_update.partition = static_cast<int>(x.partition);
    r = backend.optimizer_step(op.lane, adam_work(as_update, *states, x.grads, fresh, divisor));
  }
  if (r && fresh_on_host.data != nullptr) r = backend.copy(op.lane, fresh_on_host, 0, fresh, 0, fresh.bytes);
  // The write-backs go out on the NVMe write lane, behind what this op's
  // lane has written into the buffers they take.
  const bool writes_back = h.policy.optimizer_states == Tier::kNvme || h.policy.param16 == Tier::kNvme;
  if (r && writes_back) r = lane_waits_for(backend, Lane::kNvmeWrite, op.lane);
  if (r && h.policy.optimizer_states == Tier::kNvme)
    r = moved_aside(
        backend.block_write(Lane::kNvmeWrite, {.region = h.states_region, .data = staged.as<std::byte>()}));
  const size_t slot = homes.slot(next_version(op.step));
  if (r && h.policy.param16 == Tier::kNvme)
    r = moved_aside(backend.block_write(
        Lane::kNvmeWrite,
        {.region = h.param16_region[slot], .data = (on_gpu ? fresh_on_host : fresh).as<std::byte>()}));
  else if (r)
    r = backend.copy(op.lane, h.param16[slot], 0, fresh, 0, fresh.bytes);
  // ... and this op's lane behind them, so that what waits for this op
  // (the next read of those regions) waits for them too.
  if (r && writes_back) r = lane_waits_for(backend, op.lane, Lane::kNvmeWrite);
  cleanup();
  return r;
}

core::Result<void> Interpreter::State::read_states(const Op& op) {
  PartitionHome& h = home(op);
  auto staged = allocate(Tier::kCpu, h.state_bytes(), "staged states " + h.name);
  if (!staged) return std::unexpected(staged.error());
  auto r =
      moved(op, backend.block_read(op.lane, {.region = h.states_region, .data = staged->as<std::byte>()}));
  if (!r) {
    release(*staged);
    return r;
  }
  in_flight(op).staged_states.push(op.step, std::move(*staged));
  return {};
}

core::Result<void> Interpreter::State::write_states(const Op& op) {
  PartitionHome& h = home(op);
  auto staged = in_flight(op).staged_states.pop("staged states " + h.name);
  if (!staged) return std::unexpected(staged.error());
  auto r =
      moved(op, backend.block_write(op.lane, {.region = h.states_region, .data = staged->as<std::byte>()}));
  release(*staged);
  return r;
}

core::Result<void> Interpreter::State::read_params(const Op& op) {
  PartitionHome& h = home(op);
  auto staged = allocate(Tier::kCpu, 2 * h.params(), "staged param16 " + h.name);
  if (!staged) return std::unexpected(staged.error());
  const std::string& region = h.param16_region[homes.slot(global(op.step))];
  auto r = moved(op, backend.block_read(op.lane, {.region = region, .data = staged->as<std::byte>()}));
  if (!r) {
    release(*staged);
    return r;
  }
  in_flight(op).staged_params.push(op.step, std::move(*staged));
  return {};
}

core::Result<void> Interpreter::State::write_params(const Op& op) {
  PartitionHome& h = home(op);
  auto updated = in_flight(op).updated.pop("updated param16 " + h.name);
  if (!updated) return std::unexpected(updated.error());
  const std::string& region = h.param16_region[homes.slot(next_version(op.step))];
  auto r = moved(op, backend.block_write(op.lane, {.region = region, .data = updated->as<std::byte>()}));
  release(*updated);
  return r;
}

core::Result<void> Interpreter::State::execute(const Op& op) {
  switch (op.kind) {
    case OpKind::kForward:
    case OpKind::kRecompute:
    case OpKind::kBackward:
      return compute(op);
    case OpKind::kUploadParams:
      return home(op).policy.param16 == Tier::kGpu ? publish(op) : fetch(op);
    case OpKind::kOffloadGrads:
      return offload(op);
    case OpKind::kOptimizer:
      return optimize(op);
    case OpKind::kReadStates:
      return read_states(op);
    case OpKind::kWriteStates:
      return write_states(op);
    case OpKind::kReadParams:
      return read_params(op);
    case OpKind::kWriteParams:
      return write_params(op);
    case OpKind::kGradCheck:
      return check_gradients(op);
    case OpKind::kCheckpoint:
      return op.partition >= 0 ? snapshot(op) : commit_checkpoint(op);
    case OpKind::kAcceptUpdate:
      return accept(op);
    case OpKind::kOffloadParams:
      return offload_params(op);
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllReduce:
      break;
  }
  return core::fail(
      {{}, "the executor runs one rank; '" + op.name + "' needs several", "a plan for a single-GPU machine"});
}

void Interpreter::State::fail_with(const Op& op, core::Diagnostics d) {
  {
    std::lock_guard lock(mutex);
    if (!failed) {
      for (core::Diagnostic& x : d) x.what = "op '" + op.name + "' failed: " + x.what;
      error = std::move(d);
      failed = true;
    }
  }
  wake_everyone();
}

// Whether lane `l`'s threads are to stop: the run failed, the lane is done,
// or the run stops before its next op. With `mutex` held.
bool Interpreter::State::leaving(size_t l) const {
  const std::vector<core::OpId>& queue = lane_ops[l];
  if (failed || lane_next[l] == queue.size()) return true;
  return stop_after && schedule.op(queue[lane_next[l]]).step > *stop_after;
}

// Whether lane `l`'s threads have something to do: leave, or start its next
// op (its dependencies have finished and the memory gate lets it). With
// `mutex` held.
bool Interpreter::State::may_proceed(size_t l) const {
  if (leaving(l)) return true;
  const Op& next = schedule.op(lane_ops[l][lane_next[l]]);
  for (core::OpId d : next.deps) {
    if (!done[static_cast<size_t>(d)]) return false;
  }
  return gate.may_start(next.id);
}

// After an op started or ended: wakes the lanes whose threads may now
// proceed, and only those.
void Interpreter::State::wake_ready_lanes() {
  std::array<bool, core::kLaneCount> ready{};
  {
    std::lock_guard lock(mutex);
    for (size_t l = 0; l < core::kLaneCount; ++l) ready[l] = !lane_ops[l].empty() && may_proceed(l);
  }
  for (size_t l = 0; l < core::kLaneCount; ++l) {
    if (ready[l]) lane_ready[l].notify_all();
  }
}

void Interpreter::State::wake_all_lanes() {
  for (std::condition_variable& v : lane_ready) v.notify_all();
}

void Interpreter::State::wake_everyone() {
  wake_all_lanes();
  changed.notify_all();
}

// One of a lane's slot threads. The lane issues its ops in order: the
// next op starts when its dependencies have finished, the memory gate lets
// its allocations through and a slot is free, exactly as the simulator's
// engine starts them (sim/engine.cpp), so a lane with N slots runs up to N
// ops at once.
void Interpreter::State::run_lane(Lane lane, int slot) {
  const auto l = static_cast<size_t>(lane);
  const std::vector<core::OpId>& queue = lane_ops[l];
  for (;;) {
    core::OpId id = -1;
    {
      std::unique_lock lock(mutex);
      lane_ready[l].wait(lock, [&] { return may_proceed(l); });
      if (leaving(l)) break;
      id = queue[lane_next[l]++];
      const core::OpKind kind = schedule.op(id).kind;
      if (kind == OpKind::kOptimizer || kind == OpKind::kAcceptUpdate)
        updating_step = std::max(updating_step, schedule.op(id).step);
      started_ns[static_cast<size_t>(id)] = now_ns();
      op_boundary(schedule.op(id), true, slot);
    }
    wake_ready_lanes();  // the lane's next op may be ready for another slot, or the gate moved
    const Op& op = schedule.op(id);
    OpTally tally;
    current_tally = &tally;
    auto result = wait_for_other_lanes(op);
    if (result) result = mark(op, start_marks);
    if (result) result = execute(op);
    current_tally = nullptr;
    if (result) result = check_tally(op, tally);
    if (result) result = mark(op, end_marks);
    if (result) result = record_for_other_lanes(op);
    {
      std::lock_guard lock(mutex);
      op_boundary(op, false, slot);
      if (result) {
        done[static_cast<size_t>(op.id)] = 1;
        last_progress_ns = now_ns();
      }
    }
    if (!result) {
      fail_with(op, result.error());
      break;
    }
    wake_ready_lanes();
    // A stop asked for (SIGINT) is acted on by the watchdog: wake it now
    // rather than at its next timeout (up to 250 ms of lanes starting ops).
    if (options.stop != nullptr && options.stop->load() != 0) changed.notify_all();
    if (--remaining_in_step[static_cast<size_t>(op.step)] == 0) {
      if (auto r = retime_step(op.step); !r) {
        fail_with(op, r.error());
        break;
      }
      if (options.step_done) options.step_done(global(op.step));
    }
  }
  std::lock_guard lock(mutex);
  --running_threads;
  changed.notify_all();
}

// Before `op` starts: its lane waits on the events of the ops on other
// lanes it depends on (which are done, so their events are recorded).
core::Result<void> Interpreter::State::wait_for_other_lanes(const Op& op) {
  for (core::OpId d : op.deps) {
    const auto i = static_cast<size_t>(d);
    if (schedule.op(d).lane == op.lane) continue;  // a lane runs in order
    if (auto r = backend.wait(op.lane, events[i]); !r) return r;
    if (waiting_on[i].fetch_sub(1) == 1) events[i] = {};  // nobody else will wait on it
  }
  return {};
}

core::Result<void> Interpreter::State::retime_step(int step) {
  for (core::OpId id : ops_of_step[static_cast<size_t>(step)]) {
    std::optional<TimeMark>& start = start_marks[static_cast<size_t>(id)];
    std::optional<TimeMark>& end = end_marks[static_cast<size_t>(id)];
    if (!start || !end) continue;  // a backend whose calls finish: the host's times stand
    auto from = backend.marked_at(*start);
    if (!from) return std::unexpected(from.error());
    auto to = backend.marked_at(*end);
    if (!to) return std::unexpected(to.error());
    start.reset();
    end.reset();
    retimed = true;
    if (options.sink == nullptr) continue;
    std::lock_guard lock(sink_mutex);
    options.sink->op_retimed(options.first_op + id, *from - options.time_origin_ns, *to - options.time_origin_ns);
  }
  return {};
}

// After `op` ends: the event its dependents on other lanes wait on.
core::Result<void> Interpreter::State::record_for_other_lanes(const Op& op) {
  if (waiting_on[static_cast<size_t>(op.id)].load() == 0) return {};
  auto event = backend.record(op.lane);
  if (!event) return std::unexpected(event.error());
  events[static_cast<size_t>(op.id)] = std::move(*event);
  return {};
}

core::Result<void> Interpreter::State::check_tally(const Op& op, const OpTally& tally) const {
  std::array<int64_t, 3> allocs{}, frees{};
  for (const core::MemoryEffect& e : op.allocs) allocs[static_cast<size_t>(e.tier)] += e.bytes.count();
  for (const core::MemoryEffect& e : op.frees) frees[static_cast<size_t>(e.tier)] += e.bytes.count();
  for (Tier tier : core::kAllTiers) {
    const auto t = static_cast<size_t>(tier);
    if (tally.allocated[t] == allocs[t] && tally.released[t] == frees[t]) continue;
    return core::fail({{},
                       "allocated " + std::to_string(tally.allocated[t]) + " B and released " +
                           std::to_string(tally.released[t]) + " B on " + std::string(core::to_string(tier)) +
                           " where the schedule declares " + std::to_string(allocs[t]) + " B and " +
                           std::to_string(frees[t]) +
                           " B (a bug: the executor and lowering disagree on memory)",
                       ""});
  }
  return {};
}

core::Diagnostics Interpreter::State::hang_report(int64_t now) const {
  auto seconds = [](int64_t ns) { return std::to_string(ns / 1'000'000'000) + " s"; };
  core::Diagnostics d;
  d.push_back({{},
               "no op finished for " + seconds(now - last_progress_ns) +
                   " (watchdog): the run is stopped; each lane's state follows",
               "a longer --watchdog if an op is legitimately this slow"});
  for (Lane lane : core::kAllLanes) {
    const auto l = static_cast<size_t>(lane);
    const std::vector<core::OpId>& queue = lane_ops[l];
    if (queue.empty()) continue;
    std::string line = std::string(core::to_string(lane)) + ": ";
    std::vector<std::string> running;
    for (size_t k = 0; k < lane_next[l]; ++k) {
      const core::OpId id = queue[k];
      if (!done[static_cast<size_t>(id)])
        running.push_back("'" + schedule.op(id).name + "' (running for " +
                          seconds(now - started_ns[static_cast<size_t>(id)]) + ")");
    }
    for (const std::string& r : running) line += "runs " + r + "; ";
    if (lane_next[l] == queue.size()) {
      line += running.empty() ? "finished" : "nothing else to issue";
    } else {
      const Op& next = schedule.op(queue[lane_next[l]]);
      std::string waits;
      for (core::OpId dep : next.deps) {
        if (done[static_cast<size_t>(dep)]) continue;
        const Op& w = schedule.op(dep);
        waits += std::string(waits.empty() ? "" : ", ") + "'" + w.name + "' on " +
                 std::string(core::to_string(w.lane));
      }
      if (waits.empty()) {
        if (const std::optional<core::MemoryStep> m = gate.waits_for(next.id)) {
          const Op& w = schedule.op(m->op);
          waits = "memory: the " + std::string(m->start ? "allocations of '" : "frees of '") + w.name + "' on " +
                  std::string(core::to_string(w.lane)) + " come first in the memory order";
        }
      }
      line += "next '" + next.name + "' waits for " + (waits.empty() ? std::string("a free slot") : waits);
    }
    d.push_back({{}, line, ""});
  }
  return d;
}

Interpreter::Interpreter(const core::Schedule& schedule, Backend& backend, PartitionHomes& homes,
                         LayerCompute& model, InterpretOptions options)
    : state_(std::make_unique<State>(schedule, backend, homes, model, std::move(options))) {
  State& s = *state_;
  for (size_t j = 0; j < homes.all().size(); ++j) {
    const auto layer = static_cast<size_t>(homes[j].part.layer);
    if (s.partitions_of_layer.size() <= layer) {
      s.partitions_of_layer.resize(layer + 1);
      s.layer_params.resize(layer + 1);
    }
    s.partitions_of_layer[layer].push_back(j);
    s.layer_params[layer] += homes[j].params();
  }
  for (size_t l = 0; l < s.layer_params.size(); ++l) s.footprints.push_back(model.footprint(static_cast<int>(l)));
  // Only the schedule orders ops: every gate (the fp16 overflow check,
  // clipping) is an op of its own that both interpreters see.
  for (const Op& op : schedule.ops) s.lane_ops[static_cast<size_t>(op.lane)].push_back(op.id);
  for (const Op& op : schedule.ops) ++s.remaining_in_step[static_cast<size_t>(op.step)];
  for (const Op& op : schedule.ops) s.ops_of_step[static_cast<size_t>(op.step)].push_back(op.id);
  for (const Op& op : schedule.ops) {
    for (core::OpId d : op.deps) {
      if (schedule.op(d).lane != op.lane) ++s.waiting_on[static_cast<size_t>(d)];
    }
  }
}

Interpreter::~Interpreter() {
  if (!state_) return;
  // Whatever a failed run left in flight goes back to the backend.
  for (PartitionFlight& f : state_->flight) {
    for (BufferQueue* q : {&f.fetched, &f.staged_params, &f.staged_states, &f.grads_device, &f.grads_out,
                           &f.grads_host, &f.updated, &f.updated_device}) {
      for (Buffer& b : q->drain()) state_->backend.release(b);
    }
  }
  for (auto& [key, list] : state_->activations) {
    for (Buffer& b : list) state_->backend.release(b);
  }
  for (auto& [step, list] : state_->snapshots) {
    for (Buffer& b : list) state_->backend.release(b);
  }
  for (auto& [step, list] : state_->speculations) {
    for (State::Speculation& x : list) {
      state_->backend.release(x.backup);
      state_->backend.release(x.grads);
    }
  }
}

core::Result<void> Interpreter::run() {
  State& s = *state_;
  {
    // What rests on each tier as the run starts.
    std::lock_guard lock(s.sink_mutex);
    for (Tier tier : core::kAllTiers) {
      s.in_use[static_cast<size_t>(tier)] = s.backend.in_use(tier);
      s.report_memory(tier, now_ns() - s.options.time_origin_ns);
    }
  }
  s.last_progress_ns = now_ns();
  std::vector<std::jthread> threads;
  for (Lane lane : core::kAllLanes) {
    const auto l = static_cast<size_t>(lane);
    if (s.lane_ops[l].empty()) continue;
    for (int slot = 0; slot < std::max(1, s.schedule.lane_slots[l]); ++slot) {
      {
        std::lock_guard lock(s.mutex);
        ++s.running_threads;
      }
      threads.emplace_back([&s, lane, slot] { s.run_lane(lane, slot); });
    }
  }
  {
    // The watchdog: a run in which nothing finishes for too long is stopped
    // with a report, never left hanging.
    std::unique_lock lock(s.mutex);
    const int64_t limit = s.options.watchdog.count();
    while (s.running_threads > 0 && !s.failed) {
      s.changed.wait_for(lock, std::chrono::milliseconds(std::clamp<int64_t>(limit / 1'000'000 / 4, 1, 250)));
      if (s.options.stop != nullptr && s.options.stop->load() != 0 && !s.stop_after) {
        // Asked to stop: finish every step an update has begun, start no
        // later op; the state is then that after stop_after.
        s.stop_after = s.updating_step;
        s.abandon_after(*s.stop_after);
        s.wake_all_lanes();
      }
      const int64_t now = now_ns();
      if (s.running_threads > 0 && !s.failed && now - s.last_progress_ns > limit) {
        s.error = s.hang_report(now);
        s.failed = true;
        s.wake_all_lanes();
      }
    }
  }
  if (s.failed) s.backend.cancel();  // a call stuck in the backend gives up
  threads.clear();                   // joins
  if (s.failed) return std::unexpected(s.error);
  if (s.stop_after) {
    // Consistent only if every update up to stop_after has landed (a lane
    // that reached a later op first would have left one behind).
    bool complete = true;
    for (const Op& op : s.schedule.ops) {
      // What changes the state: updates, their NVMe writes, and publishing
      // updated parameters to the device (an upload that allocates nothing).
      const bool update = op.kind == OpKind::kOptimizer || op.kind == OpKind::kAcceptUpdate ||
                          op.kind == OpKind::kWriteStates || op.kind == OpKind::kWriteParams ||
                          op.kind == OpKind::kOffloadParams ||
                          (op.kind == OpKind::kUploadParams && op.allocs.empty());
      if (update && op.step <= *s.stop_after) complete &= s.done[static_cast<size_t>(op.id)] != 0;
    }
    s.stopped = Stopped{.after_step = *s.stop_after, .consistent = complete};
  }
  return {};
}

std::optional<Interpreter::Stopped> Interpreter::stopped() const {
  return state_->stopped;
}

LossScaler Interpreter::final_scaler() const {
  return scaler_after(state_->schedule.steps - 1);
}

LossScaler Interpreter::scaler_after(int step) const {
  return state_->before(step + 1).scaler;
}

int64_t Interpreter::replayed_steps() const {
  return state_->replayed_steps.load();
}

int64_t Interpreter::skipped_through(int step) const {
  return state_->skipped_before(step + 1);
}

bool Interpreter::retimed() const {
  return state_->retimed.load();
}

bool Interpreter::overflowed(int step) const {
  return state_->overflow[static_cast<size_t>(step)].load();
}

}  // namespace stowage::executor
