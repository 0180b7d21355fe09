// The critical path the GUI computes from a trace is the simulator's own.
#include "gui/critical_path.h"

#include <gtest/gtest.h>

#include "gui/trace_loader.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

TEST(CriticalPath, FromTheTraceEqualsTheSimulatorsSummary) {
  for (const auto which : {core::StandardPlacement::kZeroOffload, core::StandardPlacement::kZeroInfinity}) {
    const testing::Simulated s = testing::tiny_simulated(which);
    const TraceModel m = *parse_trace(testing::trace_text(s), "tiny.json");
    std::vector<int64_t> path;
    for (const int32_t i : critical_path(m)) path.push_back(m.ops[static_cast<size_t>(i)].id);
    const std::vector<int64_t> expected(s.summary.critical_path.begin(), s.summary.critical_path.end());
    EXPECT_EQ(path, expected);
  }
}

TEST(CriticalPath, EmptyModelHasNone) {
  EXPECT_TRUE(critical_path(TraceModel{}).empty());
}

TEST(CriticalPath, FollowsTheLatestFinishingDependency) {
  // Four ops on one stream: op 3 depends on 1 (ends at 15) and on 2 (ends
  // at 30, later), so the walk back goes 3 -> 2; then each op follows the
  // one before it on the lane: 2 -> 1 -> 0.
  TraceModel m = testing::synthetic_model(0, 1, 1, 1);
  const std::vector<std::pair<SimTime, SimTime>> spans = {{0, 10}, {10, 15}, {15, 30}, {30, 40}};
  for (int i = 0; i < 4; ++i) {
    m.ops.push_back({.id = i,
                     .track = 0,
                     .start = spans[static_cast<size_t>(i)].first,
                     .end = spans[static_cast<size_t>(i)].second});
    m.tracks[0].ops.push_back(i);
  }
  m.set_deps(3, {1, 2});
  m.finish();
  EXPECT_EQ(critical_path(m), (std::vector<int32_t>{0, 1, 2, 3}));
}

}  // namespace
}  // namespace stowage::gui
