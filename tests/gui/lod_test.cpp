// The level-of-detail merge: every op's time stays covered at every level,
// narrow runs merge, wide ops stay alone, and levels shrink.
#include "gui/lod.h"

#include <gtest/gtest.h>

#include <random>

#include "gui_test_data.h"

namespace stowage::gui {
namespace {

// Each op [start, end] lies inside some box of every level, and each box
// covers exactly the positions [first, first + count) of its track.
void expect_every_op_covered(const TraceModel& m, const std::vector<TrackLod>& lod) {
  ASSERT_EQ(lod.size(), m.tracks.size());
  for (size_t t = 0; t < m.tracks.size(); ++t) {
    for (const LodLevel& level : lod[t].levels()) {
      size_t position = 0;
      for (const LodBox& box : level.boxes) {
        ASSERT_EQ(static_cast<size_t>(box.first), position) << "boxes must tile the track's ops in order";
        for (int32_t k = 0; k < box.count; ++k, ++position) {
          const TraceOp& op = m.ops[static_cast<size_t>(m.tracks[t].ops[position])];
          ASSERT_LE(box.start, op.start) << "level " << level.threshold;
          ASSERT_GE(box.end, op.end) << "level " << level.threshold;
        }
      }
      EXPECT_EQ(position, m.tracks[t].ops.size());
    }
  }
}

TEST(Lod, NarrowRunsMergeAndWideOpsStayAlone) {
  // Threshold 10 ns: three 2-ns ops 1 ns apart merge into [0, 8]; the 50-ns
  // op after a 4-ns gap stays alone; the last two 2-ns ops merge again.
  const std::vector<LodBox> items = {
      {.start = 0, .end = 2, .first = 0},   {.start = 3, .end = 5, .first = 1},
      {.start = 6, .end = 8, .first = 2},   {.start = 12, .end = 62, .first = 3},
      {.start = 63, .end = 65, .first = 4}, {.start = 66, .end = 68, .first = 5}};
  const std::vector<LodBox> merged = merge_level(items, 10);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].start, 0);
  EXPECT_EQ(merged[0].end, 8);
  EXPECT_EQ(merged[0].count, 3);
  EXPECT_EQ(merged[1].count, 1);
  EXPECT_EQ(merged[1].first, 3);
  EXPECT_EQ(merged[2].first, 4);
  EXPECT_EQ(merged[2].count, 2);
}

TEST(Lod, AGapWiderThanTheThresholdSplitsARun) {
  const std::vector<LodBox> items = {{.start = 0, .end = 2, .first = 0},
                                     {.start = 20, .end = 22, .first = 1}};
  EXPECT_EQ(merge_level(items, 10).size(), 2u);
}

TEST(Lod, RunsTakeTheCategoryOfTheirLongestOp) {
  const std::vector<LodBox> items = {
      {.start = 0, .end = 2, .first = 0, .busy = 2, .lead = 2, .category = OpCategory::kH2d},
      {.start = 2, .end = 7, .first = 1, .busy = 5, .lead = 5, .category = OpCategory::kNvmeRead}};
  EXPECT_EQ(merge_level(items, 10)[0].category, OpCategory::kNvmeRead);
}

TEST(Lod, EveryOpStaysCoveredOnRandomTracks) {
  std::mt19937_64 random(42);
  std::uniform_int_distribution<SimTime> width(0, 5000), gap(0, 20000);
  TraceModel m;
  m.tracks.resize(3);
  for (int i = 0; i < 30000; ++i) {
    Track& track = m.tracks[static_cast<size_t>(i % 3)];
    const SimTime start =
        track.ops.empty() ? 0 : m.ops[static_cast<size_t>(track.ops.back())].end + gap(random);
    m.ops.push_back({.id = i, .track = i % 3, .start = start, .end = start + width(random)});
    track.ops.push_back(i);
  }
  m.finish();
  const std::vector<TrackLod> lod = build_lod(m);
  expect_every_op_covered(m, lod);
  EXPECT_GT(lod[0].levels().size(), 3u);
  for (const TrackLod& t : lod) {
    for (size_t l = 1; l < t.levels().size(); ++l) {
      EXPECT_LT(t.levels()[l].boxes.size(), t.levels()[l - 1].boxes.size());
      EXPECT_GT(t.levels()[l].threshold, t.levels()[l - 1].threshold);
    }
  }
}

TEST(Lod, OverlappingOpsOnOneTrackStayCovered) {
  TraceModel m;
  m.tracks.resize(1);
  const std::vector<std::pair<SimTime, SimTime>> spans = {
      {0, 100}, {10, 12}, {50, 51}, {99, 300}, {120, 121}};
  for (int i = 0; i < 5; ++i) {
    m.ops.push_back(
        {.id = i, .start = spans[static_cast<size_t>(i)].first, .end = spans[static_cast<size_t>(i)].second});
    m.tracks[0].ops.push_back(i);
  }
  m.finish();
  expect_every_op_covered(m, build_lod(m, {.first_threshold = 2, .growth = 2}));
}

TEST(Lod, LevelForPicksTheCoarsestUnderTheLimit) {
  const TraceModel m = testing::synthetic_model(10000, 1, 10, 10);
  const std::vector<TrackLod> lod = build_lod(m);
  const TrackLod& t = lod[0];
  EXPECT_EQ(t.level_for(0).threshold, 0);  // no merging when zoomed right in
  const LodLevel& coarse = t.level_for(1e12);
  EXPECT_EQ(&coarse, &t.levels().back());
  EXPECT_EQ(coarse.boxes.size(), 1u);  // 10000 ops 10 ns apart: one run at any coarse zoom
}

TEST(Lod, VisibleFindsTheBoxesInASpan) {
  const TraceModel m = testing::synthetic_model(100, 1, 10, 10);  // op k on [20k, 20k + 10]
  const std::vector<TrackLod> lod = build_lod(m);
  const auto boxes = TrackLod::visible(lod[0].levels()[0], 205, 405);
  ASSERT_FALSE(boxes.empty());
  EXPECT_LE(boxes.front().end, 210);  // starts at op 10 [200, 210]: it overlaps 205
  EXPECT_GE(boxes.front().end, 205);
  EXPECT_EQ(boxes.back().start, 400);  // op 20
}

}  // namespace
}  // namespace stowage::gui
