// Clicking an op selects it and highlights what it waits on and what waits
// on it; the hit test finds the op under the mouse, even a thin one.
#include "gui/selection.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "gui/trace_loader.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

const std::string kSmallTrace = std::string(STOWAGE_TEST_DATA_DIR) + "/golden/small_trace.json";

std::vector<int64_t> ids(const TraceModel& m, const std::vector<int32_t>& indices) {
  std::vector<int64_t> out;
  for (const int32_t i : indices) out.push_back(m.ops[static_cast<size_t>(i)].id);
  std::ranges::sort(out);
  return out;
}

TEST(Selection, HighlightsWhatTheOpWaitsOnAndWhatWaitsOnIt) {
  const TraceModel m = *load_trace(kSmallTrace);
  // upload 3 (layers.1) waits on read 1 and is waited on by forward 5.
  const Selection s = select_op(m, m.index_of_id(3));
  ASSERT_TRUE(s.op.has_value());
  EXPECT_EQ(ids(m, s.waits_on), (std::vector<int64_t>{1}));
  EXPECT_EQ(ids(m, s.waited_by), (std::vector<int64_t>{5}));
  // forward 5 waits on upload 3 and forward 4; nothing waits on it.
  const Selection f = select_op(m, m.index_of_id(5));
  EXPECT_EQ(ids(m, f.waits_on), (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(f.waited_by.empty());
}

TEST(Selection, MatchesTheScheduleOnASimulatedStep) {
  const testing::Simulated s = testing::tiny_simulated();
  const TraceModel m = *parse_trace(testing::trace_text(s), "tiny.json");
  for (const core::Op& op : s.schedule.ops) {
    const Selection sel = select_op(m, m.index_of_id(op.id));
    std::vector<int64_t> deps(op.deps.begin(), op.deps.end());
    std::ranges::sort(deps);
    EXPECT_EQ(ids(m, sel.waits_on), deps) << op.name;
  }
}

TEST(Selection, NothingOrABadIndexSelectsNothing) {
  const TraceModel m = *load_trace(kSmallTrace);
  EXPECT_FALSE(select_op(m, std::nullopt).op.has_value());
  EXPECT_FALSE(select_op(m, 99).op.has_value());
}

TEST(HitTest, FindsTheOpUnderTheTimeOrTheNearestWithinTolerance) {
  const TraceModel m = *load_trace(kSmallTrace);
  // pcie.h2d (track 1): upload 2 on [2000, 3500], upload 3 on [3500, 5000].
  EXPECT_EQ(m.ops[static_cast<size_t>(*op_at(m, 1, 2500, 0))].id, 2);
  EXPECT_EQ(m.ops[static_cast<size_t>(*op_at(m, 1, 4000, 0))].id, 3);
  EXPECT_FALSE(op_at(m, 1, 6000, 500).has_value());                       // 1000 ns past the end
  EXPECT_EQ(m.ops[static_cast<size_t>(*op_at(m, 1, 5800, 1000))].id, 3);  // within 1000 ns
  EXPECT_FALSE(op_at(m, 7, 2500, 0).has_value());                         // no such track
}

}  // namespace
}  // namespace stowage::gui
