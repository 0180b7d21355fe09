// kineto_trace.h, through Stowage's one trace walker (core/trace_events.h).
#include "calibration/kineto_trace.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/trace_events.h"

namespace stowage::calibration {
namespace {

using core::Diagnostic;
using core::Diagnostics;
using core::Lane;
using core::OpKind;
using core::SimTime;

constexpr size_t kMaxDiagnostics = 20;
constexpr std::string_view kStepPrefix = "ProfilerStep#";
constexpr std::string_view kGpuAnnotation = "gpu_user_annotation";

struct Event {
  std::string name, category, thread;  // thread: pid and tid as written
  double ts = 0, dur = 0;              // µs
};

// Every complete ("X") event with usable times, through the one trace
// walker (core/trace_events.h); events with unusable times are diagnostics.
struct EventCollector final : core::TraceEventVisitor {
  const std::string& file;
  std::vector<Event> events;
  std::vector<std::string> device_names;  // deviceProperties'
  Diagnostics problems;
  size_t unreported = 0;  // bad events past kMaxDiagnostics

  explicit EventCollector(const std::string& f) : file(f) {}
  void header(const core::TraceHeader&) override {}
  void devices(const std::vector<std::string>& names) override { device_names = names; }
  [[nodiscard]] bool wants_phase(std::string_view ph) const override { return ph == "X"; }
  void event(const core::TraceEvent& e) override {
    if (!e.is_object || e.ph != "X") return;
    const double ts = e.ts.value_or(NAN), dur = e.dur.value_or(0);
    if (!(std::isfinite(ts) && std::isfinite(dur) && dur >= 0 && std::abs(ts) < 4e15 && dur < 4e15)) {
      if (problems.size() == kMaxDiagnostics) {
        ++unreported;
        return;
      }
      problems.push_back({{file, e.line(), 0},
                          "traceEvents[" + std::to_string(e.index) + "]: ts " + std::to_string(ts) +
                              ", dur " + std::to_string(dur) + " is not a span",
                          "finite times below 4e15 and a duration >= 0, in µs"});
      return;
    }
    events.push_back(
        {.name = std::string(e.name),
         .category = std::string(e.cat),
         .thread = "pid=" + std::to_string(e.pid.value_or(0)) + " tid=" + std::to_string(e.tid.value_or(0)),
         .ts = ts,
         .dur = dur});
  }
};

struct ReadEvents {
  std::vector<Event> events;
  std::vector<std::string> devices;
};

core::Result<ReadEvents> read_events(std::string_view padded_text, const std::string& file) {
  EventCollector collector(file);
  if (auto walked = core::walk_trace(padded_text, file, collector); !walked)
    return std::unexpected(walked.error());
  if (collector.unreported > 0)
    collector.problems.push_back(
        {{file, 0, 0},
         "and " + std::to_string(collector.unreported) + " more events that are not spans",
         ""});
  if (!collector.problems.empty()) return std::unexpected(std::move(collector.problems));
  return ReadEvents{.events = std::move(collector.events), .devices = std::move(collector.device_names)};
}

OpKind kind_of(Lane lane, std::string_view name) {
  switch (lane) {
    case Lane::kGpuCompute:
      return name.find("Backward") != std::string_view::npos || name.starts_with("autograd::")
                 ? OpKind::kBackward
                 : OpKind::kForward;
    case Lane::kPcieH2d:
      return OpKind::kUploadParams;
    case Lane::kPcieD2h:
      return OpKind::kOffloadGrads;
    case Lane::kNvmeRead:
      return OpKind::kReadStates;
    case Lane::kNvmeWrite:
      return OpKind::kWriteStates;
    case Lane::kCpuOptim:
      return OpKind::kOptimizer;
    case Lane::kGpuComm:
      return OpKind::kAllReduce;
  }
  return OpKind::kForward;
}

bool contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

std::optional<Lane> kineto_lane(std::string_view category, std::string_view name) {
  // A GPU trace mirrors each host annotation (ProfilerStep#N, Optimizer.step#...)
  // as a "gpu_user_annotation" on every stream that ran work inside it; the
  // host's own event is the one that counts, once.
  if (category == kGpuAnnotation) return std::nullopt;
  if (category == "kernel") {
    return name.starts_with("nccl") ? Lane::kGpuComm : Lane::kGpuCompute;
  }
  if (category == "gpu_memcpy") {
    if (contains(name, "HtoD")) return Lane::kPcieH2d;
    if (contains(name, "DtoH")) return Lane::kPcieD2h;
    return std::nullopt;  // device to device: inside HBM, not a lane of ours
  }
  if (name.starts_with("Optimizer.step#")) return Lane::kCpuOptim;
  if (name.starts_with("gloo:") || name.starts_with("nccl:")) return Lane::kGpuComm;
  if (contains(name, "pread") || contains(name, "aio_read")) return Lane::kNvmeRead;
  if (contains(name, "pwrite") || contains(name, "aio_write")) return Lane::kNvmeWrite;
  return std::nullopt;
}

bool looks_like_kineto(std::string_view text) {
  const std::string_view head = text.substr(0, 1 << 16);
  if (contains(head, "stowage/trace/v1")) return false;
  return contains(head, "\"schemaVersion\"") || contains(text, kStepPrefix);
}

namespace {

// `text` is followed by kTracePadding readable bytes.
core::Result<KinetoTrace> parse_padded(std::string_view text, const std::string& file) {
  auto read = read_events(text, file);
  if (!read) return std::unexpected(read.error());
  std::vector<Event>& events = read->events;
  std::vector<const Event*> steps;
  for (const Event& e : events) {
    if (e.name.starts_with(kStepPrefix) && e.category != kGpuAnnotation) steps.push_back(&e);
  }
  if (steps.empty())
    return core::fail(
        {{file, 0, 0},
         "no '" + std::string(kStepPrefix) + "N' annotations: the trace has no steps",
         "a profile taken with torch.profiler.schedule(...) and prof.step() after each training step"});
  std::sort(steps.begin(), steps.end(), [](const Event* a, const Event* b) { return a->ts < b->ts; });
  const double origin = steps.front()->ts;
  const std::string& training_thread = steps.front()->thread;
  auto ns = [&](double us) { return static_cast<SimTime>(std::llround((us - origin) * 1000.0)); };
  auto step_of = [&](double ts) -> int {
    for (size_t s = 0; s < steps.size(); ++s) {
      if (ts >= steps[s]->ts && ts < steps[s]->ts + steps[s]->dur) return static_cast<int>(s);
    }
    return -1;
  };

  KinetoTrace trace;
  trace.devices = std::move(read->devices);
  trace.has_kernels =
      std::any_of(events.begin(), events.end(), [](const Event& e) { return e.category == "kernel"; });
  for (const Event* s : steps) trace.step_times.push_back(ns(s->ts + s->dur) - ns(s->ts));

  // Without kernels, the compute is the training thread's outermost
  // operators inside a step: nesting by time on that thread (an enclosing
  // event starts no later and ends no earlier).
  std::vector<const Event*> top_level;
  if (!trace.has_kernels) {
    std::vector<const Event*> thread;
    for (const Event& e : events) {
      if (e.thread == training_thread && (e.category == "cpu_op" || e.category == "user_annotation") &&
          !e.name.starts_with(kStepPrefix))
        thread.push_back(&e);
    }
    std::sort(thread.begin(), thread.end(), [](const Event* a, const Event* b) {
      return a->ts != b->ts ? a->ts < b->ts : a->dur > b->dur;
    });
    double open_until = -INFINITY;
    for (const Event* e : thread) {
      if (e->ts < open_until) continue;  // inside the last outermost event
      if (e->category == "cpu_op") top_level.push_back(e);
      open_until = e->ts + e->dur;
    }
  }

  auto add = [&](const Event& e, Lane lane) {
    const int step = step_of(e.ts);
    if (step < 0) return;
    core::Op op{.id = static_cast<core::OpId>(trace.schedule.ops.size()),
                .kind = kind_of(lane, e.name),
                .lane = lane,
                .name = e.name,
                .step = step};
    trace.schedule.ops.push_back(std::move(op));
    trace.timeline.spans.push_back({.start = ns(e.ts), .end = ns(e.ts + e.dur)});
    ++trace.events_per_lane[static_cast<size_t>(lane)];
  };
  for (const Event& e : events) {
    if (std::optional<Lane> lane = kineto_lane(e.category, e.name)) add(e, *lane);
  }
  for (const Event* e : top_level) add(*e, Lane::kGpuCompute);
  trace.schedule.steps = static_cast<int>(steps.size());
  return trace;
}

}  // namespace

core::Result<KinetoTrace> parse_kineto_trace(std::string_view text, const std::string& file) {
  const core::PaddedText padded = core::padded_trace_text(text);
  return parse_padded(padded.text(), file);
}

core::TraceOrigin kineto_origin(const std::vector<std::string>& devices) {
  if (devices.empty()) return {};
  return core::measured_on(std::string(kKinetoBackend), devices.front());
}

TraceMetrics kineto_metrics(const KinetoTrace& trace) {
  TraceMetrics m = trace_metrics(trace.schedule, trace.timeline);
  m.step_times = trace.step_times;
  return m;
}

core::Result<KinetoTrace> load_kineto_trace(const std::filesystem::path& path) {
  core::Result<core::PaddedText> text = core::read_trace_text(path.string());
  if (!text) return std::unexpected(text.error());
  return parse_padded(text->text(), path.string());
}

}  // namespace stowage::calibration
