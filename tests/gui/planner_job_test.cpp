// The planner job reports progress through the search and stops promptly
// when asked: a stop requested from the progress callback (or from the GUI
// thread through the panel's Cancel) ends the search before its next
// simulation, with `cancelled` set and no plan.
#include "gui/planner_job.h"

#include <gtest/gtest.h>

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>
#include <atomic>
#include <cstdio>

#include "gui/main_window.h"
#include "gui/planner_panel.h"
#include "gui/trace_from_timeline.h"
#include "gui_test_data.h"
#include "planner/sustained_write.h"

namespace stowage::gui {
namespace {

const PlannerRequest kBig{.machine = "workstation-24gb-1nvme",
                          .model = "llama-2-13b",
                          .training = "default",
                          .profiles = STOWAGE_PROFILES_DIR};

TEST(PlannerJob, StopRequestedDuringTheSearchEndsItAtTheNextCandidate) {
  std::stop_source stop;
  int calls = 0, last_done = -1, most = 0;
  const core::Result<PlannerOutcome> out =
      run_planner(kBig, stop.get_token(), [&](const PlannerProgressReport& r) {
        if (r.stage != PlannerStage::kSearching || r.most == 0) return;
        ++calls;
        last_done = r.simulated;
        most = r.most;
        if (r.simulated == 2) stop.request_stop();  // as Cancel does, from another thread
      });
  ASSERT_TRUE(out.has_value()) << core::to_string(out.error());
  EXPECT_TRUE(out->cancelled);
  EXPECT_TRUE(out->result.cancelled);
  EXPECT_FALSE(out->plan.has_value());
  EXPECT_FALSE(out->timeline.has_value());
  // The callback came before simulations 0, 1 and 2; the third asked to stop,
  // so exactly two candidates were simulated (both baselines).
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(last_done, 2);
  EXPECT_GE(most, 4);  // at least the four baselines
  EXPECT_EQ(out->result.baselines.size(), 2u);
}

TEST(PlannerJob, StopBeforeTheSearchReturnsCancelledWithoutSearching) {
  std::stop_source stop;
  stop.request_stop();
  const core::Result<PlannerOutcome> out =
      run_planner(kBig, stop.get_token(), [](const PlannerProgressReport&) {});
  ASSERT_TRUE(out.has_value());
  EXPECT_TRUE(out->cancelled);
  EXPECT_TRUE(out->result.considered.empty());
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + '\n';
  return out;
}

// The planner panel plans as `stowage plan` does, from the same inputs
// (planner/profile_inputs.h). The workstation's drive gives no rate for
// after its write cache fills (profiles/nvme/samsung-990-pro-2tb.yaml), so
// both assume a quarter of its burst rate and say so. When the GUI loaded
// its own inputs, it planned the same machine at the burst rate and showed
// a faster step than the command, with no warning.
TEST(PlannerJob, PlansAtTheWriteRateThePlanCommandAssumesAndSaysSo) {
  using core::testing::bundled;
  using core::testing::must;
  std::stop_source never;
  const core::Result<PlannerOutcome> out = run_planner(kBig, never.get_token(), [](const PlannerProgressReport&) {});
  ASSERT_TRUE(out.has_value()) << core::to_string(out.error());
  ASSERT_TRUE(out->plan.has_value() && out->plan->predicted.has_value());

  core::MachineSpec machine = must(bundled().machine(kBig.machine));
  ASSERT_FALSE(machine.nvme.sustained_write.has_value()) << "the test needs a drive without the rate";
  const core::ModelSpec model = must(bundled().model(kBig.model));
  const core::TrainingSpec training = must(bundled().training(kBig.training));
  const auto planned_at = [&](double share) {
    machine.nvme.sustained_write = core::BytesPerSecond(machine.nvme.sequential_write.value() * share);
    const planner::PlanResult r = planner::search(machine, model, training);
    return r.best ? r.best->summary->step_time : core::Seconds(-1);
  };
  const core::Seconds assumed = planned_at(planner::kAssumedSustainedWriteShare);
  ASSERT_NE(assumed, planned_at(1.0)) << "the write rate must matter to this plan for the test to tell";
  EXPECT_EQ(out->plan->predicted->step_time, assumed);
  EXPECT_NE(joined(out->warnings).find("gives no write rate for after its write cache fills; assumed 1.725 GB/s"),
            std::string::npos)
      << joined(out->warnings);
}

// A bf16 training on a GPU without bf16 is refused, as `stowage plan`
// refuses it (tests/cli/plan_command_test.cpp), rather than planned at the
// fp16 rate; and so is a plan file that asks for it.
TEST(PlannerJob, RefusesBf16OnAGpuThatCannotRunIt) {
  std::stop_source never;
  const PlannerRequest t4{.machine = "cloud-t4-vm", .model = "gpt2-medium", .training = "default",
                          .profiles = STOWAGE_PROFILES_DIR};
  const core::Result<PlannerOutcome> out = run_planner(t4, never.get_token(), [](const PlannerProgressReport&) {});
  ASSERT_FALSE(out.has_value());
  const std::string says = core::to_string(out.error());
  EXPECT_NE(says.find("precision: training 'default' is bf16, which NVIDIA T4 16GB (in cloud-t4-vm) cannot run"),
            std::string::npos)
      << says;

  const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
  const core::TrainingSpec training = core::testing::must(catalog.training("default"));
  const core::Workload workload(core::testing::must(catalog.model("tiny-gpt")), training.sequence_length);
  const core::Result<TraceModel> opened = simulate_plan(
      {.machine = "cloud-t4-vm", .model = "tiny-gpt", .training = "default",
       .policy = core::policy_for(core::standard_placement(core::StandardPlacement::kZeroOffload, 1), workload,
                                  training)},
      catalog);
  ASSERT_FALSE(opened.has_value());
  EXPECT_NE(core::to_string(opened.error()).find("cannot run"), std::string::npos) << core::to_string(opened.error());
}

TEST(PlannerPanel, CancelStopsARunningSearchAndSaysSo) {
  PlannerPanel panel(STOWAGE_PROFILES_DIR);
  panel.set_inputs("workstation-24gb-1nvme", "llama-2-13b", "default");
  QSignalSpy finished(&panel, &PlannerPanel::finished);
  QSignalSpy ready(&panel, &PlannerPanel::planReady);
  QElapsedTimer timer;
  timer.start();
  panel.run();
  ASSERT_TRUE(panel.running());
  // Wait until the search reports its first candidates: the bar gets a range.
  ASSERT_TRUE(
      QTest::qWaitFor([&] { return panel.progress_bar().maximum() > 0 || !finished.isEmpty(); }, 120'000));
  ASSERT_TRUE(finished.isEmpty()) << "the search ended before it could be cancelled";
  EXPECT_GE(panel.progress_bar().maximum(), 4);
  panel.cancel();
  EXPECT_EQ(panel.status_text(), "Cancelling...");
  ASSERT_TRUE(finished.wait(120'000));  // generous: CI machines vary
  EXPECT_TRUE(ready.isEmpty());         // no plan from a cancelled run
  EXPECT_TRUE(panel.status_text().startsWith("Cancelled after")) << panel.status_text().toStdString();
  EXPECT_FALSE(panel.running());
  std::printf("[ planner cancel ] run + cancel took %lld ms\n", static_cast<long long>(timer.elapsed()));
}

// Under the chosen plan, the panel says what `stowage plan` warns of.
TEST(PlannerPanel, ShowsTheWarningsThePlanCommandPrints) {
  PlannerPanel panel(STOWAGE_PROFILES_DIR);
  panel.set_inputs(QString::fromStdString(kBig.machine), QString::fromStdString(kBig.model), "default");
  QSignalSpy finished(&panel, &PlannerPanel::finished);
  panel.run();
  ASSERT_TRUE(finished.wait(120'000));
  const std::string status = panel.status_text().toStdString();
  EXPECT_EQ(status.rfind("Chosen: ", 0), 0u) << status;
  EXPECT_NE(status.find("\nwarning: Samsung 990 PRO 2 TB (samsung-990-pro-2tb) gives no write rate"), std::string::npos)
      << status;
}

TEST(PlannerPanel, NothingFitsSaysWhatWouldMakeItFitAndMarksTheTimelineStale) {
  // Llama 3.1 405B on the T4 cloud VM, in fp16 (a T4 has no bf16): nothing
  // fits, and no single change does; the panel lists what was tried as
  // `stowage plan` does.
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.resize(1280, 720);
  w.show();
  const testing::Simulated s = testing::tiny_simulated();
  w.timeline().set_document(
      prepare_document(trace_from_timeline(s.schedule, s.timeline, {.source = "predicted"})));
  PlannerPanel& panel = w.planner();
  panel.set_inputs("cloud-t4-vm", "llama-3.1-405b", "fp16-adam");
  QSignalSpy finished(&panel, &PlannerPanel::finished);
  QSignalSpy nothing(&panel, &PlannerPanel::nothingFits);
  panel.run();
  ASSERT_TRUE(finished.wait(120'000));
  EXPECT_EQ(nothing.count(), 1);
  const std::string status = panel.status_text().toStdString();
  EXPECT_NE(status.find("Nothing fits"), std::string::npos) << status;
  EXPECT_NE(status.find("No single change tried makes it fit.\nChanges tried that are not enough on their own:\n  - "),
            std::string::npos)
      << status;
  EXPECT_NE(status.find("still does not fit"), std::string::npos) << status;
  EXPECT_TRUE(w.timeline().stale_note().startsWith("Stale")) << w.timeline().stale_note().toStdString();
}

}  // namespace
}  // namespace stowage::gui
