// The memory rows as drawn: the curve's top at the pixel the byte scale
// gives, tick labels in decimal GB, the capacity line, per GPU / per
// machine scope, and the hover readout of the bytes in use at a time.
#include "gui/memory_painter.h"

#include <gtest/gtest.h>

#include <QImage>
#include <QSignalSpy>
#include <QTest>
#include <algorithm>

#include "gui/memory_view.h"
#include "gui/palette.h"
#include "gui/trace_loader.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

constexpr int kWidth = 1200, kHeight = 2 * 84;
constexpr double kLabels = 170;
constexpr SimTime kMs = 1'000'000;

// GPU memory 4 GB from 0, 16 GB from 10 ms to 20 ms, 4 GB until 30 ms, of
// 24 GB; host memory 50 GB throughout, capacity unknown.
TraceModel memory_model(int ranks = 1) {
  TraceModel m;
  m.info.ranks = ranks;
  const auto gb = [](int64_t n) { return core::Bytes(n * 1'000'000'000); };
  m.memory[0] = {{.time = 0, .bytes = gb(4)},
                 {.time = 10 * kMs, .bytes = gb(16)},
                 {.time = 20 * kMs, .bytes = gb(4)},
                 {.time = 30 * kMs, .bytes = gb(4)}};
  m.memory[1] = {{.time = 0, .bytes = gb(50)}, {.time = 30 * kMs, .bytes = gb(50)}};
  m.capacity[0] = gb(24);
  m.finish();
  return m;
}

struct Drawn {
  TraceModel model;
  const TraceModel* measured = nullptr;
  TimeAxis axis;
  QImage image{kWidth, kHeight, QImage::Format_RGB32};
  explicit Drawn(int ranks = 1, const TraceModel* measured_model = nullptr)
      : model(memory_model(ranks)), measured(measured_model) {
    axis.set_width(kWidth - kLabels);
    axis.set_bounds(0, 30 * kMs);
    axis.fit_all();
    QPainter p(&image);
    painter().paint(p, kWidth, kHeight);
  }
  [[nodiscard]] MemoryPainter painter() const {
    return MemoryPainter(model, axis, kLabels, model.capacity, measured);
  }
  [[nodiscard]] double x_of(SimTime t) const { return kLabels + axis.to_pixel(t); }
};

TEST(MemoryPainter, TheCurveTopIsAtTheScalesPixel) {
  const Drawn d;
  const std::vector<MemoryRow> rows = d.painter().rows(kWidth, kHeight);
  ASSERT_EQ(rows.size(), 2u);
  const MemoryRow& gpu = rows[0];
  EXPECT_EQ(gpu.tier, core::Tier::kGpu);
  // 24 GB of capacity is on scale (it is under 1.6 x the 16 GB peak), with 5 % headroom: 25.2 GB.
  EXPECT_TRUE(gpu.capacity_on_scale);
  EXPECT_EQ(gpu.scale.top, core::Bytes(25'200'000'000));
  const QRgb fill = color_of(core::Tier::kGpu).rgb();
  const auto at = [&](double x, double y) {
    return d.image.pixel(static_cast<int>(x), static_cast<int>(std::round(y)));
  };
  // At 15 ms the GPU holds 16 GB: filled from y_of(16 GB) down, empty above.
  const double x = d.x_of(15 * kMs), top = gpu.y_of(core::Bytes(16'000'000'000));
  EXPECT_EQ(at(x, top + 2), fill);
  EXPECT_NE(at(x, top - 2), fill);
  // At 5 ms it holds 4 GB.
  const double low = gpu.y_of(core::Bytes(4'000'000'000));
  EXPECT_EQ(at(d.x_of(5 * kMs), low + 2), fill);
  EXPECT_NE(at(d.x_of(5 * kMs), low - 2), fill);
  EXPECT_NE(at(d.x_of(5 * kMs), top + 2), fill);
  // The capacity line, dashed, at y_of(24 GB): some pixels of it are its colour.
  int dashes = 0;
  for (int px = static_cast<int>(gpu.plot.left()); px < static_cast<int>(gpu.plot.right()) - 200; ++px)
    dashes += at(px, gpu.y_of(core::Bytes(24'000'000'000))) == capacity_color().rgb() ? 1 : 0;
  EXPECT_GT(dashes, 100);
}

TEST(MemoryPainter, TicksAreInDecimalGigabytes) {
  const Drawn d;
  const std::vector<MemoryRow> rows = d.painter().rows(kWidth, kHeight);
  std::vector<std::string> labels;
  for (const ByteTick& t : rows[0].scale.ticks) labels.push_back(t.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"0 GB", "10 GB", "20 GB"}));
  // Each tick has its mark left of the plot.
  for (const ByteTick& t : rows[0].scale.ticks) {
    const double y = rows[0].y_of(t.value);
    EXPECT_EQ(d.image.pixel(static_cast<int>(rows[0].plot.left()) - 2, static_cast<int>(std::floor(y))),
              QColor(0x88, 0x88, 0x88).rgb())
        << t.label;
  }
}

TEST(MemoryPainter, ScopeAndHostMemoryPerMachine) {
  const Drawn one;
  EXPECT_EQ(one.painter().scope(core::Tier::kGpu), "per GPU");
  EXPECT_EQ(one.painter().scope(core::Tier::kCpu), "per machine");
  // With 4 ranks, host memory is the per-rank trace figure times 4, as the
  // CLI reports it; GPU memory stays per GPU.
  const Drawn four(4);
  const std::vector<MemoryRow> rows = four.painter().rows(kWidth, kHeight);
  EXPECT_EQ(rows[0].peak, core::Bytes(16'000'000'000));
  EXPECT_EQ(rows[1].peak, core::Bytes(200'000'000'000));
  EXPECT_EQ(four.painter().scope(core::Tier::kCpu), "per machine, 4 ranks");
}

TEST(MemoryPainter, HoverReadsTheBytesInUseThen) {
  const Drawn d;
  const std::vector<MemoryRow> rows = d.painter().rows(kWidth, kHeight);
  const QString text =
      d.painter().readout(QPointF(d.x_of(15 * kMs), rows[0].plot.center().y()), kWidth, kHeight);
  EXPECT_TRUE(text.contains("gpu memory, per GPU")) << text.toStdString();
  EXPECT_TRUE(text.contains("16 GB in use (67 % of 24 GB)")) << text.toStdString();
  EXPECT_TRUE(text.contains("at 15")) << text.toStdString();
  EXPECT_TRUE(d.painter().readout(QPointF(20, rows[0].plot.center().y()), kWidth, kHeight).isEmpty());
  const QString host =
      d.painter().readout(QPointF(d.x_of(15 * kMs), rows[1].plot.center().y()), kWidth, kHeight);
  EXPECT_TRUE(host.contains("50 GB in use")) << host.toStdString();
}

TEST(MemoryPainter, HoverNamesTheLargestClassesResidentThen) {
  Drawn d;
  const auto gb = [](int64_t n) { return core::Bytes(n * 1'000'000'000); };
  // From 10 ms: 16 GB as 6 activation + 5 param16 + 3 grad16 + 2 workspace.
  ClassMemory& gpu = d.model.class_memory[0];
  gpu.begin_sample(0);
  gpu.add("param16", gb(4));
  gpu.begin_sample(10 * kMs);
  for (const auto& [name, n] : {std::pair{"param16", 5}, {"grad16", 3}, {"activation", 6}, {"workspace", 2}})
    gpu.add(name, gb(n));
  const std::vector<MemoryRow> rows = d.painter().rows(kWidth, kHeight);
  const QString text =
      d.painter().readout(QPointF(d.x_of(15 * kMs), rows[0].plot.center().y()), kWidth, kHeight);
  EXPECT_TRUE(text.contains("16 GB in use")) << text.toStdString();
  EXPECT_TRUE(text.contains("largest: activation 6 GB, param16 5 GB, grad16 3 GB")) << text.toStdString();
  EXPECT_FALSE(text.contains("workspace")) << text.toStdString();  // the top three only
  const QString early = d.painter().readout(QPointF(d.x_of(5 * kMs), rows[0].plot.center().y()), kWidth, kHeight);
  EXPECT_TRUE(early.contains("largest: param16 4 GB")) << early.toStdString();
  // A tier without a breakdown says nothing of classes.
  const QString host = d.painter().readout(QPointF(d.x_of(15 * kMs), rows[1].plot.center().y()), kWidth, kHeight);
  EXPECT_FALSE(host.contains("largest")) << host.toStdString();
}

TEST(MemoryPainter, HoverOnASimulatedTraceNamesTheClassesItsScheduleHolds) {
  // The tiny plan's trace, loaded as the GUI loads it: the readout at the
  // GPU peak names the classes core::memory_by_class gives for that time.
  const testing::Simulated s = testing::tiny_simulated();
  const core::Result<TraceModel> loaded = parse_trace(testing::trace_text(s), "tiny.json");
  ASSERT_TRUE(loaded.has_value()) << core::to_string(loaded.error());
  const TraceModel& m = *loaded;
  const auto& gpu = m.memory[0];
  ASSERT_FALSE(gpu.empty());
  const auto peak = std::ranges::max_element(gpu, {}, &MemoryPoint::bytes);
  const std::vector<ClassMemory::Share> shares = m.class_memory[0].at(peak->time);
  ASSERT_FALSE(shares.empty());
  core::Bytes sum;
  for (const ClassMemory::Share& c : shares) sum += c.bytes;
  EXPECT_EQ(sum, peak->bytes);  // the classes make up the whole, at the peak
  TimeAxis axis;
  axis.set_width(kWidth - kLabels);
  axis.set_bounds(m.begin_time(), m.end_time());
  axis.fit_all();
  const MemoryPainter painter(m, axis, kLabels, m.capacity, nullptr);
  const MemoryRow row = painter.rows(kWidth, kHeight)[0];
  // The pixel column whose time is at or after the peak sample and before the next.
  const double x = std::ceil(axis.to_pixel(peak->time)) + kLabels + 0.5;
  const QString text = painter.readout(QPointF(x, row.plot.center().y()), kWidth, kHeight);
  const SimTime t = axis.to_time(std::floor(x - kLabels));
  const std::vector<ClassMemory::Share> then = m.class_memory[0].at(t);
  ASSERT_FALSE(then.empty());
  EXPECT_TRUE(text.contains(QStringLiteral("largest: ") + QString::fromUtf8(then[0].name.data(),
                                                                              static_cast<qsizetype>(then[0].name.size()))))
      << text.toStdString();
}

TEST(MemoryPainter, MeasuredMemoryIsALineOverThePredicted) {
  // Measured: 20 GB from 10 to 20 ms (predicted 16 GB), 4 GB elsewhere.
  TraceModel measured;
  const auto gb = [](int64_t n) { return core::Bytes(n * 1'000'000'000); };
  measured.memory[0] = {{.time = 0, .bytes = gb(4)},
                        {.time = 10 * kMs, .bytes = gb(20)},
                        {.time = 20 * kMs, .bytes = gb(4)},
                        {.time = 30 * kMs, .bytes = gb(4)}};
  measured.finish();
  const Drawn d(1, &measured);
  const MemoryRow gpu = d.painter().rows(kWidth, kHeight)[0];
  const double y = gpu.y_of(gb(20));
  int line = 0;
  for (int dy = -1; dy <= 1; ++dy)
    line += d.image.pixel(static_cast<int>(d.x_of(15 * kMs)), static_cast<int>(std::round(y)) + dy) ==
                    measured_color().rgb()
                ? 1
                : 0;
  EXPECT_GE(line, 1) << "no measured line at y " << y;
  const QString text = d.painter().readout(QPointF(d.x_of(15 * kMs), gpu.plot.center().y()), kWidth, kHeight);
  EXPECT_TRUE(text.contains("measured: 20 GB in use")) << text.toStdString();
}

// `stowage compare --predicted-trace` writes a prediction re-simulated from
// the measured trace's ops, which carry no memory effects: its rows say
// that they have no memory, not that it peaked at 0 B.
TEST(MemoryPainter, APredictionWithoutMemoryCountersSaysSoNotPeakZero) {
  TraceModel measured = memory_model();
  TraceModel predicted;
  predicted.finish();
  TimeAxis axis;
  axis.set_width(kWidth - kLabels);
  axis.set_bounds(0, 30 * kMs);
  axis.fit_all();
  const MemoryPainter p(predicted, axis, kLabels, measured.capacity, &measured);
  const std::vector<MemoryRow> rows = p.rows(kWidth, kHeight);
  ASSERT_FALSE(rows.empty());
  EXPECT_FALSE(rows[0].has_samples);
  const QStringList lines = p.label_lines(rows[0]);
  EXPECT_TRUE(lines.contains("no memory in trace")) << lines.join(" | ").toStdString();
  EXPECT_FALSE(lines.join(" ").contains("peak 0 B")) << lines.join(" | ").toStdString();
  EXPECT_TRUE(lines.contains("its peak 16 GB")) << lines.join(" | ").toStdString();
  // A trace with counters still gives its peak.
  const Drawn d;
  EXPECT_TRUE(d.painter().label_lines(d.painter().rows(kWidth, kHeight)[0]).contains("peak 16 GB"));
}

TEST(MemoryPainter, ACollapsedRowIsAThinStripAndTheOthersShareTheRest) {
  const Drawn d;
  MemoryPainter p = d.painter();
  p.set_row_states({RowState::kCollapsed, RowState::kExpanded, RowState::kExpanded});
  const std::vector<MemoryRow> rows = p.rows(kWidth, kHeight);
  EXPECT_EQ(rows[0].state, RowState::kCollapsed);
  EXPECT_DOUBLE_EQ(rows[0].row.height(), MemoryPainter::kCollapsedRowHeight);
  EXPECT_DOUBLE_EQ(rows[1].row.top(), MemoryPainter::kCollapsedRowHeight);
  EXPECT_DOUBLE_EQ(rows[1].row.height(), kHeight - MemoryPainter::kCollapsedRowHeight);
  EXPECT_DOUBLE_EQ(p.preferred_height(),
                   MemoryPainter::kCollapsedRowHeight + MemoryPainter::kDefaultRowHeight);
}

TEST(MemoryView, ClickingARowsLabelCollapsesIt) {
  AxisState axis;
  MemoryView view(axis);
  auto doc = prepare_document(memory_model());
  view.set_document(doc);
  view.resize(kWidth, kHeight);
  view.show();
  const int before = view.sizeHint().height();
  QSignalSpy changed(&view, &MemoryView::rowsChanged);
  QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(20, 10));  // the GPU row's label
  EXPECT_EQ(changed.count(), 1);
  EXPECT_EQ(view.row_states()[0], RowState::kCollapsed);
  EXPECT_LT(view.sizeHint().height(), before);
  QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(20, 10));
  EXPECT_EQ(view.row_states()[0], RowState::kExpanded);
}

}  // namespace
}  // namespace stowage::gui
