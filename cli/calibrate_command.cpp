// `stowage calibrate MEASURED.json... --machine M -o machine.yaml
// [--hold-out MEASURED.json...]`: fits the machine's cost parameters to
// measured timelines (calibration/fit.h), writes the machine profile with
// the fitted `calibration:` section, and reports the step and lane errors
// before and after on the hold-out traces, which the fit never saw. A
// PyTorch profiler trace is fitted lane by lane instead
// (calibration/lane_fit.h), on the schedule of a Stowage trace of the same
// plan (--schedule).
#include <cstdio>
#include <ostream>

#include "calibration/compare.h"
#include "calibration/fit.h"
#include "calibration/kineto_trace.h"
#include "calibration/lane_compare.h"
#include "calibration/lane_fit.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/machine_output.h"
#include "cli/output_file.h"
#include "cli/text_table.h"
#include "core/calibration_reader.h"
#include "core/text_file.h"
#include "core/trace_origin.h"
#include "core/trace_reader.h"
#include "planner/chosen_plan.h"
#include "planner/sustained_write.h"
#include "sim/simulator.h"

namespace stowage::cli {
namespace {

struct CalibrateArgs {
  std::vector<std::string> fit, hold_out;
  std::string machine, output;
  std::string schedule;  // with a PyTorch profiler trace: a Stowage trace of the plan it ran
};

std::string percent(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", e * 100);
  return buf;
}

// Step error and the worst lane's busy error of `trace` simulated with `params`.
std::pair<double, double> errors(const core::RecordedTrace& trace, const core::MachineSpec& m,
                                 const core::CostParameters& params) {
  const sim::Prediction p = sim::simulate(trace.schedule, m, {.params = params});
  auto c = calibration::compare(trace.schedule, p.timeline, trace.schedule, trace.timeline);
  if (!c) return {0, 0};
  double worst = 0;
  for (const auto& e : c->busy_error) {
    if (e && std::abs(*e) > std::abs(worst)) worst = *e;
  }
  return {c->step_error, worst};
}

// Writes `machine_text` with `params` as its calibration to the output.
int write_calibrated(const Context& context, const CalibrateArgs& a, const std::string& machine_text,
                     const core::CostParameters& params) {
  std::string profile = with_calibration(machine_text, core::calibration_yaml(params));
  if (!profile.starts_with("format: stowage/machine/v1")) profile = "format: stowage/machine/v1\n" + profile;
  if (core::Diagnostics d = write_file_atomically(a.output, profile); !d.empty()) {
    report(context, d);
    return kExitCannotWrite;
  }
  *context.out << "\nwrote " << a.output << '\n';
  return kExitOk;
}

// A run on another device than the profile's GPU (a CPU backend's run, or a
// DeepSpeed run on an H200, into an RTX 4090's profile) would give that
// profile the other machine's times: refused, saying so. Where either does
// not say (an older trace, a profile naming no device), it is fitted.
bool refused_for_another_device(const Context& context, const std::string& file,
                                const core::MachineSpec& machine, const core::TraceOrigin& ran_on) {
  const core::TraceOrigin profile = core::predicted_on(machine);
  if (core::same_device(profile, ran_on) != core::SameDevice::kNo) return false;
  *context.err << "error: " << file << " ran on " << core::describe(ran_on) << ", not on the GPU of "
               << core::describe(profile)
               << ": calibrate the profile of the machine it ran on (stowage profile -o M measures it)\n";
  return true;
}

// One PyTorch profiler trace, fitted lane by lane on --schedule's ops.
int calibrate_lanes(const Context& context, const CalibrateArgs& a, const core::MachineSpec& machine,
                    const std::string& machine_text, const std::string& kineto_text) {
  if (a.schedule.empty()) {
    *context.err
        << "error: " << a.fit.front()
        << " is a PyTorch profiler trace: give --schedule PREDICTED.json, a Stowage trace of the plan"
        << " that run followed (stowage simulate PLAN.yaml --trace PREDICTED.json)\n";
    return kExitUsage;
  }
  if (!a.hold_out.empty()) {
    *context.err
        << "error: --hold-out takes Stowage traces of one schedule; a PyTorch profiler trace is fitted"
        << " alone (compare the result against another run with stowage compare)\n";
    return kExitUsage;
  }
  auto kineto = calibration::parse_kineto_trace(kineto_text, a.fit.front());
  if (!kineto) return report(context, kineto.error());
  if (refused_for_another_device(context, a.fit.front(), machine, calibration::kineto_origin(*kineto)))
    return kExitUsage;
  auto plan = core::load_recorded_trace(a.schedule);
  if (!plan) return report(context, plan.error());
  const calibration::TraceMetrics measured = calibration::kineto_metrics(*kineto);
  const calibration::FitReport r =
      calibration::fit_lanes(plan->schedule, machine, machine.calibration, measured);
  std::ostream& out = *context.out;
  out << "Fitted lane by lane on " << a.fit.front() << " (a PyTorch profiler trace, "
      << measured.step_times.size() << " steps) with the ops of " << a.schedule << ":\n";
  for (const std::string& n : r.notes) out << "  " << n << '\n';
  auto step_error = [&](const core::CostParameters& p) {
    const core::Timeline t = sim::simulate(plan->schedule, machine, {.params = p}).timeline;
    return calibration::compare_lanes(calibration::trace_metrics(plan->schedule, t), measured).step_error;
  };
  out << "  step time error: " << percent(step_error(machine.calibration)) << " before, "
      << percent(step_error(r.params)) << " after (on the trace fitted: not a test of the fit)\n";
  return write_calibrated(context, a, machine_text, r.params);
}

int run_calibrate(const Context& context, const CalibrateArgs& a) {
  if (core::Diagnostics d = check_machine_output(a.output); !d.empty()) {
    report(context, d);
    return kExitCannotWrite;
  }
  const core::ProfileCatalog catalog = context.catalog();
  auto machine = catalog.machine(a.machine);
  if (!machine) return report(context, machine.error());
  // As `stowage run` predicts (planner/profile_inputs.cpp); said below where a trace writes to NVMe.
  const std::optional<std::string> assumed_write = planner::assume_sustained_write(*machine);
  auto machine_path = catalog.locate(core::ProfileKind::kMachine, a.machine);
  if (!machine_path) return report(context, machine_path.error());
  auto machine_text = core::read_input_file(*machine_path, core::InputKind::kProfile);
  if (!machine_text) return report(context, machine_text.error());
  if (a.fit.size() == 1) {
    auto text = core::read_input_file(a.fit.front(), core::InputKind::kTrace);
    if (!text) return report(context, text.error());
    if (calibration::looks_like_kineto(*text))
      return calibrate_lanes(context, a, *machine, *machine_text, *text);
  }
  if (!a.schedule.empty()) {
    *context.err
        << "error: --schedule is for fitting a PyTorch profiler trace; these traces carry their own ops\n";
    return kExitUsage;
  }
  std::vector<core::RecordedTrace> fit, hold;
  for (const auto& [names, into] : {std::pair{&a.fit, &fit}, std::pair{&a.hold_out, &hold}}) {
    for (const std::string& f : *names) {
      auto t = core::load_recorded_trace(f);
      if (!t) return report(context, t.error());
      // Fitted to a prediction (of another machine, as like as not), the
      // profile would take that machine's times for this one's.
      if (t->source == "predicted") {
        *context.err << "error: " << f
                     << " is a predicted trace (otherData.source): calibrate fits measured runs (stowage run"
                        " --trace MEASURED.json)\n";
        return kExitUsage;
      }
      // So would a run on another device than the profile's GPU.
      if (refused_for_another_device(context, f, *machine, t->origin)) return kExitUsage;
      into->push_back(std::move(*t));
    }
  }
  std::vector<calibration::MeasuredRun> runs;
  for (const core::RecordedTrace& t : fit) runs.push_back({&t.schedule, &t.timeline});
  const calibration::FitReport r = calibration::fit_cost_parameters(runs, *machine, machine->calibration);
  std::ostream& out = *context.out;
  std::optional<std::string> write_warning;  // once, whichever trace writes
  for (const std::vector<core::RecordedTrace>* traces : {&fit, &hold}) {
    for (const core::RecordedTrace& trace : *traces) {
      if (!write_warning) write_warning = planner::write_rate_warning(assumed_write, trace.schedule);
    }
  }
  if (write_warning) out << "warning: " << *write_warning << "\n\n";
  out << "Fitted on " << fit.size() << " trace" << (fit.size() == 1 ? "" : "s") << ":\n";
  for (const std::string& n : r.notes) out << "  " << n << '\n';
  TextTable t({Align::kLeft, Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight});
  t.row({"trace", "role", "step before", "step after", "worst lane before", "worst lane after"});
  auto add = [&](const core::RecordedTrace& trace, const std::string& name, const char* role) {
    const auto [sb, lb] = errors(trace, *machine, machine->calibration);
    const auto [sa, la] = errors(trace, *machine, r.params);
    t.row({name, role, percent(sb), percent(sa), percent(lb), percent(la)});
  };
  for (size_t i = 0; i < fit.size(); ++i) add(fit[i], a.fit[i], "fit");
  for (size_t i = 0; i < hold.size(); ++i) add(hold[i], a.hold_out[i], "hold-out");
  out << '\n';
  t.print(out, 2);
  if (hold.empty())
    out << "  (no --hold-out traces: the errors above are on the traces fitted, not a test of the fit)\n";
  return write_calibrated(context, a, *machine_text, r.params);
}

}  // namespace

CommandBody add_calibrate_command(CLI::App& app, Context& context) {
  CLI::App* sub = app.add_subcommand("calibrate", "Fit a machine's cost parameters to measured timelines");
  auto a = std::make_shared<CalibrateArgs>();
  sub->add_option("traces", a->fit,
                  "Measured traces to fit on (stowage run --trace), or one PyTorch profiler trace")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--hold-out", a->hold_out, "Measured traces to test the fit on, not fitted")
      ->check(CLI::ExistingFile);
  sub->add_option("--machine", a->machine, "The machine profile the traces ran on (name or path)")
      ->required();
  sub->add_option(
         "--schedule", a->schedule,
         "For a PyTorch profiler trace: a Stowage trace of the plan it ran (stowage simulate --trace)")
      ->check(CLI::ExistingFile);
  sub->add_option("-o,--output", a->output, "Write the calibrated machine profile here")->required();
  return [&context, a]() { return run_calibrate(context, *a); };
}

}  // namespace stowage::cli
