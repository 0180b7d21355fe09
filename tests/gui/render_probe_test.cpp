// What is drawn, checked where the time axis says it must be: a two-step
// trace with known times rendered offscreen, and pixels probed at the step
// marks and op edges computed from the axis; ruler labels that stay inside
// the ruler wherever the view is panned; the critical path drawn in full
// colour over a dimmed timeline.
#include <gtest/gtest.h>

#include <QFontMetricsF>
#include <QImage>

#include "gui/palette.h"
#include "gui/timeline_painter.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

constexpr int kWidth = 1200;
constexpr SimTime kMs = 1'000'000;

// Step 0: forward [0, 4 ms) on gpu.compute, then an NVMe state write
// [4, 9 ms); step 1: forward [10, 14 ms). So the steps begin at 0 and 10 ms
// and the steady window is [0, 10 ms), one interval of 10 ms, in which the
// NVMe write is busy 5 ms and compute 4 ms: bound by nvme.write, 50 %.
// `side_op` adds an upload [1, 2 ms) on a third track that nothing waits
// on: off the critical path.
enum class SideOp { kNone, kUpload };
TraceModel two_steps(SideOp side_op = SideOp::kNone) {
  TraceModel m;
  m.info.source = "predicted";
  m.tracks.push_back({.name = "gpu.compute", .lane = core::Lane::kGpuCompute});
  m.tracks.push_back({.name = "nvme.write", .lane = core::Lane::kNvmeWrite});
  if (side_op == SideOp::kUpload) m.tracks.push_back({.name = "pcie.h2d", .lane = core::Lane::kPcieH2d});
  const auto add = [&](int32_t track, core::OpKind kind, core::Lane lane, SimTime start, SimTime end,
                       int step) {
    const auto i = static_cast<int32_t>(m.ops.size());
    m.ops.push_back({.id = i,
                     .track = track,
                     .category = category_of(kind, lane),
                     .kind = kind,
                     .lane = lane,
                     .start = start,
                     .end = end,
                     .name = m.add_text("op"),
                     .step = step});
    m.tracks[static_cast<size_t>(track)].ops.push_back(i);
  };
  add(0, core::OpKind::kForward, core::Lane::kGpuCompute, 0, 4 * kMs, 0);
  add(1, core::OpKind::kWriteStates, core::Lane::kNvmeWrite, 4 * kMs, 9 * kMs, 0);
  add(0, core::OpKind::kForward, core::Lane::kGpuCompute, 10 * kMs, 14 * kMs, 1);
  if (side_op == SideOp::kUpload)
    add(2, core::OpKind::kUploadParams, core::Lane::kPcieH2d, 1 * kMs, 2 * kMs, 0);
  m.set_deps(1, {0});
  m.set_deps(2, {1});
  m.finish();
  return m;
}

struct Scene {
  std::shared_ptr<const TimelineDocument> doc;
  TimelineLayout layout;
  TimeAxis axis;
  QImage image;

  explicit Scene(TraceModel model, const TimelineHighlight& highlight = {})
      : doc(prepare_document(std::move(model))), layout(doc->model, {}) {
    axis.set_width(kWidth - layout.metrics().label_width);
    axis.set_bounds(doc->model.begin_time(), doc->model.end_time());
    axis.fit_all();
    image = QImage(kWidth, static_cast<int>(layout.height()), QImage::Format_RGB32);
    QPainter painter(&image);
    TimelinePainter(*doc, layout, axis).paint(painter, kWidth, highlight);
  }
  [[nodiscard]] double x_of(SimTime t) const { return layout.metrics().label_width + axis.to_pixel(t); }
  [[nodiscard]] QRgb at(double x, double y) const {
    return image.pixel(static_cast<int>(x), static_cast<int>(y));
  }
  [[nodiscard]] LayoutRow row(int32_t track) const { return *layout.row_of_track(track); }
};

TEST(RenderProbe, StepMarksAndOpBoxesAreWhereTheAxisPutsThem) {
  const Scene s(two_steps());
  ASSERT_EQ(s.doc->steps.steps.size(), 2u);
  ASSERT_TRUE(s.doc->steps.steady.has_value());
  EXPECT_EQ(s.doc->steps.steady->step_time, 10 * kMs);
  EXPECT_EQ(s.doc->steps.steady->bound, core::Lane::kNvmeWrite);

  // The step strip is the ruler's lower band; probe its top row, above any label.
  const double strip_y = s.layout.metrics().ruler_height - RulerMetrics{}.step_height + 2;
  for (const SimTime start : {SimTime{0}, 10 * kMs}) {
    const double x = std::round(s.x_of(start));
    EXPECT_EQ(s.at(x, strip_y), step_color().rgb()) << "no step mark at " << x;
    EXPECT_NE(s.at(x + 6, strip_y), step_color().rgb()) << "the mark at " << x << " is too wide";
  }
  // Inside the steady window the strip is shaded; before it, not.
  EXPECT_EQ(s.at(s.x_of(2 * kMs), strip_y), steady_color().rgb());
  EXPECT_NE(s.at(s.x_of(12 * kMs), strip_y), steady_color().rgb());

  // Op boxes: filled from their start's pixel to their end's, on their row
  // (probed one pixel under the box's top edge, above the name).
  const auto box_y = [&](int32_t track) { return s.row(track).top + 3.5; };
  const QRgb compute = color_of(OpCategory::kCompute).rgb(), write = color_of(OpCategory::kNvmeWrite).rgb();
  EXPECT_EQ(s.at(s.x_of(10 * kMs) + 3, box_y(0)), compute);
  EXPECT_EQ(s.at(s.x_of(14 * kMs) - 3, box_y(0)), compute);
  EXPECT_NE(s.at(s.x_of(10 * kMs) - 3, box_y(0)), compute);
  EXPECT_NE(s.at(s.x_of(14 * kMs) + 3, box_y(0)), compute);
  EXPECT_EQ(s.at(s.x_of(4 * kMs) + 3, box_y(1)), write);
  EXPECT_EQ(s.at(s.x_of(9 * kMs) - 3, box_y(1)), write);
  EXPECT_NE(s.at(s.x_of(9 * kMs) + 3, box_y(1)), write);
  EXPECT_NE(s.at(s.x_of(4 * kMs) + 3, box_y(0)), compute) << "compute drawn where it is idle";
}

TEST(RenderProbe, LaneHeadersShowTheirBusyShareInView) {
  const Scene s(two_steps());
  const TimelinePainter painter(*s.doc, s.layout, s.axis);
  // At fit-all the visible data is [0, 14 ms): compute busy 8 ms (57 %),
  // nvme.write 5 ms (36 %).
  EXPECT_EQ(painter.busy_text(0), "57 %");
  EXPECT_EQ(painter.busy_text(1), "36 %");
  // Zoomed to [10, 14 ms] the view shows [9.92, 14.08 ms] (2 % margins),
  // clipped to the data [9.92, 14 ms]: compute busy 4 of 4.08 ms, the write 0.
  TimeAxis zoomed = s.axis;
  zoomed.fit(10 * kMs, 14 * kMs);
  const TimelinePainter near(*s.doc, s.layout, zoomed);
  EXPECT_NEAR(near.busy_share(0), 4.0 / 4.08, 1e-6);
  EXPECT_EQ(near.busy_text(1), "0 %");
}

TEST(RenderProbe, RulerLabelsStayInsideTheRulerWhereverItIsPanned) {
  const Scene s(two_steps());
  const QFontMetricsF font(QFont{});
  TimeAxis axis = s.axis;
  axis.zoom_around(0, 3);
  for (int pan = 0; pan < 60; ++pan) {
    axis.pan(-17);
    const RulerMetrics m{.left = s.layout.metrics().label_width, .right = kWidth};
    const RulerLabels labels = RulerPainter(axis, s.doc->steps, m).label_rects(font);
    EXPECT_FALSE(labels.ticks.empty());
    double previous = m.left - 1;
    for (const RulerLabel& l : labels.ticks) {
      EXPECT_GE(l.rect.left(), m.left) << l.text.toStdString() << " at pan " << pan;
      EXPECT_LE(l.rect.right(), m.right) << l.text.toStdString() << " at pan " << pan;
      EXPECT_GE(l.rect.width(), font.horizontalAdvance(l.text));
      EXPECT_GT(l.rect.left(), previous) << "labels overlap";
      previous = l.rect.right();
    }
    for (const RulerLabel& l : labels.steps) {
      EXPECT_GE(l.rect.left(), m.left);
      EXPECT_LE(l.rect.right(), m.right);
    }
  }
}

TEST(RenderProbe, TenThousandStepsDrawAsTheirPixelsAllow) {
  // 10 000 steps of one 50 ns forward op each, 100 ns apart: 1 ms over
  // ~1030 px, ten steps a pixel. Marks thin out to one per 4 px and labels
  // need room, so the ruler's work follows its pixels, not the steps.
  TraceModel m;
  m.tracks.push_back({.name = "gpu.compute", .lane = core::Lane::kGpuCompute});
  for (int i = 0; i < 10'000; ++i) {
    m.ops.push_back({.id = i, .track = 0, .start = 100 * i, .end = 100 * i + 50, .step = i});
    m.tracks[0].ops.push_back(i);
  }
  m.finish();
  const Scene s(std::move(m));
  ASSERT_EQ(s.doc->steps.steps.size(), 10'000u);
  const RulerMetrics metrics{.left = s.layout.metrics().label_width, .right = kWidth};
  const RulerLabels labels = RulerPainter(s.axis, s.doc->steps, metrics).label_rects(QFontMetricsF(QFont{}));
  EXPECT_TRUE(labels.steps.empty()) << labels.steps.size() << " step labels in 4 px gaps";
  // Zoomed to 5 steps, each step is labelled.
  TimeAxis zoomed = s.axis;
  zoomed.fit(500'000, 500'500);
  const RulerLabels near = RulerPainter(zoomed, s.doc->steps, metrics).label_rects(QFontMetricsF(QFont{}));
  EXPECT_GE(near.steps.size(), 5u);
}

TEST(RenderProbe, TheSteadyLabelSaysStepTimeAndBound) {
  const Scene s(two_steps());
  const RulerMetrics m{.left = s.layout.metrics().label_width, .right = kWidth};
  const RulerLabels labels = RulerPainter(s.axis, s.doc->steps, m).label_rects(QFontMetricsF(QFont{}));
  ASSERT_TRUE(labels.steady.has_value());
  EXPECT_EQ(labels.steady->text, "steady state: 10 ms per step, bound by nvme.write (50 % busy)");
  EXPECT_GE(labels.steady->rect.left(), s.x_of(0));
  EXPECT_LE(labels.steady->rect.right(), s.x_of(10 * kMs));
}

TEST(RenderProbe, TheCriticalPathIsFullColourOverADimmedTimeline) {
  // The path ends at the last op (step 1's forward) and goes back through
  // what ended last before each: the write, then step 0's forward. The
  // upload is off it.
  const Scene lit(two_steps(SideOp::kUpload), {.critical_path = true});
  ASSERT_EQ(lit.doc->critical_path, (std::vector<int32_t>{0, 1, 2}));
  const auto box_y = [&](int32_t track) { return lit.row(track).top + 4.5; };
  EXPECT_EQ(lit.at(lit.x_of(2 * kMs), box_y(0)), color_of(OpCategory::kCompute).rgb());
  EXPECT_EQ(lit.at(lit.x_of(6 * kMs), box_y(1)), color_of(OpCategory::kNvmeWrite).rgb());
  EXPECT_EQ(lit.at(lit.x_of(12 * kMs), box_y(0)), color_of(OpCategory::kCompute).rgb());
  EXPECT_EQ(lit.at(lit.x_of(3 * kMs / 2), box_y(2)), dimmed(color_of(OpCategory::kH2d)).rgb())
      << "off the path, not dimmed";
  // Each path op has a black outline: its top edge at the op's middle.
  const QRectF r = *TimelinePainter(*lit.doc, lit.layout, lit.axis).op_rect(1);
  EXPECT_EQ(lit.at(r.center().x(), r.top()), critical_color().rgb());
  // Without the highlight the upload is in full colour.
  const Scene plain(two_steps(SideOp::kUpload));
  EXPECT_EQ(plain.at(plain.x_of(3 * kMs / 2), box_y(2)), color_of(OpCategory::kH2d).rgb());
}

TEST(Palette, DimmingSetsEveryOpColourApartFromItself) {
  // The critical path is shown by dimming the rest, so every category's
  // dimmed colour must differ clearly from the full one (luminance at least
  // 0.25 apart on a 0..1 scale), and the outline (black) from every fill.
  const auto luminance = [](const QColor& c) {
    return 0.2126 * c.redF() + 0.7152 * c.greenF() + 0.0722 * c.blueF();
  };
  for (int c = 0; c < kOpCategoryCount; ++c) {
    const QColor full = color_of(static_cast<OpCategory>(c));
    EXPECT_GT(luminance(dimmed(full)) - luminance(full), 0.1) << c;
    EXPECT_GT(luminance(full) - luminance(critical_color()), 0.25) << c;
    for (const core::Tier t : core::kAllTiers) EXPECT_NE(full.rgb(), color_of(t).rgb());
  }
}

}  // namespace
}  // namespace stowage::gui
