#include "core/trace_reader.h"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <limits>
#include <map>
#include <optional>

#include "core/trace_events.h"
#include "core/trace_rules.h"

namespace stowage::core {

namespace {

std::optional<Lane> lane_named(std::string_view s) {
  for (Lane lane : kAllLanes) {
    if (to_string(lane) == s) return lane;
  }
  return std::nullopt;
}

std::optional<OpKind> kind_named(std::string_view s) {
  for (int k = 0; k < kOpKindCount; ++k) {
    if (to_string(static_cast<OpKind>(k)) == s) return static_cast<OpKind>(k);
  }
  return std::nullopt;
}

std::optional<TensorClass> class_named(std::string_view s) {
  for (TensorClass c : kAllTensorClasses) {
    if (to_string(c) == s) return c;
  }
  return std::nullopt;
}

// Microseconds with three decimals (docs/formats/trace.md) to whole ns.
SimTime nanos(double us) { return static_cast<SimTime>(std::llround(us * 1000.0)); }

// The number when T holds it, else `fallback`: a count given as 1e12 for
// an int field is not narrowed (issue 12).
template <class T>
T int_or(const std::optional<int64_t>& v, T fallback) {
  if (!v || *v < std::numeric_limits<T>::min() || *v > std::numeric_limits<T>::max()) return fallback;
  return static_cast<T>(*v);
}

// Slot of a thread named "nvme.read #3" (2), or of "nvme.read" (0).
int slot_of(std::string_view thread_name) {
  const auto hash = thread_name.rfind(" #");
  if (hash == std::string_view::npos) return 0;
  int slot = 0;
  const std::string_view digits = thread_name.substr(hash + 2);
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), slot);
  return error == std::errc() ? std::max(0, slot - 1) : 0;
}

struct PendingOp {
  Op op;
  SimTime start = 0, end = 0;
  int64_t tid = 0;
};

// More steps than any run lowers (core/lower.h limits a run's ops).
constexpr int kMaxTraceSteps = 10'000'000;

// Ops and thread names as the walk finds them; slots are resolved after it
// (a thread's name may come after its ops).
struct Reader final : TraceEventVisitor {
  const std::string& file;
  explicit Reader(const std::string& f) : file(f) {}
  Diagnostics problems;
  std::map<int64_t, int> slot_by_tid;
  std::vector<std::optional<PendingOp>> ops;
  TraceHeader head;

  void bad(const TraceEvent& e, const std::string& what, const std::string& expected) {
    problems.push_back({{file, e.line(), 0}, "traceEvents[" + std::to_string(e.index) + "]: " + what, expected});
  }

  void header(const TraceHeader& h) override { head = h; }
  [[nodiscard]] bool wants_phase(std::string_view ph) const override { return ph == "M" || ph == "X"; }

  void event(const TraceEvent& e) override {
    if (!e.is_object) return;
    if (e.ph == "M" && e.name == "thread_name" && e.tid) slot_by_tid[*e.tid] = slot_of(e.arg_name);
    if (e.ph == "X" && e.pid.value_or(0) == 1) op_event(e);
  }

  void op_event(const TraceEvent& e) {
    const int64_t id = e.id.value_or(-1);
    const std::optional<Lane> lane = lane_named(e.cat);
    const std::optional<OpKind> kind = kind_named(e.kind);
    if (id < 0 || id > kMaxTraceOpId || !lane || !kind || !usable_trace_time(e.ts, false) ||
        !usable_trace_time(e.dur, true)) {
      bad(e, "an op without a usable id, kind, lane (cat), ts or dur",
          "a Stowage op event: args.id >= 0, args.kind, cat a lane name, ts and dur in microseconds below 4e15, "
          "dur not negative");
      return;
    }
    Op op{.id = static_cast<OpId>(id), .kind = *kind, .lane = *lane};
    op.name = std::string(e.name);
    op.partition = int_or<int>(e.partition, -1);
    op.layer = int_or<int>(e.layer, -1);
    op.step = int_or<int>(e.step, 0);
    op.micro_step = int_or<int>(e.micro_step, 0);
    // A step indexes the summary's per-step table: `args.step: -1` read
    // before it (found by the sanitizer sweep, issue 12).
    if (op.step < 0 || op.micro_step < 0 || op.step > kMaxTraceSteps) {
      bad(e, "args.step " + std::to_string(op.step) + ", args.micro_step " + std::to_string(op.micro_step) +
                 " out of range",
          "steps and micro-steps counted from 0, as Stowage writes them");
      return;
    }
    if (!e.tensor_class.empty()) op.tensor_class = class_named(e.tensor_class);
    op.bytes = Bytes(e.bytes.value_or(0));
    op.flops = Flops(e.flops.value_or(0));
    op.params = e.params.value_or(0);
    for (const int64_t d : e.deps) op.deps.push_back(static_cast<OpId>(d));
    const SimTime start = nanos(*e.ts);
    if (ops.size() <= static_cast<size_t>(id)) ops.resize(static_cast<size_t>(id) + 1);
    if (ops[static_cast<size_t>(id)]) {
      bad(e, "op id " + std::to_string(id) + " given twice", "each op id once");
      return;
    }
    ops[static_cast<size_t>(id)] =
        PendingOp{.op = std::move(op), .start = start, .end = start + nanos(*e.dur), .tid = e.tid.value_or(0)};
  }
};

// `text` is followed by kTracePadding readable bytes.
Result<RecordedTrace> parse_padded(std::string_view text, const std::string& file) {
  Reader reader(file);
  if (Result<void> walked = walk_trace(text, file, reader); !walked) return std::unexpected(walked.error());
  RecordedTrace trace;
  trace.title = reader.head.title;
  trace.warnings = reader.head.warnings;
  trace.origin = reader.head.origin;
  trace.source = reader.head.source;
  trace.schedule.ranks = std::max(1, int_or<int>(reader.head.ranks, 1));
  // Every op's step lies within otherData.steps; without it, the steps the ops name.
  int last_step = 0;
  for (const auto& entry : reader.ops) {
    if (entry) last_step = std::max(last_step, entry->op.step);
  }
  trace.schedule.steps = std::max(1, int_or<int>(reader.head.steps, last_step + 1));
  if (trace.schedule.steps > kMaxTraceSteps) {
    reader.problems.push_back({{file, 0, 0}, "otherData.steps " + std::to_string(trace.schedule.steps) + " is too many",
                               "at most " + std::to_string(kMaxTraceSteps) + " steps"});
  } else if (last_step >= trace.schedule.steps) {
    reader.problems.push_back({{file, 0, 0},
                               "an op of step " + std::to_string(last_step) + " in a trace of " +
                                   std::to_string(trace.schedule.steps) + " steps (otherData.steps)",
                               "ops of steps 0 to otherData.steps - 1"});
  }
  trace.schedule.tokens_per_step = reader.head.tokens_per_step.value_or(0);
  for (size_t id = 0; id < reader.ops.size(); ++id) {
    if (!reader.ops[id]) reader.problems.push_back({{file, 0, 0}, "op id " + std::to_string(id) + " is missing",
                                                    "ops numbered 0..n-1, as Stowage writes them"});
  }
  if (reader.ops.empty()) reader.problems.push_back({{file, 0, 0}, "no ops", "op events (\"ph\":\"X\") on pid 1"});
  if (!reader.problems.empty()) return std::unexpected(reader.problems);
  for (auto& entry : reader.ops) {
    Op& op = entry->op;
    for (OpId d : op.deps) {
      // A schedule lists each op after those it waits for: a dependency on
      // a later op (a cycle, or one out of order) stalled the simulation
      // of the trace, "internal error" (issue 12).
      if (d < 0 || d >= op.id) {
        return fail({{file, 0, 0},
                     "op " + std::to_string(op.id) + " depends on op " + std::to_string(d) +
                         (d >= 0 && static_cast<size_t>(d) < reader.ops.size() ? ", which is not an earlier op"
                                                                                : ", which the trace lacks"),
                     kTraceDepsExpected});
      }
    }
    const auto slot = reader.slot_by_tid.find(entry->tid);
    const OpSpan span{.start = entry->start, .end = entry->end,
                      .slot = slot == reader.slot_by_tid.end() ? 0 : slot->second};
    int& slots = trace.schedule.lane_slots[static_cast<size_t>(op.lane)];
    slots = std::max(slots, span.slot + 1);
    trace.schedule.ops.push_back(std::move(op));
    trace.timeline.spans.push_back(span);
  }
  return trace;
}

}  // namespace

Result<RecordedTrace> parse_recorded_trace(std::string_view text, const std::string& file) {
  const PaddedText padded = padded_trace_text(text);
  return parse_padded(padded.text(), file);
}

Result<RecordedTrace> load_recorded_trace(const std::filesystem::path& path) {
  Result<PaddedText> text = read_trace_text(path.string());
  if (!text) return std::unexpected(text.error());
  return parse_padded(text->text(), path.string());
}

}  // namespace stowage::core
