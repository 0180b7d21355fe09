// Rendering offscreen: a painted timeline is not blank, shows one band of
// op colours per track, and draws no more boxes than there are pixels.
#include "gui/timeline_painter.h"

#include <gtest/gtest.h>

#include <QImage>
#include <set>

#include "gui/memory_painter.h"
#include "gui/palette.h"
#include "gui/trace_from_timeline.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

constexpr int kWidth = 1200;

struct Rendered {
  QImage image;
  int boxes = 0;
};

Rendered render(const TimelineDocument& doc, const TimelineLayout& layout,
                const TimelineHighlight& highlight = {}) {
  TimeAxis axis;
  axis.set_width(kWidth - layout.metrics().label_width);
  axis.set_bounds(doc.model.begin_time(), doc.model.end_time());
  axis.fit_all();
  QImage image(kWidth, static_cast<int>(layout.height()), QImage::Format_RGB32);
  QPainter painter(&image);
  const int boxes = TimelinePainter(doc, layout, axis).paint(painter, kWidth, highlight);
  return {std::move(image), boxes};
}

bool is_op_colour(QRgb pixel) {
  for (int c = 0; c < kOpCategoryCount; ++c) {
    const QColor base = color_of(static_cast<OpCategory>(c));
    if (pixel == base.rgb() || pixel == base.lighter(118).rgb()) return true;
  }
  return false;
}

// Rows of the plotting area whose middle line holds op colours.
int rows_with_ops(const QImage& image, const TimelineLayout& layout) {
  int rows = 0;
  for (const LayoutRow& row : layout.rows()) {
    if (row.kind != LayoutRow::Kind::kTrack) continue;
    const int y = static_cast<int>(row.top + row.height / 2);
    bool found = false;
    for (int x = static_cast<int>(layout.metrics().label_width); x < image.width() && !found; ++x) {
      found = is_op_colour(image.pixel(x, y));
    }
    rows += found ? 1 : 0;
  }
  return rows;
}

std::shared_ptr<const TimelineDocument> tiny_document() {
  const testing::Simulated s = testing::tiny_simulated(core::StandardPlacement::kZeroInfinity);
  return prepare_document(trace_from_timeline(s.schedule, s.timeline, {.source = "predicted"}));
}

TEST(TimelinePainter, RenderIsNotBlankAndShowsEveryTrack) {
  const auto doc = tiny_document();
  const TimelineLayout layout(doc->model, {});
  const Rendered r = render(*doc, layout);
  std::set<QRgb> colours;
  int op_pixels = 0;
  for (int y = 0; y < r.image.height(); ++y) {
    for (int x = 0; x < r.image.width(); ++x) {
      colours.insert(r.image.pixel(x, y));
      op_pixels += is_op_colour(r.image.pixel(x, y)) ? 1 : 0;
    }
  }
  EXPECT_GT(colours.size(), 8u) << "a blank or one-colour image";
  EXPECT_GT(op_pixels, r.image.width() * r.image.height() / 20) << "ops cover less than 5 % of the image";
  EXPECT_GE(doc->model.tracks.size(), 5u);  // compute, h2d, d2h, nvme read and write, optim at least
  EXPECT_EQ(rows_with_ops(r.image, layout), static_cast<int>(doc->model.tracks.size()));
}

TEST(TimelinePainter, MergesSoNoMoreBoxesThanPixels) {
  // 200 000 ops of 10 ns, 10 ns apart, on 4 tracks: 1 ms of ops over about
  // 1080 px, ~900 ns per pixel, so every op is far under 3 px.
  const auto doc = prepare_document(testing::synthetic_model(200'000, 4, 10, 10));
  const TimelineLayout layout(doc->model, {});
  const Rendered r = render(*doc, layout);
  EXPECT_LE(r.boxes, 4 * kWidth);
  EXPECT_EQ(rows_with_ops(r.image, layout), 4);
}

TEST(TimelinePainter, SelectionAndCriticalPathDrawTheirColours) {
  const auto doc = tiny_document();
  const TimelineLayout layout(doc->model, {});
  // The op with the most dependencies, so both highlight colours appear.
  int32_t busiest = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(doc->model.ops.size()); ++i) {
    if (doc->model.deps(i).size() + doc->model.consumers(i).size() >
        doc->model.deps(busiest).size() + doc->model.consumers(busiest).size())
      busiest = i;
  }
  const auto count = [](const QImage& image, const QColor& colour) {
    int n = 0;
    for (int y = 0; y < image.height(); ++y)
      for (int x = 0; x < image.width(); ++x) n += image.pixel(x, y) == colour.rgb() ? 1 : 0;
    return n;
  };
  const Rendered plain = render(*doc, layout);
  const Rendered selected = render(*doc, layout, {.selection = select_op(doc->model, busiest)});
  const Rendered critical = render(*doc, layout, {.critical_path = true});
  EXPECT_EQ(count(plain.image, waits_on_color()), 0);
  EXPECT_GT(count(selected.image, waits_on_color()) + count(selected.image, waited_by_color()), 20);
  EXPECT_EQ(count(plain.image, critical_color()), 0);
  EXPECT_GT(count(critical.image, critical_color()), 50);
}

TEST(TimelinePainter, MeasuredOpTwentyPercentSlowerGetsTheSlowerStrip) {
  // Two tracks of 20 ops, 1 µs each, 0.5 µs apart: at 1080 px over ~30 µs
  // each op is ~35 px wide, drawn alone. The measured copy has op 6 1.2 µs
  // long (+20 %: slower), op 8 0.85 µs (-15 %: faster), op 10 1.05 µs
  // (+5 %: within 10 %, no strip).
  const TraceModel predicted = testing::synthetic_model(40, 2, 1000, 500);
  TraceModel measured = predicted;
  measured.ops[6].end = measured.ops[6].start + 1200;
  measured.ops[8].end = measured.ops[8].start + 850;
  measured.ops[10].end = measured.ops[10].start + 1050;
  const auto compare = std::make_shared<const CompareModel>(predicted, measured);
  EXPECT_EQ(compare->measured_changes()[6], DurationChange::kSlower);
  EXPECT_EQ(compare->measured_changes()[8], DurationChange::kFaster);
  EXPECT_EQ(compare->measured_changes()[10], DurationChange::kNone);
  EXPECT_EQ(compare->measured_changes()[0], DurationChange::kNone);

  const auto doc = prepare_document(std::move(measured));
  const TimelineLayout layout(doc->model, {});
  const TimelineHighlight marks{
      .changes = std::shared_ptr<const std::vector<DurationChange>>(compare, &compare->measured_changes())};
  const Rendered r = render(*doc, layout, marks);
  TimeAxis axis;
  axis.set_width(kWidth - layout.metrics().label_width);
  axis.set_bounds(doc->model.begin_time(), doc->model.end_time());
  axis.fit_all();
  const TimelinePainter painter(*doc, layout, axis);
  // The strip is the top rows of the box (row top + 2), in the middle of the op.
  const auto strip_pixel = [&](int32_t op) {
    const QRectF box = *painter.op_rect(op);
    return r.image.pixel(static_cast<int>(box.center().x()), static_cast<int>(box.top() + 2));
  };
  EXPECT_EQ(strip_pixel(6), slower_color().rgb());
  EXPECT_EQ(strip_pixel(8), faster_color().rgb());
  EXPECT_NE(strip_pixel(10), slower_color().rgb());
  EXPECT_NE(strip_pixel(10), faster_color().rgb());
  // Without the comparison, no strips at all.
  const Rendered plain = render(*doc, layout);
  EXPECT_NE(plain.image.pixel(static_cast<int>(painter.op_rect(6)->center().x()),
                              static_cast<int>(painter.op_rect(6)->top() + 2)),
            slower_color().rgb());
}

TEST(TimelinePainter, BoxAtFindsTheMergedRunAsDrawn) {
  // 1000 ops of 10 ns, 10 ns apart, one track: 20 µs over ~1080 px, ~18 ns
  // per pixel, so ops (0.5 px) merge into runs.
  const auto doc = prepare_document(testing::synthetic_model(1000, 1, 10, 10));
  const TimelineLayout layout(doc->model, {});
  TimeAxis axis;
  axis.set_width(kWidth - layout.metrics().label_width);
  axis.set_bounds(doc->model.begin_time(), doc->model.end_time());
  axis.fit_all();
  const TimelinePainter painter(*doc, layout, axis);
  const double x = layout.metrics().label_width + axis.to_pixel(10'000);  // the middle
  const std::optional<DrawnBox> box = painter.box_at(0, x);
  ASSERT_TRUE(box.has_value());
  EXPECT_GT(box->count, 1);
  EXPECT_LE(box->start, 10'000);
  EXPECT_GE(box->end, 10'000);
  EXPECT_EQ(box->busy, 10 * box->count);  // each merged op is 10 ns long
  int total = 0;
  for (const DrawnBox& b : painter.track_boxes(0)) total += b.count;
  EXPECT_EQ(total, 1000);  // every op in exactly one drawn box
}

TEST(MemoryPainter, DrawsARowPerTierWithCapacity) {
  const auto doc = tiny_document();
  TimeAxis axis;
  axis.set_width(kWidth - 170);
  axis.set_bounds(doc->model.begin_time(), doc->model.end_time());
  axis.fit_all();
  const MemoryPainter painter(doc->model, axis, 170, doc->model.capacity);
  EXPECT_EQ(painter.tiers().size(), 3u);
  QImage image(kWidth, 300, QImage::Format_RGB32);
  QPainter p(&image);
  painter.paint(p, kWidth, 300);
  p.end();
  int filled = 0;
  for (int y = 0; y < 300; ++y) {
    for (int x = 170; x < kWidth; ++x) {
      const QRgb px = image.pixel(x, y);
      for (const core::Tier t : core::kAllTiers) filled += px == color_of(t).rgb() ? 1 : 0;
    }
  }
  EXPECT_GT(filled, 1000);
}

}  // namespace
}  // namespace stowage::gui
