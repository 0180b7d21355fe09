// A million ops: builds the model in memory, runs the LOD pass and the
// critical path, and paints offscreen at fit-all and after zooming and
// panning. Prints the times (no wall-clock assertion: CI machines vary) and
// checks what must hold at any speed: the merge keeps the boxes drawn near
// the pixel count.
#include <gtest/gtest.h>

#include <QImage>
#include <chrono>
#include <cstdio>

#include "gui/timeline_painter.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

TEST(MillionOps, LoadLodAndPaintAreTimedAndDrawFewBoxes) {
  constexpr int kOps = 1'000'000, kTracks = 8, kWidth = 1600;
  auto t0 = Clock::now();
  TraceModel model = testing::synthetic_model(kOps, kTracks, 700, 300);  // 1 µs per op and track: 125 ms
  const double build_ms = ms_since(t0);
  t0 = Clock::now();
  const std::shared_ptr<const TimelineDocument> doc = prepare_document(std::move(model));
  const double lod_ms = ms_since(t0);

  const TimelineLayout layout(doc->model, {});
  TimeAxis axis;
  axis.set_width(kWidth - layout.metrics().label_width);
  axis.set_bounds(doc->model.begin_time(), doc->model.end_time());
  axis.fit_all();
  QImage image(kWidth, static_cast<int>(layout.height()), QImage::Format_RGB32);
  const auto paint = [&] {
    QPainter painter(&image);
    return TimelinePainter(*doc, layout, axis).paint(painter, kWidth, {.critical_path = true});
  };
  t0 = Clock::now();
  const int boxes_fit = paint();
  const double paint_fit_ms = ms_since(t0);
  axis.zoom_around(700, 50);
  t0 = Clock::now();
  int boxes_pan = 0;
  for (int i = 0; i < 20; ++i) {
    axis.pan(-37);
    boxes_pan = paint();
  }
  const double paint_pan_ms = ms_since(t0) / 20;

  std::printf(
      "[ million ops ] build model %.0f ms, LOD + critical path %.0f ms, paint at fit-all %.1f ms "
      "(%d boxes), paint while panning zoomed x50 %.1f ms per frame (%d boxes)\n",
      build_ms, lod_ms, paint_fit_ms, boxes_fit, paint_pan_ms, boxes_pan);
  EXPECT_EQ(doc->model.ops.size(), static_cast<size_t>(kOps));
  EXPECT_EQ(doc->lod.size(), static_cast<size_t>(kTracks));
  EXPECT_LE(boxes_fit, kTracks * kWidth);
  EXPECT_LE(boxes_pan, kTracks * kWidth);
  EXPECT_EQ(doc->critical_path.size(), static_cast<size_t>(kOps / kTracks));  // one track's chain of deps
}

}  // namespace
}  // namespace stowage::gui
