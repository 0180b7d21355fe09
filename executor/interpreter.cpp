#include "executor/interpreter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <utility>

#include "executor/model/half_convert.h"

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

// Buffers in flight for one partition, in the order their producers ran.
// Producers and consumers of one kind of buffer follow the schedule's
// dependencies, so first in is first out.
class BufferQueue {
 public:
  void push(Buffer b) {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(b));
  }
  // The oldest buffer, left in place (a consumer that does not free it).
  core::Result<Buffer*> front(std::string_view what) {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return missing(what);
    return &queue_.front();
  }
  core::Result<Buffer*> back(std::string_view what) {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return missing(what);
    return &queue_.back();
  }
  core::Result<Buffer> pop(std::string_view what) {
    std::lock_guard lock(mutex_);
    if (queue_.empty()) return missing(what);
    Buffer b = std::move(queue_.front());
    queue_.pop_front();
    return b;
  }
  std::deque<Buffer> drain() {
    std::lock_guard lock(mutex_);
    return std::exchange(queue_, {});
  }

 private:
  static std::unexpected<core::Diagnostics> missing(std::string_view what) {
    return core::fail(
        {{}, "no " + std::string(what) + " in flight (a bug in stowage's schedule or executor)", ""});
  }
  std::mutex mutex_;
  std::deque<Buffer> queue_;  // deque: references stay valid while others are pushed
};

struct PartitionFlight {
  BufferQueue fetched;        // param16 on the device, fetched for compute
  BufferQueue staged_params;  // param16 read from NVMe, on the host
  BufferQueue staged_states;  // master32|m|v read from NVMe, on the host
  BufferQueue grads_device;   // grad16 accumulated on the device
  BufferQueue grads_out;      // grad16 of one micro-step, waiting to be offloaded
  BufferQueue grads_host;     // grad16 accumulated on the host
  BufferQueue updated;        // param16 the CPU optimizer wrote, to publish
};

uint16_t to_half(float x, core::Precision p) {
  return p == core::Precision::kBf16 ? model::float_to_bf16(x) : model::float_to_fp16(x);
}
float from_half(uint16_t h, core::Precision p) {
  return p == core::Precision::kBf16 ? model::bf16_to_float(h) : model::fp16_to_float(h);
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
  std::vector<PartitionFlight> flight;
  std::map<std::tuple<int, int, int>, std::vector<Buffer>> activations;  // (step, micro, layer)
  std::mutex activations_mutex;

  std::vector<std::vector<core::OpId>> deps;  // the schedule's, plus the fp16 overflow barrier
  std::vector<uint8_t> done;
  bool failed = false;
  core::Diagnostics error;
  std::mutex mutex;
  std::condition_variable changed;
  std::mutex sink_mutex;
  std::vector<std::atomic<int64_t>> remaining_in_step;
  std::vector<std::atomic<bool>> overflow;

  State(const core::Schedule& s, Backend& b, PartitionHomes& h, LayerCompute& m, InterpretOptions o)
      : schedule(s),
        backend(b),
        homes(h),
        model(m),
        options(std::move(o)),
        flight(h.all().size()),
        done(s.ops.size(), 0),
        remaining_in_step(static_cast<size_t>(s.steps)),
        overflow(static_cast<size_t>(s.steps)) {}

  [[nodiscard]] int64_t global(int step) const { return options.first_step + step; }
  // The parameter version the optimizer of `step` writes.
  [[nodiscard]] int64_t next_version(int step) const { return global(step) + homes.versions(); }
  PartitionHome& home(const Op& op) { return homes[static_cast<size_t>(op.partition)]; }
  PartitionFlight& in_flight(const Op& op) { return flight[static_cast<size_t>(op.partition)]; }

  void memory_changed(Tier tier) {
    if (options.sink == nullptr) return;
    std::lock_guard lock(sink_mutex);
    options.sink->memory_changed(tier, now_ns() - options.time_origin_ns, core::Bytes(backend.in_use(tier)));
  }
  core::Result<Buffer> allocate(Tier tier, int64_t bytes, std::string what) {
    auto b = backend.allocate(tier, bytes, std::move(what));
    if (b) memory_changed(tier);
    return b;
  }
  void release(Buffer& b) {
    const Tier tier = b.tier;
    backend.release(b);
    memory_changed(tier);
  }

  core::Result<void> execute(const Op& op);
  core::Result<void> compute(const Op& op);
  core::Result<void> fetch(const Op& op);
  core::Result<void> publish(const Op& op);
  core::Result<void> offload(const Op& op);
  core::Result<void> optimize(const Op& op);
  core::Result<void> read_states(const Op& op);
  core::Result<void> write_states(const Op& op);
  core::Result<void> read_params(const Op& op);
  core::Result<void> write_params(const Op& op);
  // The loss scale of schedule step `step`: a pure function of the scaler
  // at step 0 and the overflows before `step`, which are final by then
  // (step-1's backward ran before step's on the compute lane).
  float scale_of(int step) const {
    if (!options.dynamic_scaling) return 1.0f;
    LossScaler s = options.scaler;
    for (int i = 0; i < step; ++i) s.update(overflow[static_cast<size_t>(i)].load());
    return static_cast<float>(s.scale);
  }
  int64_t skipped_before(int step) const {
    int64_t n = 0;
    for (int s = 0; s < step; ++s) n += overflow[static_cast<size_t>(s)].load() ? 1 : 0;
    return n;
  }
  void run_lane(Lane lane);
  void fail_with(const Op& op, core::Diagnostics d);
};

core::Result<void> Interpreter::State::compute(const Op& op) {
  const auto layer = static_cast<size_t>(op.layer);
  const core::Precision p = options.precision;
  auto params = allocate(Tier::kGpu, 4 * layer_params[layer], "fp32 workspace " + op.name);
  if (!params) return std::unexpected(params.error());
  std::span<float> p32 = params->as<float>();
  // Widen the layer's 16-bit parameters, partition by partition, from
  // where they rest on the device or from their fetched copies.
  for (size_t j : partitions_of_layer[layer]) {
    PartitionHome& h = homes[j];
    const Buffer* source = nullptr;
    if (h.policy.param16 == Tier::kGpu) {
      source = &h.param16[homes.slot(global(op.step))];
    } else {
      auto f = flight[j].fetched.front("fetched param16 " + h.name);
      if (!f) return std::unexpected(f.error());
      source = *f;
    }
    std::span<const uint16_t> half = source->as<const uint16_t>();
    for (size_t i = 0; i < half.size(); ++i)
      p32[static_cast<size_t>(h.part.first_param) + i] = from_half(half[i], p);
  }
  const std::tuple key{op.step, op.micro_step, op.layer};
  core::Result<void> result;
  if (op.kind == OpKind::kForward || op.kind == OpKind::kRecompute) {
    int64_t kept = 0;
    result = backend.compute(op.lane, op.name, [&] {
      kept = op.kind == OpKind::kForward ? model.forward(global(op.step), op.micro_step, op.layer, p32)
                                         : model.recompute(global(op.step), op.micro_step, op.layer, p32);
    });
    if (result) {
      // Activations live in the model's buffers; the device tier counts them.
      auto a = allocate(Tier::kGpu, kept,
                        (op.kind == OpKind::kForward ? "activations " : "recomputed ") + op.name);
      if (!a)
        result = std::unexpected(a.error());
      else {
        std::lock_guard lock(activations_mutex);
        activations[key].push_back(std::move(*a));
      }
    }
  } else {
    auto grads = allocate(Tier::kGpu, 4 * layer_params[layer], "fp32 gradients " + op.name);
    if (!grads) {
      release(*params);
      return std::unexpected(grads.error());
    }
    std::span<float> g32 = grads->as<float>();
    std::fill(g32.begin(), g32.end(), 0.0f);
    const float scale = scale_of(op.step);
    result = backend.compute(
        op.lane, op.name, [&] { model.backward(global(op.step), op.micro_step, op.layer, p32, g32, scale); });
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
      std::span<const float> slice =
          g32.subspan(static_cast<size_t>(h.part.first_param), static_cast<size_t>(h.params()));
      // Overflow is judged on the 16-bit gradient the optimizer will read:
      // an fp32 value above fp16's range is finite here and infinite there.
      auto check = [&](std::span<const uint16_t> g) {
        bool finite = true;
        for (uint16_t x : g) finite &= std::isfinite(from_half(x, p));
        if (!finite) overflow[static_cast<size_t>(op.step)].store(true);
      };
      const bool accumulate = h.policy.gradients == Tier::kGpu && op.micro_step > 0;
      if (accumulate) {
        auto acc = flight[j].grads_device.back("grad16 " + h.name);
        if (!acc) {
          result = std::unexpected(acc.error());
          break;
        }
        std::span<uint16_t> a = (*acc)->as<uint16_t>();
        for (size_t i = 0; i < slice.size(); ++i)
          a[i] = to_half(from_half(a[i], p) + from_half(to_half(slice[i], p), p), p);
        check(a);
        continue;
      }
      auto out = allocate(Tier::kGpu, 2 * h.params(), "grad16 " + h.name);
      if (!out) {
        result = std::unexpected(out.error());
        break;
      }
      std::span<uint16_t> o = out->as<uint16_t>();
      for (size_t i = 0; i < slice.size(); ++i) o[i] = to_half(slice[i], p);
      check(o);
      (h.policy.gradients == Tier::kGpu ? flight[j].grads_device : flight[j].grads_out).push(std::move(*out));
    }
    release(*grads);
  }
  release(*params);
  // A forward or backward frees the fetched copies it used; a recompute
  // leaves them for its backward.
  if (op.kind != OpKind::kRecompute) {
    for (size_t j : partitions_of_layer[layer]) {
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
  in_flight(op).fetched.push(std::move(*device));
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
      f.grads_host.push(std::move(*host));
    else
      release(*host);
  } else {
    // Accumulate on the host, rounding as the device accumulator does, so
    // that where gradients rest never changes the math.
    auto acc = f.grads_host.back("grad16 " + h.name + " cpu");
    auto landed = allocate(Tier::kCpu, out->bytes, "grad16 " + h.name + " landing");
    if (!acc)
      result = std::unexpected(acc.error());
    else if (!landed)
      result = std::unexpected(landed.error());
    else if (result = backend.copy(op.lane, *landed, 0, *out, 0, out->bytes); result) {
      std::span<uint16_t> a = (*acc)->as<uint16_t>();
      std::span<const uint16_t> n = landed->as<const uint16_t>();
      const core::Precision p = options.precision;
      for (size_t i = 0; i < a.size(); ++i) a[i] = to_half(from_half(a[i], p) + from_half(n[i], p), p);
    }
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
  auto grads = (h.policy.gradients == Tier::kGpu ? f.grads_device : f.grads_host).pop("grad16 " + h.name);
  if (!grads) return std::unexpected(grads.error());
  // Where the new 16-bit parameters go: straight home when the optimizer
  // runs where they rest, else to a host buffer that a later op publishes.
  const bool direct = h.policy.param16 == Tier::kCpu ||
                      (h.policy.param16 == Tier::kGpu && h.policy.optimizer == core::OptimizerDevice::kGpu);
  Buffer updated;
  const Buffer* out = &h.param16[homes.slot(next_version(op.step))];
  if (!direct) {
    auto u = allocate(Tier::kCpu, 2 * h.params(), "updated param16 " + h.name);
    if (!u) {
      release(*grads);
      return std::unexpected(u.error());
    }
    updated = std::move(*u);
    out = &updated;
  }
  const size_t n = static_cast<size_t>(h.params());
  std::span<float> all = states->as<float>();
  core::Result<void> result;
  if (overflow[static_cast<size_t>(op.step)].load()) {
    // fp16 overflow: the step is skipped (GradScaler), parameters republished unchanged.
    std::span<uint16_t> o = out->as<uint16_t>();
    for (size_t i = 0; i < n; ++i) o[i] = to_half(all[i], options.precision);
  } else {
    OptimizerWork work{.master = all.subspan(0, n),
                       .m = all.subspan(n, n),
                       .v = all.subspan(2 * n, n),
                       .grad16 = grads->as<const uint16_t>(),
                       .param16_out = out->as<uint16_t>(),
                       .precision = options.precision,
                       .hyper = options.hyper,
                       .step = global(op.step) + 1 - (options.skipped_before + skipped_before(op.step)),
                       .grad_scale = scale_of(op.step)};
    result = backend.optimizer_step(op.lane, work);
  }
  release(*grads);
  if (updated.data != nullptr) {
    if (result)
      f.updated.push(std::move(updated));
    else
      release(updated);
  }
  return result;
}

core::Result<void> Interpreter::State::read_states(const Op& op) {
  PartitionHome& h = home(op);
  auto staged = allocate(Tier::kCpu, 12 * h.params(), "staged states " + h.name);
  if (!staged) return std::unexpected(staged.error());
  auto r = backend.block_read(op.lane, {.region = h.states_region, .data = staged->as<std::byte>()});
  if (!r) {
    release(*staged);
    return r;
  }
  in_flight(op).staged_states.push(std::move(*staged));
  return {};
}

core::Result<void> Interpreter::State::write_states(const Op& op) {
  PartitionHome& h = home(op);
  auto staged = in_flight(op).staged_states.pop("staged states " + h.name);
  if (!staged) return std::unexpected(staged.error());
  auto r = backend.block_write(op.lane, {.region = h.states_region, .data = staged->as<std::byte>()});
  release(*staged);
  return r;
}

core::Result<void> Interpreter::State::read_params(const Op& op) {
  PartitionHome& h = home(op);
  auto staged = allocate(Tier::kCpu, 2 * h.params(), "staged param16 " + h.name);
  if (!staged) return std::unexpected(staged.error());
  const std::string& region = h.param16_region[homes.slot(global(op.step))];
  auto r = backend.block_read(op.lane, {.region = region, .data = staged->as<std::byte>()});
  if (!r) {
    release(*staged);
    return r;
  }
  in_flight(op).staged_params.push(std::move(*staged));
  return {};
}

core::Result<void> Interpreter::State::write_params(const Op& op) {
  PartitionHome& h = home(op);
  auto updated = in_flight(op).updated.pop("updated param16 " + h.name);
  if (!updated) return std::unexpected(updated.error());
  const std::string& region = h.param16_region[homes.slot(next_version(op.step))];
  auto r = backend.block_write(op.lane, {.region = region, .data = updated->as<std::byte>()});
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
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kAllReduce:
      break;
  }
  return core::fail(
      {{}, "the executor runs one rank; '" + op.name + "' needs several", "a plan for a single-GPU machine"});
}

void Interpreter::State::fail_with(const Op& op, core::Diagnostics d) {
  std::lock_guard lock(mutex);
  if (!failed) {
    for (core::Diagnostic& x : d) x.what = "op '" + op.name + "' failed: " + x.what;
    error = std::move(d);
    failed = true;
  }
  changed.notify_all();
}

void Interpreter::State::run_lane(Lane lane) {
  for (const Op& op : schedule.ops) {
    if (op.lane != lane) continue;
    {
      std::unique_lock lock(mutex);
      const auto& waits = deps[static_cast<size_t>(op.id)];
      changed.wait(lock, [&] {
        if (failed) return true;
        for (core::OpId d : waits) {
          if (!done[static_cast<size_t>(d)]) return false;
        }
        return true;
      });
      if (failed) return;
    }
    const int64_t start = now_ns() - options.time_origin_ns;
    if (options.sink != nullptr) {
      std::lock_guard lock(sink_mutex);
      options.sink->op_started(options.first_op + op.id, start, 0);
    }
    auto result = execute(op);
    if (options.sink != nullptr) {
      std::lock_guard lock(sink_mutex);
      options.sink->op_finished(options.first_op + op.id, now_ns() - options.time_origin_ns);
    }
    if (!result) {
      fail_with(op, result.error());
      return;
    }
    {
      std::lock_guard lock(mutex);
      done[static_cast<size_t>(op.id)] = 1;
    }
    changed.notify_all();
    if (--remaining_in_step[static_cast<size_t>(op.step)] == 0 && options.step_done)
      options.step_done(global(op.step));
  }
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
  s.deps.reserve(schedule.ops.size());
  for (const Op& op : schedule.ops) s.deps.push_back(op.deps);
  if (s.options.precision == core::Precision::kFp16) {
    // Overflow barrier: an fp16 step is skipped when any gradient
    // overflowed, so every optimizer op waits for the step's last backward
    // (as DeepSpeed checks overflow over all gradients before stepping).
    std::map<int, core::OpId> last_backward;
    for (const Op& op : schedule.ops) {
      if (op.kind == OpKind::kBackward) last_backward[op.step] = std::max(last_backward[op.step], op.id);
    }
    for (const Op& op : schedule.ops) {
      if (op.kind == OpKind::kOptimizer) s.deps[static_cast<size_t>(op.id)].push_back(last_backward[op.step]);
    }
  }
  for (const Op& op : schedule.ops) ++s.remaining_in_step[static_cast<size_t>(op.step)];
}

Interpreter::~Interpreter() {
  if (!state_) return;
  // Whatever a failed run left in flight goes back to the backend.
  for (PartitionFlight& f : state_->flight) {
    for (BufferQueue* q : {&f.fetched, &f.staged_params, &f.staged_states, &f.grads_device, &f.grads_out,
                           &f.grads_host, &f.updated}) {
      for (Buffer& b : q->drain()) state_->backend.release(b);
    }
  }
  for (auto& [key, list] : state_->activations) {
    for (Buffer& b : list) state_->backend.release(b);
  }
}

core::Result<void> Interpreter::run() {
  State& s = *state_;
  for (Tier tier : core::kAllTiers) s.memory_changed(tier);  // what rests on each tier as the run starts
  std::vector<std::jthread> lanes;
  for (Lane lane : core::kAllLanes) {
    const bool used = std::any_of(s.schedule.ops.begin(), s.schedule.ops.end(),
                                  [&](const Op& op) { return op.lane == lane; });
    if (used) lanes.emplace_back([&s, lane] { s.run_lane(lane); });
  }
  lanes.clear();  // joins
  if (s.failed) return std::unexpected(s.error);
  return {};
}

LossScaler Interpreter::final_scaler() const {
  LossScaler s = state_->options.scaler;
  if (!state_->options.dynamic_scaling) return s;
  for (int i = 0; i < state_->schedule.steps; ++i) s.update(state_->overflow[static_cast<size_t>(i)].load());
  return s;
}

bool Interpreter::overflowed(int step) const {
  return state_->overflow[static_cast<size_t>(step)].load();
}

}  // namespace stowage::executor
