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

TEST(PlannerPanel, NothingFitsSaysWhatWouldMakeItFitAndMarksTheTimelineStale) {
  // Llama 3.1 405B on the T4 cloud VM: nothing fits, and no single change
  // does; the panel lists what was tried as `stowage plan` does.
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.resize(1280, 720);
  w.show();
  const testing::Simulated s = testing::tiny_simulated();
  w.timeline().set_document(
      prepare_document(trace_from_timeline(s.schedule, s.timeline, {.source = "predicted"})));
  PlannerPanel& panel = w.planner();
  panel.set_inputs("cloud-t4-vm", "llama-3.1-405b", "default");
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
