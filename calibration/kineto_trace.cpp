// kineto_trace.h, on simdjson's On-Demand API with its depth limit.
#include "calibration/kineto_trace.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/text_file.h"

namespace stowage::calibration {
namespace {

using core::Diagnostic;
using core::Diagnostics;
using core::Lane;
using core::OpKind;
using core::SimTime;

constexpr size_t kMaxDepth = 64;
constexpr size_t kMaxDiagnostics = 20;
constexpr std::string_view kStepPrefix = "ProfilerStep#";

struct Event {
  std::string name, category, thread;  // thread: pid and tid as written
  double ts = 0, dur = 0;              // µs
};

core::SourceLocation location_of(std::string_view text, size_t offset, const std::string& file) {
  core::SourceLocation where{.file = file, .line = 1, .column = 1};
  for (size_t i = 0; i < std::min(offset, text.size()); ++i) {
    if (text[i] == '\n') {
      ++where.line;
      where.column = 1;
    } else {
      ++where.column;
    }
  }
  return where;
}

std::string_view trimmed(std::string_view token) {
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' || token.back() == '\t'))
    token.remove_suffix(1);
  return token;
}

// One "ph": "X" event's fields; other phases come back with an empty name.
simdjson::error_code read_event(simdjson::ondemand::object object, Event& e, bool& complete) {
  complete = false;
  for (auto field : object) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key)) return err;
    simdjson::ondemand::value value;
    if (auto err = field.value().get(value)) return err;
    if (key == "ph") {
      std::string_view ph;
      if (auto err = value.get_string().get(ph)) return err;
      complete = ph == "X";
    } else if (key == "name" || key == "cat") {
      std::string_view s;
      if (auto err = value.get_string().get(s)) return err;
      (key == "name" ? e.name : e.category) = std::string(s);
    } else if (key == "ts" || key == "dur") {
      double x = 0;
      if (auto err = value.get_double().get(x)) return err;
      (key == "ts" ? e.ts : e.dur) = x;
    } else if (key == "pid" || key == "tid") {
      const std::string_view token = value.raw_json_token();
      e.thread += std::string(key) + "=" + std::string(trimmed(token)) + " ";
    }
  }
  return simdjson::SUCCESS;
}

Diagnostic json_error(simdjson::error_code err, std::string_view text, size_t offset,
                      const std::string& file) {
  std::string what = "JSON: " + std::string(simdjson::error_message(err));
  if (err == simdjson::DEPTH_ERROR) what += " (at most " + std::to_string(kMaxDepth) + " levels)";
  return {location_of(text, offset, file), what,
          "a PyTorch profiler trace (torch.profiler export_chrome_trace)"};
}

// Every complete ("X") event, in file order.
core::Result<std::vector<Event>> read_events(std::string_view text, const std::string& file) {
  const simdjson::padded_string padded(text.data(), text.size());
  simdjson::ondemand::parser parser;
  if (auto err = parser.allocate(padded.size(), kMaxDepth)) return core::fail(json_error(err, text, 0, file));
  simdjson::ondemand::document doc;
  if (auto err = parser.iterate(padded).get(doc)) return core::fail(json_error(err, text, 0, file));
  auto offset = [&]() -> size_t {
    const char* at = nullptr;
    if (doc.current_location().get(at)) return text.size();
    return static_cast<size_t>(at - padded.data());
  };
  std::vector<Event> events;
  Diagnostics problems;
  size_t unreported = 0;  // bad events past kMaxDiagnostics
  bool found = false;
  simdjson::ondemand::object root;
  if (auto err = doc.get_object().get(root)) return core::fail(json_error(err, text, offset(), file));
  for (auto field : root) {
    std::string_view key;
    if (auto err = field.unescaped_key().get(key)) return core::fail(json_error(err, text, offset(), file));
    if (key != "traceEvents") continue;  // its value is skipped unread
    found = true;
    simdjson::ondemand::array array;
    if (auto err = field.value().get_array().get(array))
      return core::fail(json_error(err, text, offset(), file));
    size_t index = 0;
    for (auto element : array) {
      const size_t at = offset();
      simdjson::ondemand::object object;
      Event e;
      bool complete = false;
      auto err = element.get_object().get(object);
      if (!err) err = read_event(object, e, complete);
      if (err) return core::fail(json_error(err, text, offset(), file));
      const std::string field_of = "traceEvents[" + std::to_string(index) + "]";
      if (complete && !(std::isfinite(e.ts) && std::isfinite(e.dur) && e.dur >= 0)) {
        if (problems.size() == kMaxDiagnostics) {
          ++unreported;
        } else {
          problems.push_back({location_of(text, at, file),
                              field_of + ": ts " + std::to_string(e.ts) + ", dur " + std::to_string(e.dur) +
                                  " is not a span",
                              "finite times and a duration >= 0, in µs"});
        }
      } else if (complete) {
        events.push_back(std::move(e));
      }
      ++index;
    }
  }
  if (!found)
    return core::fail(
        {{file, 0, 0}, "no traceEvents", "a PyTorch profiler trace (torch.profiler export_chrome_trace)"});
  if (unreported > 0)
    problems.push_back(
        {{file, 0, 0}, "and " + std::to_string(unreported) + " more events that are not spans", ""});
  if (!problems.empty()) return std::unexpected(std::move(problems));
  return events;
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

core::Result<KinetoTrace> parse_kineto_trace(std::string_view text, const std::string& file) {
  auto read = read_events(text, file);
  if (!read) return std::unexpected(read.error());
  std::vector<Event>& events = *read;
  std::vector<const Event*> steps;
  for (const Event& e : events) {
    if (e.name.starts_with(kStepPrefix)) steps.push_back(&e);
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

TraceMetrics kineto_metrics(const KinetoTrace& trace) {
  TraceMetrics m = trace_metrics(trace.schedule, trace.timeline);
  m.step_times = trace.step_times;
  return m;
}

core::Result<KinetoTrace> load_kineto_trace(const std::filesystem::path& path) {
  core::Result<std::string> text = core::read_text_file(path);
  if (!text) return std::unexpected(text.error());
  return parse_kineto_trace(*text, path.string());
}

}  // namespace stowage::calibration
