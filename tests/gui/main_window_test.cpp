// The whole window, offscreen: files open from the command-line path, the
// timeline and the memory view fill, a measured trace opens the
// comparison, a bad file reports its diagnostic, and a screenshot of the
// window is not blank and shows one track per lane and slot.
#include "gui/main_window.h"

#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QTemporaryDir>
#include <fstream>
#include <new>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/chrome_trace.h"
#include "core/plan_file.h"
#include "gui/background_task.h"
#include "gui/command_line.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

struct Files {
  QTemporaryDir dir;
  QString plan, trace, measured, bad;
  testing::Simulated sim = testing::tiny_simulated(core::StandardPlacement::kZeroInfinity);

  Files() {
    plan = dir.filePath("plan.yaml");
    trace = dir.filePath("trace.json");
    measured = dir.filePath("measured.json");
    bad = dir.filePath("bad.json");
    const core::TrainingSpec training = core::testing::must(core::testing::bundled().training("tiny"));
    const core::Workload w(core::testing::must(core::testing::bundled().model("tiny-gpt")),
                           training.sequence_length);
    const core::PlanFile p{
        .machine = "workstation-24gb-1nvme",
        .model = "tiny-gpt",
        .training = "tiny",
        .policy = core::policy_for(core::standard_placement(core::StandardPlacement::kZeroInfinity, 1), w,
                                   training)};
    std::ofstream(plan.toStdString()) << core::write_plan(p);
    std::ofstream(trace.toStdString()) << testing::trace_text(sim, "predicted");
    std::ofstream(measured.toStdString()) << testing::trace_text(sim, "measured");
    std::ofstream(bad.toStdString()) << "{\"traceEvents\": [\n  {\"ph\": \"X\" \"ts\": 1}\n]}";
  }
};

bool wait_for_loads(MainWindow& w) {
  if (!w.loading()) return true;
  QSignalSpy spy(&w, &MainWindow::loadsFinished);
  return spy.wait(30'000);
}

TEST(MainWindow, OpensAPlanAndATraceAndShowsThem) {
  Files f;
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.resize(1400, 900);
  w.show();
  w.open_files({f.plan, f.trace});
  ASSERT_TRUE(wait_for_loads(w));
  ASSERT_NE(w.timeline().document(), nullptr);
  EXPECT_EQ(w.timeline().document()->model.ops.size(), f.sim.schedule.ops.size());
  EXPECT_FALSE(w.measured_timeline().isVisible());

  const QImage shot = w.grab().toImage();
  std::set<QRgb> colours;
  for (int y = 0; y < shot.height(); y += 2) {
    for (int x = 0; x < shot.width(); x += 2) colours.insert(shot.pixel(x, y));
  }
  EXPECT_GT(colours.size(), 20u) << "the window looks blank";
  EXPECT_EQ(w.timeline().timeline_layout().track_row_count(),
            static_cast<int>(w.timeline().document()->model.tracks.size()));
}

TEST(MainWindow, AMeasuredTraceOpensTheComparison) {
  Files f;
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.resize(1400, 900);
  w.show();
  w.open_files({f.trace});
  ASSERT_TRUE(wait_for_loads(w));
  w.open_files({f.measured});  // its source is "measured": it goes under the predicted one
  ASSERT_TRUE(wait_for_loads(w));
  EXPECT_TRUE(w.measured_timeline().isVisible());
  ASSERT_NE(w.measured_timeline().document(), nullptr);
  EXPECT_EQ(w.measured_timeline().document()->model.info.source, "measured");
  EXPECT_TRUE(w.compare_origins_label().isHidden());  // neither trace says where its times come from
}

// Opened together (two files given, or dropped, at once), the prediction
// and the run load side by side: the run goes under the prediction
// whichever finishes first (the first to finish became the prediction).
TEST(MainWindow, APredictionAndARunOpenedTogetherAreComparedWhicheverLoadsFirst) {
  Files f;
  for (int round = 0; round < 3; ++round) {
    for (const QStringList& files : {QStringList{f.trace, f.measured}, QStringList{f.measured, f.trace}}) {
      SCOPED_TRACE(files.join(' ').toStdString());
      MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
      w.open_files(files);
      ASSERT_TRUE(wait_for_loads(w));
      ASSERT_NE(w.timeline().document(), nullptr);
      ASSERT_NE(w.measured_timeline().document(), nullptr);
      EXPECT_EQ(w.timeline().document()->model.info.source, "predicted");
      EXPECT_EQ(w.measured_timeline().document()->model.info.source, "measured");
    }
  }
  MainWindow alone(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);  // a run by itself is shown as it is
  alone.open_files({f.measured, f.plan});
  ASSERT_TRUE(wait_for_loads(alone));
  ASSERT_NE(alone.timeline().document(), nullptr);
  EXPECT_EQ(alone.timeline().document()->model.info.source, "measured");
}

// Above the comparison: what each side is of, and a note, highlighted,
// when the run was not on the predicted machine's GPU (an RTX 4090 here).
TEST(MainWindow, AComparisonSaysWhenTheRunWasNotOnThePredictedGpu) {
  Files f;
  auto write = [&](const QString& name, const core::TraceOptions& options) {
    std::ostringstream text;
    core::write_chrome_trace(f.sim.schedule, f.sim.timeline, options, text);
    std::ofstream(f.dir.filePath(name).toStdString()) << text.str();
    return f.dir.filePath(name);
  };
  const QString predicted =
      write("predicted.json", sim::predicted_trace_options(f.sim.summary, "predicted: tiny", f.sim.machine));
  const QString on_cpu = write("cpu.json", {.title = "measured: tiny",
                                            .source = "measured",
                                            .origin = core::measured_on("cpu", "Stowage CPU backend")});
  const QString on_4090 =
      write("4090.json", {.title = "measured: tiny",
                          .source = "measured",
                          .origin = core::measured_on("cuda", "NVIDIA GeForce RTX 4090")});
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.open_files({predicted});
  ASSERT_TRUE(wait_for_loads(w));
  w.open_files({on_cpu});
  ASSERT_TRUE(wait_for_loads(w));
  const QLabel& label = w.compare_origins_label();
  EXPECT_FALSE(label.isHidden());
  EXPECT_TRUE(
      label.text().startsWith("Predicted for workstation-24gb-1nvme, GPU NVIDIA GeForce RTX 4090 24GB\n"
                              "Measured on Stowage CPU backend (cpu backend)\n"
                              "Note: the run was not on the prediction's GPU"))
      << label.text().toStdString();
  EXPECT_FALSE(label.styleSheet().isEmpty());

  w.open_files({on_4090});
  ASSERT_TRUE(wait_for_loads(w));
  EXPECT_EQ(label.text(),
            "Predicted for workstation-24gb-1nvme, GPU NVIDIA GeForce RTX 4090 24GB\n"
            "Measured on NVIDIA GeForce RTX 4090 (cuda backend)");
  EXPECT_TRUE(label.styleSheet().isEmpty());
}

// A PyTorch profiler trace (tests/data/kineto) opened beside a prediction:
// drawn under it from its own first op (its times count from an epoch), not
// matched op by op (its ops have no Stowage ids: matched by order they gave
// every lane a made-up error), with the command that compares it by lane.
TEST(MainWindow, APytorchProfilerTraceIsDrawnButNotMatchedOpByOp) {
  Files f;
  std::ostringstream text;
  core::write_chrome_trace(f.sim.schedule, f.sim.timeline,
                           sim::predicted_trace_options(f.sim.summary, "predicted: tiny", f.sim.machine),
                           text);
  const QString predicted = f.dir.filePath("predicted.json");
  std::ofstream(predicted.toStdString()) << text.str();
  const QString kineto = STOWAGE_TEST_DATA_DIR "/kineto/deepspeed-zero-offload-h200.json";
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.open_files({predicted});
  ASSERT_TRUE(wait_for_loads(w));
  w.open_files({kineto});
  ASSERT_TRUE(wait_for_loads(w));
  const auto& run = w.measured_timeline().document();
  ASSERT_TRUE(run);
  EXPECT_TRUE(run->model.info.pytorch_profiler);
  EXPECT_EQ(run->model.info.origin, core::measured_on("PyTorch profiler", "NVIDIA H200"));
  EXPECT_EQ(run->model.begin_time(), 0);
  EXPECT_LT(run->model.end_time(), SimTime{1'000'000'000});  // two steps of about 63 ms
  EXPECT_EQ(w.compare_table().model()->rowCount(), 0);
  const QLabel& label = w.compare_origins_label();
  EXPECT_FALSE(label.isHidden());
  EXPECT_TRUE(
      label.text().startsWith("deepspeed-zero-offload-h200.json is a PyTorch profiler trace: its ops have "
                              "no Stowage ids"))
      << label.text().toStdString();
  EXPECT_TRUE(label.text().contains("stowage compare " + predicted + " " + kineto))
      << label.text().toStdString();
  EXPECT_TRUE(label.text().contains("\nMeasured on NVIDIA H200 (PyTorch profiler)"))
      << label.text().toStdString();

  // A Stowage run opened next is compared again, op by op.
  std::ostringstream measured;
  core::write_chrome_trace(f.sim.schedule, f.sim.timeline, {.title = "measured: tiny", .source = "measured"},
                           measured);
  const QString run_path = f.dir.filePath("measured.json");
  std::ofstream(run_path.toStdString()) << measured.str();
  w.open_files({run_path});
  ASSERT_TRUE(wait_for_loads(w));
  EXPECT_GT(w.compare_table().model()->rowCount(), 0);
  EXPECT_FALSE(w.compare_origins_label().text().contains("PyTorch profiler"));

  // Opened first, it is shown as the primary; a run opened next is not
  // matched to it either, and the command puts it second.
  MainWindow first(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  first.open_files({kineto});
  ASSERT_TRUE(wait_for_loads(first));
  first.open_files({run_path});
  ASSERT_TRUE(wait_for_loads(first));
  EXPECT_EQ(first.compare_table().model()->rowCount(), 0);
  EXPECT_TRUE(first.compare_origins_label().text().contains(
      "It is the measured side of stowage compare PREDICTED.json " + kineto))
      << first.compare_origins_label().text().toStdString();
}

TEST(MainWindow, ABadFileIsReportedAndLoadsNothing) {
  Files f;
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  ::testing::internal::CaptureStderr();
  w.open_files({f.bad});
  ASSERT_TRUE(wait_for_loads(w));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("bad.json:2:"), std::string::npos) << err;
  EXPECT_EQ(w.timeline().document(), nullptr);
  EXPECT_EQ(w.failed_inputs(), 1);  // --screenshot exits 65 for it
}

// Issue 12 item 6: a background task that threw aborted the GUI
// (QUnhandledException). Whatever a task throws becomes a diagnostic.
TEST(BackgroundTask, WhatATaskThrowsBecomesADiagnostic) {
  const auto out_of_memory = without_throwing<int>("plan.yaml", "cannot simulate the plan",
                                                   []() -> core::Result<int> { throw std::bad_alloc(); });
  ASSERT_FALSE(out_of_memory);
  EXPECT_EQ(core::to_string(out_of_memory.error()).substr(0, 54),
            "plan.yaml: cannot simulate the plan: out of memory (st");
  const auto thrown = without_throwing<int>("t.json", "cannot load",
                                            []() -> core::Result<int> { throw std::runtime_error("boom"); });
  ASSERT_FALSE(thrown);
  EXPECT_EQ(thrown.error()[0].to_string(), "t.json: cannot load: boom");
  const auto fine = without_throwing<int>("", "x", []() -> core::Result<int> { return 7; });
  EXPECT_EQ(fine.value(), 7);
}

// Issue 12 item 6: a plan with gradient_accumulation: 1000000 (the maximum
// a plan may give) made the simulation's allocation fail, and the GUI
// aborted. It is reported as a failed input at the plan's line (lowering
// refuses it before allocating; what a task throws is caught either way:
// BackgroundTask above); the window stays up.
TEST(MainWindow, APlanWhoseSimulationFailsIsReportedNotAborted) {
  Files f;
  std::ifstream in(f.plan.toStdString());
  std::stringstream text;
  text << in.rdbuf();
  std::string plan = text.str();
  const size_t at = plan.find("gradient_accumulation: ");
  ASSERT_NE(at, std::string::npos);
  plan.replace(at, plan.find('\n', at) - at, "gradient_accumulation: 1000000");
  const QString path = f.dir.filePath("huge.yaml");
  std::ofstream(path.toStdString()) << plan;
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  ::testing::internal::CaptureStderr();
  w.open_files({path});
  const bool finished = wait_for_loads(w);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(finished);
  EXPECT_EQ(w.failed_inputs(), 1) << err;
  EXPECT_NE(err.find("huge.yaml:"), std::string::npos) << err;
  EXPECT_NE(err.find("policy.gradient_accumulation: 1000000 micro-steps per step"), std::string::npos) << err;
}

TEST(MainWindow, APlanAloneIsSimulatedForItsTimeline) {
  Files f;
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.open_files({f.plan});
  ASSERT_TRUE(wait_for_loads(w));
  ASSERT_NE(w.timeline().document(), nullptr);
  EXPECT_GT(w.timeline().document()->model.ops.size(), 10u);
}

// What a prediction rests on is shown with it: the plan above (ZeRO-Infinity
// on the workstation) writes to a drive whose profile gives no post-cache
// rate, so its simulation warns as `stowage simulate` does; a trace file
// carries its warnings (otherData.warnings); a trace without any hides them.
TEST(MainWindow, APredictionsWarningsShowAboveTheTimeline) {
  Files f;
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.open_files({f.plan});
  ASSERT_TRUE(wait_for_loads(w));
  EXPECT_FALSE(w.warnings_label().isHidden());
  EXPECT_TRUE(w.warnings_label().text().startsWith(
      "warning: Samsung 990 PRO 2 TB (samsung-990-pro-2tb) gives no write rate for after its write cache fills"))
      << w.warnings_label().text().toStdString();

  core::TraceOptions options =
      sim::predicted_trace_options(f.sim.summary, "predicted: with warnings", f.sim.machine);
  options.warnings = {"first \"quoted\" one", "second\none"};
  std::ostringstream text;
  core::write_chrome_trace(f.sim.schedule, f.sim.timeline, options, text);
  const QString warned = f.dir.filePath("warned.json");
  std::ofstream(warned.toStdString()) << text.str();
  MainWindow from_file(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  from_file.open_files({warned});
  ASSERT_TRUE(wait_for_loads(from_file));
  EXPECT_FALSE(from_file.warnings_label().isHidden());
  EXPECT_EQ(from_file.warnings_label().text(), "warning: first \"quoted\" one\nwarning: second\none");

  from_file.open_files({f.trace});  // written without warnings
  ASSERT_TRUE(wait_for_loads(from_file));
  EXPECT_TRUE(from_file.warnings_label().isHidden());
}

TEST(CommandLine, ScreenshotSizeAndFiles) {
  const auto parsed =
      parse_command_line({"stowage-gui", "a.yaml", "b.json", "--screenshot", "o.png", "--size", "800x600"});
  ASSERT_TRUE(std::holds_alternative<GuiOptions>(parsed));
  const GuiOptions& o = std::get<GuiOptions>(parsed);
  EXPECT_EQ(o.files, QStringList({"a.yaml", "b.json"}));
  EXPECT_EQ(o.screenshot, "o.png");
  EXPECT_EQ(o.size, QSize(800, 600));
  EXPECT_TRUE(std::holds_alternative<QString>(parse_command_line({"stowage-gui", "--size", "big"})));
  EXPECT_FALSE(o.panel.has_value());
}

TEST(CommandLine, PanelTimelineHidesThePanels) {
  const auto parsed = parse_command_line({"stowage-gui", "--panel", "timeline"});
  ASSERT_TRUE(std::holds_alternative<GuiOptions>(parsed));
  EXPECT_EQ(std::get<GuiOptions>(parsed).panel, StartPanel::kTimeline);
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.resize(1280, 720);
  w.show();
  const int before = w.view_area().width();
  w.hide_panels();
  QCoreApplication::processEvents();
  EXPECT_GT(w.view_area().width(), before) << "the timeline did not get the panels' width";
  EXPECT_GE(w.view_area().width(), 1200);
}

}  // namespace
}  // namespace stowage::gui
