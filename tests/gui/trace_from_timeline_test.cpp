// One data model, two sources: a model built straight from the schedule and
// the simulated timeline equals the one loaded from the trace written from
// them, track for track and op for op.
#include "gui/trace_from_timeline.h"

#include <gtest/gtest.h>

#include "gui/trace_loader.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

TEST(TraceFromTimeline, SameTracksAndOpsAsTheWrittenTrace) {
  for (const auto which : {core::StandardPlacement::kZeroOffload, core::StandardPlacement::kZeroInfinity}) {
    const testing::Simulated s = testing::tiny_simulated(which);
    const TraceModel direct =
        trace_from_timeline(s.schedule, s.timeline, {.title = "tiny-gpt", .source = "predicted"});
    const TraceModel loaded = *parse_trace(testing::trace_text(s), "tiny.json");
    ASSERT_EQ(direct.tracks.size(), loaded.tracks.size());
    for (size_t t = 0; t < direct.tracks.size(); ++t) {
      EXPECT_EQ(direct.tracks[t].name, loaded.tracks[t].name);
      ASSERT_EQ(direct.tracks[t].ops.size(), loaded.tracks[t].ops.size()) << direct.tracks[t].name;
      for (size_t k = 0; k < direct.tracks[t].ops.size(); ++k) {
        EXPECT_EQ(direct.ops[static_cast<size_t>(direct.tracks[t].ops[k])].id,
                  loaded.ops[static_cast<size_t>(loaded.tracks[t].ops[k])].id);
      }
    }
    EXPECT_EQ(direct.ops.size(), loaded.ops.size());
    EXPECT_EQ(direct.end_time(), loaded.end_time());
  }
}

TEST(TraceFromTimeline, CapacityComesFromTheSchedule) {
  const testing::Simulated s = testing::tiny_simulated();
  const TraceModel m = trace_from_timeline(s.schedule, s.timeline, {});
  ASSERT_TRUE(m.capacity[0].has_value());
  EXPECT_EQ(*m.capacity[0], s.schedule.capacity[0]);  // the RTX 4090's 24 GiB
}

}  // namespace
}  // namespace stowage::gui
