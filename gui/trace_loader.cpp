// One pass of core's trace walker (core/trace_events.h, simdjson On-Demand)
// over the events: metadata names ranks and tracks, complete events become
// ops, counters become memory samples. Flow events are skipped: each op's
// `args.deps` already lists what it waits on.
#include "gui/trace_loader.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>

#include "calibration/kineto_trace.h"
#include "core/trace_events.h"
#include "core/trace_rules.h"
#include "gui/trace_assembly.h"

namespace stowage::gui {
namespace {

// The last name looked up and what it meant: lanes, kinds and tensor
// classes repeat from event to event, so most lookups are one comparison.
template <class T, std::optional<T> (*kLookup)(std::string_view)>
class NameCache {
 public:
  std::optional<T> operator()(std::string_view name) {
    if (!known_ || name != last_) known_ = true, last_ = name, value_ = kLookup(name);
    return value_;
  }

 private:
  bool known_ = false;
  std::string last_;
  std::optional<T> value_;
};

class ModelBuilder final : public core::TraceEventVisitor {
 public:
  explicit ModelBuilder(TraceAssembly& a) : a_(a) {}

  void header(const core::TraceHeader& h) override { read_header(a_, h); }
  void devices(const std::vector<std::string>& names) override {
    devices_ = calibration::kineto_origin(names);
  }
  [[nodiscard]] const core::TraceOrigin& devices() const { return devices_; }
  // Known phases it does not draw (flow events) are skipped unread; an
  // unknown one is read, to be diagnosed.
  [[nodiscard]] bool wants_phase(std::string_view ph) const override {
    return ph == "M" || ph == "X" || ph == "C" || !core::known_trace_phase(ph);
  }

  void event(const core::TraceEvent& e) override {
    if (!e.is_object) return a_.problem(e.index, "event is not an object", {}, e.line());
    if (e.ph == "M") return metadata(e);
    if (e.ph == "X") return op(e);
    if (e.ph == "C") return counter(e);
    if (!core::known_trace_phase(e.ph)) {
      return a_.problem(e.index,
                        e.ph.empty() ? std::string("event without a phase ('ph')")
                                     : "unknown phase '" + std::string(e.ph) + "'",
                        "a phase of the Chrome trace event format: X (an op), C (a counter), M (metadata), ...",
                        e.line());
    }
  }

  // After the walk: a dependency on an earlier id that no op has (issue 12
  // item 6: dangling deps were dropped without a word).
  void check_deps() {
    for (const Waiting& w : waiting_) {
      if (w.dep < 0 || static_cast<size_t>(w.dep) >= seen_.size() || !seen_[static_cast<size_t>(w.dep)]) {
        a_.problem(w.event, "args.deps names op " + std::to_string(w.dep) + ", which the trace lacks",
                   core::kTraceDepsExpected, w.line);
      }
    }
  }

 private:
  void metadata(const core::TraceEvent& e) {
    const int64_t pid = e.pid.value_or(0);
    if (e.name == "process_name") a_.process_names[pid] = std::string(e.arg_name);
    if (e.name == "thread_name") a_.threads[{pid, e.tid.value_or(0)}].name = std::string(e.arg_name);
    if (e.name == "thread_sort_index") a_.threads[{pid, e.tid.value_or(0)}].sort_index = e.sort_index.value_or(0);
  }

  void op(const core::TraceEvent& e) {
    if (!e.ts || !e.dur) {
      return a_.problem(e.index, "complete event without numeric 'ts' and 'dur'", "times in microseconds",
                        e.line());
    }
    // Impossible times (issue 12 item 6): `ts: 1e308` overflowed the
    // conversion to ns, a negative duration was drawn as an instant.
    if (!core::usable_trace_time(e.ts, false) || !core::usable_trace_time(e.dur, true)) {
      return a_.problem(e.index, "impossible time: ts " + number(*e.ts) + ", dur " + number(*e.dur) + " µs",
                        core::kTraceTimesExpected, e.line());
    }
    const int64_t id = e.id.value_or(static_cast<int64_t>(a_.model.ops.size()));
    if (id < 0 || id > core::kMaxTraceOpId) {
      return a_.problem(e.index, "args.id " + std::to_string(id) + " is out of range",
                        "op ids from 0 to " + std::to_string(core::kMaxTraceOpId), e.line());
    }
    if (!deps_checked(e, id)) return;
    TraceOp op;
    op.start = micros_to_ns(*e.ts);
    op.end = std::max(op.start, op.start + micros_to_ns(*e.dur));
    op.name = a_.model.add_text(e.name);
    op.id = id;
    op.lane = lane_(e.cat).value_or(core::Lane::kGpuCompute);
    op.kind = kind_(e.kind).value_or(core::OpKind::kForward);
    op.category = category_of(op.kind, op.lane);
    op.partition = static_cast<int>(e.partition.value_or(-1));
    op.layer = static_cast<int>(e.layer.value_or(-1));
    op.step = static_cast<int>(e.step.value_or(0));
    op.micro_step = static_cast<int>(e.micro_step.value_or(0));
    op.tensor_class = class_(e.tensor_class);
    op.bytes = core::Bytes(e.bytes.value_or(0));
    op.flops = core::Flops(e.flops.value_or(0));
    const auto i = static_cast<int32_t>(a_.model.ops.size());
    a_.model.ops.push_back(op);
    a_.model.set_deps(i, e.deps);
    const ThreadKey key{e.pid.value_or(0), e.tid.value_or(0)};
    if (!last_thread_ || last_key_ != key) last_key_ = key, last_thread_ = &a_.threads[key].ops;
    last_thread_->push_back(i);
  }

  void counter(const core::TraceEvent& e) {
    const std::optional<core::Tier> tier = tier_of_counter(e.name);
    if (tier && !e.ts) return a_.problem(e.index, "counter without numeric 'ts'", {}, e.line());
    if (tier) {
      a_.model.memory[static_cast<size_t>(*tier)].push_back(
          {.time = micros_to_ns(*e.ts), .bytes = core::Bytes(e.bytes.value_or(0))});
    }
    if (const std::optional<core::Tier> classes = tier_of_class_counter(e.name); classes && e.ts)
      read_class_sample(a_, *classes, micros_to_ns(*e.ts), e.other_args);
  }

  // A dependency must name an earlier op (a cycle, a self-dependency or one
  // on a later op cannot come from a schedule); an earlier id not seen yet
  // is checked once every op is read.
  bool deps_checked(const core::TraceEvent& e, int64_t id) {
    for (const int64_t dep : e.deps) {
      if (dep >= id) {
        a_.problem(e.index,
                   "args.deps names op " + std::to_string(dep) + ", which is not earlier than this op (" +
                       std::to_string(id) + "): a cycle, or a dependency on a later op",
                   core::kTraceDepsExpected, e.line());
        return false;
      }
    }
    const auto at = static_cast<size_t>(id);
    if (seen_.size() <= at) seen_.resize(std::max(at + 1, seen_.size() * 2));
    seen_[at] = true;
    for (const int64_t dep : e.deps) {
      if (dep < 0 || !seen_[static_cast<size_t>(dep)]) waiting_.push_back({dep, e.index, e.line()});
    }
    return true;
  }

  static std::string number(double v) {
    std::ostringstream out;
    out << v;
    return out.str();
  }

  struct Waiting {
    int64_t dep;
    size_t event;
    int line;
  };
  std::vector<bool> seen_;  // op ids read so far
  std::vector<Waiting> waiting_;
  TraceAssembly& a_;
  core::TraceOrigin devices_;  // a PyTorch profiler trace's first GPU
  NameCache<core::Lane, lane_from_name> lane_;
  NameCache<core::OpKind, op_kind_from_name> kind_;
  NameCache<core::TensorClass, tensor_class_from_name> class_;
  ThreadKey last_key_;
  std::vector<int32_t>* last_thread_ = nullptr;  // std::map nodes stay put
};

// A PyTorch profiler's times count from an epoch (days of µs), a Stowage
// trace's from its schedule's start: drawn on one axis beside a prediction,
// the run would sit days to the right. Its times from its first op instead,
// as Perfetto shows them.
void from_its_first_op(TraceModel& model) {
  if (model.ops.empty()) return;
  SimTime first = model.ops.front().start;
  for (const TraceOp& op : model.ops) first = std::min(first, op.start);
  for (TraceOp& op : model.ops) op.start -= first, op.end -= first;
  for (std::vector<MemoryPoint>& points : model.memory) {
    for (MemoryPoint& p : points) p.time -= first;
  }
}

core::Result<TraceModel> parse_padded(std::string_view text, const std::string& file) {
  TraceAssembly a{.file = file};
  ModelBuilder builder(a);
  if (core::Result<void> walked = core::walk_trace(text, file, builder); !walked)
    return std::unexpected(walked.error());
  builder.check_deps();
  const bool pytorch_profiler = calibration::looks_like_kineto(text);
  if (pytorch_profiler) from_its_first_op(a.model);
  core::Result<TraceModel> model = finish_assembly(std::move(a));
  if (model && pytorch_profiler) {
    model->info.pytorch_profiler = true;
    if (model->info.origin.empty()) model->info.origin = builder.devices();
  }
  return model;
}

}  // namespace

core::Result<TraceModel> parse_trace(std::string_view text, const std::string& file) {
  const core::PaddedText padded = core::padded_trace_text(text);
  return parse_padded(padded.text(), file);
}

core::Result<TraceModel> load_trace(const std::filesystem::path& path) {
  core::Result<core::PaddedText> text = core::read_trace_text(path.string());
  if (!text) return std::unexpected(text.error());
  return parse_padded(text->text(), path.string());
}

}  // namespace stowage::gui
