// A million ops: builds the model in memory, runs the LOD pass and the
// critical path, and paints offscreen at fit-all and after zooming and
// panning; and the same from a trace file of a million ops written by
// core's trace writer (a simulated step repeated). Prints the times and
// peak memory (no wall-clock assertion: CI machines vary) and checks what
// must hold at any speed: the merge keeps the boxes drawn near the pixel
// count, and the file gives every op.
#include <gtest/gtest.h>

#include "gui/compare_model.h"
#include <sys/resource.h>
#include <unistd.h>

#include <QImage>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "gui/timeline_painter.h"
#include "gui/trace_loader.h"
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

  // The Compare panel's model of the trace against itself (matching and
  // calibration::trace_metrics on both), as opening a measured trace makes it.
  t0 = Clock::now();
  const CompareModel compare(doc->model, doc->model);
  const double compare_ms = ms_since(t0);

  std::printf(
      "[ million ops ] build model %.0f ms, LOD + critical path %.0f ms, paint at fit-all %.1f ms "
      "(%d boxes), paint while panning zoomed x50 %.1f ms per frame (%d boxes), compare with itself %.0f ms\n",
      build_ms, lod_ms, paint_fit_ms, boxes_fit, paint_pan_ms, boxes_pan, compare_ms);
  EXPECT_EQ(compare.unmatched(), 0);
  EXPECT_DOUBLE_EQ(compare.step_error(), 0);
  EXPECT_EQ(doc->model.ops.size(), static_cast<size_t>(kOps));
  EXPECT_EQ(doc->lod.size(), static_cast<size_t>(kTracks));
  EXPECT_LE(boxes_fit, kTracks * kWidth);
  EXPECT_LE(boxes_pan, kTracks * kWidth);
  EXPECT_EQ(doc->critical_path.size(), static_cast<size_t>(kOps / kTracks));  // one track's chain of deps
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

// The tiny plan's two simulated steps repeated until `ops` ops: ids, deps,
// steps and times shifted by each repeat, as a long run would record them.
testing::Simulated repeated(const testing::Simulated& s, size_t ops) {
  testing::Simulated out;
  out.schedule.steps = 0;
  out.schedule.tokens_per_step = s.schedule.tokens_per_step;
  const size_t n = s.schedule.ops.size();
  SimTime makespan = 0;
  for (const core::OpSpan& span : s.timeline.spans) makespan = std::max(makespan, span.end);
  out.schedule.ops.reserve(ops);
  out.timeline.spans.reserve(ops);
  for (size_t k = 0; out.schedule.ops.size() < ops; ++k) {
    const auto shift = static_cast<core::OpId>(k * n);
    const SimTime later = static_cast<SimTime>(k) * makespan;
    for (size_t i = 0; i < n && out.schedule.ops.size() < ops; ++i) {
      const core::Op& from = s.schedule.ops[i];
      core::Op op{.id = from.id + shift, .kind = from.kind, .lane = from.lane, .name = from.name,
                  .partition = from.partition, .layer = from.layer,
                  .step = from.step + static_cast<int>(k) * s.schedule.steps, .micro_step = from.micro_step,
                  .tensor_class = from.tensor_class, .bytes = from.bytes, .flops = from.flops,
                  .params = from.params};
      for (const core::OpId d : from.deps) op.deps.push_back(d + shift);
      out.schedule.ops.push_back(std::move(op));
      const core::OpSpan& span = s.timeline.spans[i];
      out.timeline.spans.push_back({.start = span.start + later, .end = span.end + later, .slot = span.slot});
    }
    for (const core::MemorySample& m : s.timeline.memory)
      out.timeline.memory.push_back({.time = m.time + later, .tier = m.tier, .bytes = m.bytes});
    out.schedule.steps += s.schedule.steps;
  }
  return out;
}

TEST(MillionOps, TraceFileOpensWithTimesAndPeakMemoryPrinted) {
  constexpr size_t kOps = 1'000'000;
  constexpr int kWidth = 1600;
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("stowage-million-" + std::to_string(::getpid()) + ".json");
  {
    const testing::Simulated big = repeated(testing::tiny_simulated(), kOps);
    std::ofstream out(file, std::ios::binary);
    core::write_chrome_trace(big.schedule, big.timeline, {.title = "a million ops", .source = "predicted"}, out);
    ASSERT_TRUE(out.good());
  }
  const double rss_before = peak_rss_mib();
  auto t0 = Clock::now();
  core::Result<TraceModel> model = load_trace(file);
  const double load_ms = ms_since(t0);
  std::filesystem::remove(file);
  ASSERT_TRUE(model.has_value()) << core::to_string(model.error());
  t0 = Clock::now();
  const std::shared_ptr<const TimelineDocument> doc = prepare_document(std::move(*model));
  const double lod_ms = ms_since(t0);
  const TimelineLayout layout(doc->model, {});
  TimeAxis axis;
  axis.set_width(kWidth - layout.metrics().label_width);
  axis.set_bounds(doc->model.begin_time(), doc->model.end_time());
  axis.fit_all();
  QImage image(kWidth, static_cast<int>(layout.height()), QImage::Format_RGB32);
  t0 = Clock::now();
  QPainter painter(&image);
  const int boxes = TimelinePainter(*doc, layout, axis).paint(painter, kWidth, {});
  const double paint_ms = ms_since(t0);
  std::printf(
      "[ million ops ] trace file of %zu ops: load %.0f ms, LOD + critical path %.0f ms, first paint %.1f ms "
      "(%d boxes), total %.0f ms; peak RSS %.0f MiB (%.0f MiB before loading, after writing the file)\n",
      doc->model.ops.size(), load_ms, lod_ms, paint_ms, boxes, load_ms + lod_ms + paint_ms, peak_rss_mib(),
      rss_before);
  EXPECT_EQ(doc->model.ops.size(), kOps);
  EXPECT_LE(boxes, static_cast<int>(doc->model.tracks.size()) * kWidth);
}

}  // namespace
}  // namespace stowage::gui
