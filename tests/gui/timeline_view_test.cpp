// Driving the timeline widget with QTest: a click selects the op under the
// mouse, the wheel zooms around the cursor on the axis the memory view
// shares, keys fit and toggle the critical path.
#include "gui/timeline_view.h"

#include <gtest/gtest.h>

#include <QSignalSpy>
#include <QTest>

#include "gui/memory_view.h"
#include "gui/trace_from_timeline.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

struct Fixture {
  AxisState axis;
  TimelineView view{axis};
  std::shared_ptr<const TimelineDocument> doc;

  Fixture() {
    const testing::Simulated s = testing::tiny_simulated();
    doc = prepare_document(trace_from_timeline(s.schedule, s.timeline, {.source = "predicted"}));
    view.resize(1200, 300);
    view.set_document(doc);
    view.show();
    axis.update([&](TimeAxis& a) {
      a.set_width(1200 - LayoutMetrics{}.label_width);
      a.set_bounds(doc->model.begin_time(), doc->model.end_time());
      a.fit_all();
    });
  }

  // The middle of op `i` on screen.
  QPoint centre_of(int32_t i) const {
    const TraceOp& op = doc->model.ops[static_cast<size_t>(i)];
    const LayoutRow row = *view.timeline_layout().row_of_track(op.track);
    const double x = LayoutMetrics{}.label_width + axis.axis().to_pixel((op.start + op.end) / 2);
    return QPoint(static_cast<int>(x), static_cast<int>(row.top + row.height / 2));
  }
};

// The widest op, so it is easy to hit.
int32_t widest(const TraceModel& m) {
  int32_t best = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(m.ops.size()); ++i) {
    if (m.ops[static_cast<size_t>(i)].duration() > m.ops[static_cast<size_t>(best)].duration()) best = i;
  }
  return best;
}

TEST(TimelineView, HoveringAMergedRunDescribesTheRun) {
  // 2000 ops of 10 ns, 10 ns apart, on one track: 40 µs over ~1080 px, so
  // at fit-all each pixel holds about two ops and they are drawn merged.
  AxisState axis;
  TimelineView view(axis);
  const auto doc = prepare_document(testing::synthetic_model(2000, 1, 10, 10));
  view.resize(1200, 200);
  view.set_document(doc);
  axis.update([&](TimeAxis& a) {
    a.set_width(1200 - LayoutMetrics{}.label_width);
    a.set_bounds(doc->model.begin_time(), doc->model.end_time());
    a.fit_all();
  });
  const LayoutRow row = *view.timeline_layout().row_of_track(0);
  const QPointF middle(LayoutMetrics{}.label_width + axis.axis().to_pixel(20'000), row.top + row.height / 2);
  const std::string merged = view.tooltip_at(middle).toStdString();
  EXPECT_NE(merged.find(" ops merged: "), std::string::npos) << merged;
  EXPECT_NE(merged.find(" busy in ["), std::string::npos) << merged;
  EXPECT_EQ(merged.find("op 1000"), std::string::npos) << "names a single op: " << merged;
  // Zoomed in to 100 ns across the view the ops are drawn alone: the op's own tooltip.
  axis.update([&](TimeAxis& a) { a.fit(19'990, 20'090); });
  const std::string single =
      view.tooltip_at(QPointF(LayoutMetrics{}.label_width + axis.axis().to_pixel(20'005), middle.y())).toStdString();
  EXPECT_TRUE(single.starts_with("op 1000\n")) << single;
}

TEST(TimelineView, ClickSelectsTheOpUnderTheMouse) {
  Fixture f;
  const int32_t target = widest(f.doc->model);
  QSignalSpy spy(&f.view, &TimelineView::selectionChanged);
  QTest::mouseClick(&f.view, Qt::LeftButton, {}, f.centre_of(target));
  ASSERT_EQ(spy.count(), 1);
  ASSERT_TRUE(f.view.highlight().selection.op.has_value());
  EXPECT_EQ(*f.view.highlight().selection.op, target);
  const auto deps = f.doc->model.deps(target);
  EXPECT_EQ(f.view.highlight().selection.waits_on.size(), deps.size());
  QTest::keyClick(&f.view, Qt::Key_Escape);
  EXPECT_FALSE(f.view.highlight().selection.op.has_value());
}

TEST(TimelineView, WheelZoomsAroundTheCursorAndMovesTheSharedAxis) {
  Fixture f;
  MemoryView memory(f.axis);  // shares the axis: nothing to do but watch it
  const double before = f.axis.axis().ns_per_pixel();
  const QPointF at(600, 100);
  const SimTime under = f.axis.axis().to_time(at.x() - LayoutMetrics{}.label_width);
  QWheelEvent wheel(at, f.view.mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
  QApplication::sendEvent(&f.view, &wheel);
  EXPECT_NEAR(f.axis.axis().ns_per_pixel(), before / (kZoomStep * kZoomStep), before * 1e-9);  // two notches
  EXPECT_NEAR(static_cast<double>(f.axis.axis().to_time(at.x() - LayoutMetrics{}.label_width)),
              static_cast<double>(under), f.axis.axis().ns_per_pixel());
  QTest::keyClick(&f.view, Qt::Key_F);
  EXPECT_DOUBLE_EQ(f.axis.axis().ns_per_pixel(), before);
}

TEST(TimelineView, DragPansAndCKeyTogglesTheCriticalPath) {
  Fixture f;
  const SimTime left = f.axis.axis().to_time(0);
  QTest::mousePress(&f.view, Qt::LeftButton, {}, QPoint(600, 100));
  QTest::mouseMove(&f.view, QPoint(650, 100));
  QTest::mouseMove(&f.view, QPoint(700, 100));
  QTest::mouseRelease(&f.view, Qt::LeftButton, {}, QPoint(700, 100));
  // Dragged 100 px right: the view now starts 100 px worth of time earlier.
  EXPECT_NEAR(static_cast<double>(left - f.axis.axis().to_time(0)), 100 * f.axis.axis().ns_per_pixel(), 2);
  EXPECT_FALSE(f.view.critical_path());
  QTest::keyClick(&f.view, Qt::Key_C);
  EXPECT_TRUE(f.view.critical_path());
}

}  // namespace
}  // namespace stowage::gui
