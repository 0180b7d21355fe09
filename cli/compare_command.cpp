// `stowage compare PREDICTED.json MEASURED.json`: how far a predicted
// timeline is from a measured one of the same schedule, op by op and lane
// by lane (calibration/compare.h), in text or --json. With --machine and
// one trace, the prediction is made here: the trace's schedule simulated on
// that machine (its calibration included). A PyTorch profiler trace as the
// measured side (a DeepSpeed run, calibration/kineto_trace.h) is compared
// lane by lane instead (calibration/lane_compare.h).
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "calibration/compare.h"
#include "calibration/kineto_trace.h"
#include "calibration/lane_compare.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/output_file.h"
#include "cli/text_table.h"
#include "core/chrome_trace.h"
#include "core/text_file.h"
#include "core/trace_pair.h"
#include "core/trace_reader.h"
#include "planner/chosen_plan.h"
#include "planner/sustained_write.h"
#include "sim/simulator.h"

namespace stowage::cli {
namespace {

using core::Lane;

struct CompareArgs {
  std::vector<std::string> traces;
  std::string machine;
  std::string predicted_trace;  // with --machine: write the prediction made here
  std::string side_by_side;     // both timelines in one trace, for Perfetto
  bool as_json = false;
};

std::string percent(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", e * 100);
  return buf;
}
std::string secs(core::SimTime ns) {
  return core::format_seconds(core::Seconds(static_cast<double>(ns) * 1e-9));
}
std::string rate(double bps) {
  return bps > 0 ? core::format_bandwidth(core::BytesPerSecond(bps)) : "-";
}
double s_of(core::SimTime ns) {
  return static_cast<double>(ns) * 1e-9;
}

nlohmann::json metrics_json(const calibration::TraceMetrics& m) {
  nlohmann::json lanes = nlohmann::json::object(), waits = nlohmann::json::object();
  for (Lane lane : core::kAllLanes) {
    const calibration::LaneMetrics& l = m.lanes[static_cast<size_t>(lane)];
    if (l.ops == 0) continue;
    nlohmann::json j{{"busy_s", s_of(l.busy)},
                     {"steady_busy_per_step_s", s_of(l.steady_busy)},
                     {"ops", l.ops},
                     {"bytes", l.bytes},
                     {"achieved_bytes_per_s", l.achieved_bandwidth()}};
    if (calibration::is_transfer_lane(lane)) {
      j["hidden_s"] = s_of(l.hidden);
      j["exposed_s"] = s_of(l.exposed());
    }
    lanes[std::string(core::to_string(lane))] = j;
    if (m.gpu_waits_on[static_cast<size_t>(lane)] > 0)
      waits[std::string(core::to_string(lane))] = s_of(m.gpu_waits_on[static_cast<size_t>(lane)]);
  }
  nlohmann::json steps = nlohmann::json::array();
  for (core::SimTime t : m.step_times) steps.push_back(s_of(t));
  return {{"makespan_s", s_of(m.makespan)},
          {"steady_step_s", s_of(m.steady_step_time())},
          {"step_s", steps},
          {"gpu_idle_s", s_of(m.gpu_idle)},
          {"gpu_waits_on_s", waits},
          {"lanes", lanes}};
}

nlohmann::json comparison_json(const calibration::Comparison& c) {
  nlohmann::json busy = nlohmann::json::object(), steady = nlohmann::json::object(), kinds = nlohmann::json::array();
  for (Lane lane : core::kAllLanes) {
    if (const auto& e = c.busy_error[static_cast<size_t>(lane)])
      busy[std::string(core::to_string(lane))] = *e;
    if (const auto& e = c.steady_busy_error[static_cast<size_t>(lane)])
      steady[std::string(core::to_string(lane))] = *e;
  }
  for (const calibration::KindError& k : c.kinds) {
    kinds.push_back({{"lane", core::to_string(k.lane)},
                     {"kind", core::to_string(k.kind)},
                     {"ops", k.ops},
                     {"median_error", k.median},
                     {"p90_abs_error", k.p90}});
  }
  return {{"format", "stowage/compare/v1"},
          {"matched_ops", c.matched_ops},
          {"step_error", c.step_error},
          {"makespan_error", c.makespan_error},
          {"busy_error", busy},
          {"steady_busy_error", steady},
          {"op_kinds", kinds},
          {"most_wrong_lane",
           c.most_wrong_lane ? nlohmann::json(core::to_string(*c.most_wrong_lane)) : nlohmann::json()},
          {"predicted", metrics_json(c.predicted)},
          {"measured", metrics_json(c.measured)}};
}

// A trace's origin as JSON: only what it says; null when it says nothing.
nlohmann::json origin_json(const core::TraceOrigin& o) {
  if (o.empty()) return nullptr;
  nlohmann::json j = nlohmann::json::object();
  if (!o.machine.empty()) j["machine"] = o.machine;
  if (!o.gpu.empty()) j["gpu"] = o.gpu;
  if (!o.device_names.empty()) j["device_names"] = o.device_names;
  if (!o.backend.empty()) j["backend"] = o.backend;
  if (!o.device.empty()) j["device"] = o.device;
  return j;
}

// What each side of a comparison is of and, where the run was not on the
// predicted GPU, what that means (core/trace_origin.h): as text above the
// comparison, or as its JSON's fields.
void print_origins(std::ostream& out, const core::TraceOrigin& predicted, const core::TraceOrigin& measured) {
  if (const std::optional<std::string> difference = core::machine_difference(predicted, measured))
    out << "note: " << *difference << '\n';
  for (const std::string& line : core::comparison_origins(predicted, measured)) out << line << ".\n";
}

void add_origins(nlohmann::json& j, const core::TraceOrigin& predicted, const core::TraceOrigin& measured) {
  const std::optional<std::string> difference = core::machine_difference(predicted, measured);
  j["predicted_for"] = origin_json(predicted);
  j["measured_on"] = origin_json(measured);
  j["machine_difference"] = difference ? nlohmann::json(*difference) : nlohmann::json();
}

std::string waits_text(const calibration::TraceMetrics& m) {
  std::string s;
  core::SimTime charged = 0;
  for (Lane lane : core::kAllLanes) {
    const core::SimTime w = m.gpu_waits_on[static_cast<size_t>(lane)];
    charged += w;
    if (w > 0) s += (s.empty() ? "" : ", ") + std::string(core::to_string(lane)) + " " + secs(w);
  }
  if (m.gpu_idle > charged)
    s += (s.empty() ? "" : ", ") + std::string("after the last compute op ") + secs(m.gpu_idle - charged);
  return secs(m.gpu_idle) + (s.empty() ? "" : " (waiting on " + s + ")");
}

void print_text(std::ostream& out, const calibration::Comparison& c) {
  out << "Matched " << c.matched_ops << " ops by id. Errors are (measured - predicted) / predicted:"
      << " +100% is twice the predicted time.\n"
      << "  step time (steady state): predicted " << secs(c.predicted.steady_step_time()) << ", measured "
      << secs(c.measured.steady_step_time()) << ", error " << percent(c.step_error) << "\n"
      << "  whole timeline: predicted " << secs(c.predicted.makespan) << ", measured "
      << secs(c.measured.makespan) << ", error " << percent(c.makespan_error) << "\n\n";
  // Busy time: over the whole trace, and per step after the warm-up (what
  // the step time compares); then what the transfer lanes moved and left
  // exposed. Two tables, each within 100 columns.
  TextTable t({Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
               Align::kRight});
  t.row({"lane", "busy pred", "busy meas", "error", "per step pred", "per step meas", "error"});
  TextTable x({Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight});
  x.row({"lane", "bandwidth pred", "bandwidth meas", "exposed pred", "exposed meas"});
  for (Lane lane : core::kAllLanes) {
    const auto l = static_cast<size_t>(lane);
    if (!c.busy_error[l]) continue;
    const calibration::LaneMetrics &p = c.predicted.lanes[l], &m = c.measured.lanes[l];
    t.row({std::string(core::to_string(lane)), secs(p.busy), secs(m.busy), percent(*c.busy_error[l]),
           secs(p.steady_busy), secs(m.steady_busy), percent(c.steady_busy_error[l].value_or(0))});
    if (calibration::is_transfer_lane(lane)) {
      x.row({std::string(core::to_string(lane)), rate(p.achieved_bandwidth()), rate(m.achieved_bandwidth()),
             secs(p.exposed()), secs(m.exposed())});
    }
  }
  t.print(out, 2);
  out << "\n";
  x.print(out, 2);
  if (c.most_wrong_lane) {
    const auto l = static_cast<size_t>(*c.most_wrong_lane);
    out << "\n  most wrong lane: " << core::to_string(*c.most_wrong_lane) << " (busy per steady step "
        << percent(c.steady_busy_error[l].value_or(0)) << ", "
        << secs(c.measured.lanes[l].steady_busy - c.predicted.lanes[l].steady_busy)
        << " per step measured minus predicted)\n";
  } else {
    out << "\n  most wrong lane: none (every lane's busy time per step as predicted)\n";
  }
  out << "  gpu.compute idle: predicted " << waits_text(c.predicted) << "\n"
      << "                    measured  " << waits_text(c.measured) << "\n\n";
  TextTable k({Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kRight});
  k.row({"lane", "op kind", "ops", "median error", "p90 |error|"});
  for (const calibration::KindError& e : c.kinds) {
    k.row({std::string(core::to_string(e.lane)), std::string(core::to_string(e.kind)), std::to_string(e.ops),
           percent(e.median), percent(e.p90)});
  }
  k.print(out, 2);
}

nlohmann::json lane_comparison_json(const calibration::LaneComparison& c, const calibration::KinetoTrace& k) {
  nlohmann::json lanes = nlohmann::json::object();
  for (Lane lane : core::kAllLanes) {
    const auto l = static_cast<size_t>(lane);
    if (!c.busy_error[l]) continue;
    nlohmann::json j{{"busy_per_step_predicted_s", calibration::busy_per_step(c.predicted, lane) * 1e-9},
                     {"busy_per_step_measured_s", calibration::busy_per_step(c.measured, lane) * 1e-9},
                     {"busy_error", *c.busy_error[l]},
                     {"measured_events", k.events_per_lane[l]}};
    if (calibration::is_transfer_lane(lane)) {
      j["exposed_per_step_predicted_s"] = calibration::exposed_per_step(c.predicted, lane) * 1e-9;
      j["exposed_per_step_measured_s"] = calibration::exposed_per_step(c.measured, lane) * 1e-9;
    }
    lanes[std::string(core::to_string(lane))] = j;
  }
  return {{"format", "stowage/compare-lanes/v1"},
          {"measured_kind", k.has_kernels ? "pytorch-profiler-gpu" : "pytorch-profiler-cpu-accelerator"},
          {"step_error", c.step_error},
          {"lanes", lanes},
          {"no_lane_per_step_predicted_s", calibration::no_lane_per_step(c.predicted) * 1e-9},
          {"no_lane_per_step_measured_s", calibration::no_lane_per_step(c.measured) * 1e-9},
          {"most_wrong_lane",
           c.most_wrong_lane ? nlohmann::json(core::to_string(*c.most_wrong_lane)) : nlohmann::json()},
          {"predicted", metrics_json(c.predicted)},
          {"measured", metrics_json(c.measured)}};
}

void print_lane_text(std::ostream& out, const calibration::LaneComparison& c,
                     const calibration::KinetoTrace& k) {
  auto per_step = [](double ns) { return secs(static_cast<core::SimTime>(std::llround(ns))); };
  out << "Compared lane by lane: the measured side is a PyTorch profiler trace ("
      << c.measured.step_times.size() << " profiled steps, "
      << (k.has_kernels
              ? "GPU kernels as gpu.compute"
              : "no GPU kernels: DeepSpeed's CPU accelerator, whose top-level operators are the compute")
      << "; mapping in docs/fidelity.md).\n"
      << "Its ops have no Stowage ids, so there is no per-op error. Errors are (measured - predicted) / "
         "predicted:"
      << " +100% is twice the predicted time.\n"
      << "  step time (steady state): predicted " << secs(c.predicted.steady_step_time()) << ", measured "
      << secs(c.measured.steady_step_time()) << ", error " << percent(c.step_error) << "\n\n";
  TextTable t({Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kRight,
               Align::kRight});
  t.row({"lane", "busy/step pred", "busy/step meas", "error", "exposed/step pred", "exposed/step meas",
         "events meas"});
  for (Lane lane : core::kAllLanes) {
    const auto l = static_cast<size_t>(lane);
    if (!c.busy_error[l]) continue;
    const bool transfer = calibration::is_transfer_lane(lane);
    t.row({std::string(core::to_string(lane)), per_step(calibration::busy_per_step(c.predicted, lane)),
           per_step(calibration::busy_per_step(c.measured, lane)), percent(*c.busy_error[l]),
           transfer ? per_step(calibration::exposed_per_step(c.predicted, lane)) : "-",
           transfer ? per_step(calibration::exposed_per_step(c.measured, lane)) : "-",
           std::to_string(k.events_per_lane[l])});
  }
  t.print(out, 2);
  out << "\n  in no lane, per step: predicted " << per_step(calibration::no_lane_per_step(c.predicted))
      << ", measured " << per_step(calibration::no_lane_per_step(c.measured))
      << " (the steps' time that no lane above covers: on a framework's trace, its host-side work between "
         "operators)\n";
  if (c.most_wrong_lane) {
    out << "  most wrong lane: " << core::to_string(*c.most_wrong_lane) << " (busy per step "
        << percent(*c.busy_error[static_cast<size_t>(*c.most_wrong_lane)]) << ")\n";
  } else {
    out << "  most wrong lane: none (every lane's busy time as predicted)\n";
  }
}

int run_lane_compare(const Context& context, const CompareArgs& a, const std::string& measured_text,
                     const core::RecordedTrace* predicted) {
  if (!a.side_by_side.empty()) {
    *context.err << "error: --side-by-side needs two Stowage traces of one schedule; " << a.traces.back()
                 << " is a PyTorch profiler trace (open it beside the prediction in Perfetto instead)\n";
    return kExitUsage;
  }
  if (!a.machine.empty()) {
    *context.err << "error: " << a.traces.back()
                 << ": a PyTorch profiler trace has no Stowage schedule to simulate with --machine"
                 << " (give the prediction as PREDICTED.json: stowage simulate ... --trace PREDICTED.json)\n";
    return kExitUsage;
  }
  auto measured = calibration::parse_kineto_trace(measured_text, a.traces.back());
  if (!measured) return report(context, measured.error());
  const calibration::TraceMetrics measured_metrics = calibration::kineto_metrics(*measured);
  const calibration::LaneComparison c = calibration::compare_lanes(
      calibration::trace_metrics(predicted->schedule, predicted->timeline), measured_metrics);
  const core::TraceOrigin measured_on = calibration::kineto_origin(*measured);
  if (a.as_json) {
    nlohmann::json j = lane_comparison_json(c, *measured);
    j["warnings"] = predicted->warnings;
    add_origins(j, predicted->origin, measured_on);
    *context.out << j.dump(2) << '\n';
  } else {
    for (const std::string& w : predicted->warnings) *context.out << "warning: " << w << '\n';
    print_origins(*context.out, predicted->origin, measured_on);
    print_lane_text(*context.out, c, *measured);
  }
  return kExitOk;
}

int run_compare(const Context& context, const CompareArgs& a) {
  if (a.traces.size() != (a.machine.empty() ? 2u : 1u)) {
    *context.err << "error: give PREDICTED.json MEASURED.json, or --machine M and one MEASURED.json\n";
    return kExitUsage;
  }
  if (!a.predicted_trace.empty()) {
    if (a.machine.empty()) {
      *context.err << "error: --predicted-trace needs --machine (it writes the prediction made here)\n";
      return kExitUsage;
    }
    if (auto checked = check_output_path(a.predicted_trace); !checked) {
      report(context, checked.error());
      return kExitCannotWrite;
    }
  }
  if (!a.side_by_side.empty()) {
    if (auto checked = check_output_path(a.side_by_side); !checked) {
      report(context, checked.error());
      return kExitCannotWrite;
    }
  }
  // Both traces read before either is reported on: two bad files are
  // reported together, not one per attempt.
  core::Diagnostics problems;
  core::RecordedTrace predicted;
  if (a.machine.empty()) {
    auto p = core::load_recorded_trace(a.traces.front());
    if (p) {
      predicted = std::move(*p);
    } else {
      problems = p.error();
    }
  }
  auto measured_text = core::read_input_file(a.traces.back(), core::InputKind::kTrace);
  std::optional<core::RecordedTrace> measured;
  if (!measured_text) {
    problems.insert(problems.end(), measured_text.error().begin(), measured_text.error().end());
  } else if (calibration::looks_like_kineto(*measured_text)) {
    if (!problems.empty()) return report(context, problems);
    return run_lane_compare(context, a, *measured_text, a.machine.empty() ? &predicted : nullptr);
  } else if (auto parsed = core::parse_recorded_trace(*measured_text, a.traces.back()); !parsed) {
    problems.insert(problems.end(), parsed.error().begin(), parsed.error().end());
  } else {
    measured = std::move(*parsed);
  }
  if (!problems.empty()) return report(context, problems);
  // The two given the wrong way round would print every error with its
  // sign turned and its base the other trace's: refused, not guessed at.
  // Two runs (both measured) or two predictions compare as given.
  if (a.machine.empty() && predicted.source == "measured" && measured->source == "predicted") {
    *context.err << "error: " << a.traces.front() << " is a measured trace and " << a.traces.back()
                 << " a predicted one (otherData.source); give the prediction first: stowage compare "
                 << a.traces.back() << " " << a.traces.front() << "\n";
    return kExitUsage;
  }
  std::string predicted_name;
  core::TraceOptions predicted_options;  // as written: its title, and the simulator's step when re-simulated
  if (a.machine.empty()) {
    predicted_name = a.traces.front();
    predicted_options = {.title = predicted.title,
                         .source = "predicted",
                         .warnings = predicted.warnings,
                         .origin = predicted.origin};
  } else {
    auto machine = context.catalog().machine(a.machine);
    if (!machine) return report(context, machine.error());
    // As `stowage run` and `simulate` take the machine (planner/profile_inputs.cpp).
    const std::optional<std::string> assumed = planner::assume_sustained_write(*machine);
    predicted.schedule = measured->schedule;
    if (auto w = planner::write_rate_warning(assumed, predicted.schedule)) predicted.warnings = {*w};
    sim::Prediction prediction = sim::simulate(predicted.schedule, *machine);
    predicted.timeline = std::move(prediction.timeline);
    // A trace carries no memory effects, so the re-simulation's memory is
    // all zeros: written, it would claim a 0 B peak (the GUI then says "no
    // memory in trace" and draws the measured run's alone).
    predicted.timeline.memory.clear();
    predicted_name = "the simulation on " + a.machine;
    std::string_view what = measured->title;
    if (what.starts_with("measured: ")) what.remove_prefix(std::string_view("measured: ").size());
    predicted.title = "predicted on " + machine->name + ": " + std::string(what);
    predicted_options = sim::predicted_trace_options(prediction.summary, predicted.title, *machine);
    predicted.origin = predicted_options.origin;
    predicted_options.warnings = predicted.warnings;
    if (!a.predicted_trace.empty()) {
      std::ostringstream text;
      core::write_chrome_trace(predicted.schedule, predicted.timeline, predicted_options, text);
      if (core::Diagnostics d = write_file_atomically(a.predicted_trace, text.str()); !d.empty()) {
        report(context, d);
        return kExitCannotWrite;
      }
    }
  }
  auto c = calibration::compare(predicted.schedule, predicted.timeline, measured->schedule,
                                measured->timeline, predicted_name, a.traces.back());
  if (!c) return report(context, c.error());
  if (!a.side_by_side.empty()) {
    std::ostringstream text;
    core::write_trace_pair({&predicted.schedule, &predicted.timeline, predicted_options},
                           {&measured->schedule,
                            &measured->timeline,
                            {.title = measured->title, .source = "measured", .origin = measured->origin}},
                           text);
    if (core::Diagnostics d = write_file_atomically(a.side_by_side, text.str()); !d.empty()) {
      report(context, d);
      return kExitCannotWrite;
    }
  }
  // Whether the two are of one machine; and, first, what the prediction
  // rests on (its trace's, or the re-simulation's).
  if (a.as_json) {
    nlohmann::json j = comparison_json(*c);
    j["warnings"] = predicted.warnings;
    add_origins(j, predicted.origin, measured->origin);
    *context.out << j.dump(2) << '\n';
  } else {
    for (const std::string& w : predicted.warnings) *context.out << "warning: " << w << '\n';
    print_origins(*context.out, predicted.origin, measured->origin);
    print_text(*context.out, *c);
  }
  return kExitOk;
}

}  // namespace

CommandBody add_compare_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand(
      "compare", "Compare a predicted with a measured timeline, op by op and lane by lane");
  auto a = std::make_shared<CompareArgs>();
  sub->add_option(
         "traces", a->traces,
         "PREDICTED.json MEASURED.json (or one MEASURED.json with --machine); MEASURED may be a PyTorch "
         "profiler trace, compared by lane")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--machine", a->machine,
                  "Predict here: simulate the measured trace's ops on this machine profile");
  sub->add_option(
      "--predicted-trace", a->predicted_trace,
      "With --machine: write the prediction as a trace (to open beside the measured one in the GUI)");
  sub->add_option(
      "--side-by-side", a->side_by_side,
      "Write both timelines into one trace, predicted above measured, to open in ui.perfetto.dev");
  sub->add_flag("--json", a->as_json, "Print JSON (format stowage/compare/v1)");
  return [&context, a]() { return run_compare(context, *a); };
}

}  // namespace stowage::cli
