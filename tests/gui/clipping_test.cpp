// No text cut off at the window sizes people use (1280x720, 1600x1000):
// every legend key inside the legend, every ruler label inside the ruler,
// and every table's columns on screen with each header and cell text
// inside its cell, measured with the font the widget draws with.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <QFontMetrics>
#include <QHeaderView>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <algorithm>
#include <fstream>

#include "core/plan_file.h"
#include "gui/main_window.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

struct Case {
  QSize size;
  std::string model, training;  // profiles: the tiny GPT, or the default plan's Llama-2-13B
};

// A ZeRO-Infinity plan of `c.model` on the default workstation, simulated
// for a steady state, written as a plan, a trace and the same as "measured".
struct Inputs {
  QTemporaryDir dir;
  QString plan = dir.filePath("plan.yaml"), trace = dir.filePath("trace.json"),
          measured = dir.filePath("measured.json");
  explicit Inputs(const Case& c) {
    using core::testing::bundled;
    using core::testing::must;
    const core::MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
    const core::TrainingSpec training = must(bundled().training(c.training));
    const core::Workload w(must(bundled().model(c.model)), training.sequence_length);
    const core::PlanFile p{
        .machine = "workstation-24gb-1nvme",
        .model = c.model,
        .training = c.training,
        .policy = core::policy_for(core::standard_placement(core::StandardPlacement::kZeroInfinity, 1), w,
                                   training)};
    testing::Simulated sim;
    sim.schedule =
        must(core::lower(p.policy, machine, w, training, {.steps = core::steady_state_steps(p.policy)}));
    sim.timeline = sim::simulate(sim.schedule, machine).timeline;
    std::ofstream(plan.toStdString()) << core::write_plan(p);
    std::ofstream(trace.toStdString()) << testing::trace_text(sim, "predicted");
    std::ofstream(measured.toStdString()) << testing::trace_text(sim, "measured");
  }
};

void wait_for_loads(MainWindow& w) {
  if (!w.loading()) return;
  QSignalSpy spy(&w, &MainWindow::loadsFinished);
  ASSERT_TRUE(spy.wait(30'000));
}

// A cell's text, wrapped as the view wraps it, must fit the cell less
// the view's margins (3 px a side, as QCommonStyle pads item text).
void expect_fits(const QFontMetrics& metrics, const QString& text, int width, int height,
                 const std::string& where) {
  if (text.isEmpty()) return;
  const QRect r = metrics.boundingRect(QRect(0, 0, std::max(1, width - 6), 100'000), Qt::TextWordWrap, text);
  EXPECT_LE(r.width(), width - 6) << where << ": '" << text.toStdString() << "' is " << r.width() << " px in "
                                  << width;
  EXPECT_LE(r.height(), height) << where << ": '" << text.toStdString() << "' is " << r.height()
                                << " px high in " << height;
}

void expect_table_fits(QTableView& table, const std::string& name) {
  QAbstractItemModel& model = *table.model();
  const QHeaderView& header = *table.horizontalHeader();
  int columns = 0;
  for (int c = 0; c < model.columnCount(); ++c) columns += header.sectionSize(c);
  EXPECT_LE(columns, table.viewport()->width()) << name << ": columns run past the view";
  const QFontMetrics metrics(table.font());
  for (int c = 0; c < model.columnCount(); ++c) {
    const QString title = model.headerData(c, Qt::Horizontal).toString();
    expect_fits(QFontMetrics(header.font()), title, header.sectionSize(c), header.height(), name + " header");
    for (int r = 0; r < model.rowCount(); ++r) {
      expect_fits(metrics, model.data(model.index(r, c)).toString(), header.sectionSize(c),
                  table.rowHeight(r), name + " row " + std::to_string(r));
    }
  }
}

// The check itself catches a clipped cell and a table wider than its view.
TEST(ClippingCheck, ACellTooNarrowForItsTextFails) {
  QTableWidget table(1, 2);
  table.resize(200, 120);
  table.setItem(0, 0, new QTableWidgetItem(QStringLiteral("a cell text far too long for its forty pixels")));
  table.setColumnWidth(0, 40);
  table.setColumnWidth(1, 40);
  table.show();
  const auto failures = [&](const std::string& name) {
    ::testing::TestPartResultArray results;
    {
      const ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      expect_table_fits(table, name);
    }
    return results.size();
  };
  EXPECT_GT(failures("narrow"), 0);
  table.setColumnWidth(0, 400);
  EXPECT_GT(failures("wide"), 0);
  table.setColumnWidth(0, 120);
  table.item(0, 0)->setText(QStringLiteral("fits"));
  EXPECT_EQ(failures("fitting"), 0);
}

class Clipping : public ::testing::TestWithParam<Case> {};

TEST_P(Clipping, NoTextIsCutAtThisWindowSize) {
  Inputs in(GetParam());
  MainWindow w(STOWAGE_PROFILES_DIR, ErrorReporting::kStderr);
  w.resize(GetParam().size);
  w.show();
  w.open_files({in.plan, in.trace});
  wait_for_loads(w);
  w.open_measured(in.measured);
  wait_for_loads(w);
  QCoreApplication::processEvents();

  LegendBar& legend = w.legend();
  for (const LegendKey& key : legend.layout_keys(legend.width())) {
    EXPECT_GE(key.rect.left(), 0) << key.text.toStdString();
    EXPECT_LE(key.rect.right(), legend.width()) << key.text.toStdString();
    EXPECT_LE(key.rect.bottom(), legend.height()) << key.text.toStdString() << " below the legend";
  }

  const TimelineView& view = w.timeline();
  const TimelinePainter painter(*view.document(), view.timeline_layout(), view.axis_state().axis());
  const RulerLabels labels = painter.ruler(view.width()).label_rects(QFontMetricsF(view.font()));
  EXPECT_FALSE(labels.ticks.empty());
  for (const auto* list : {&labels.ticks, &labels.steps}) {
    for (const RulerLabel& l : *list) {
      EXPECT_GE(l.rect.left(), view.timeline_layout().metrics().label_width) << l.text.toStdString();
      EXPECT_LE(l.rect.right(), view.width()) << l.text.toStdString();
    }
  }

  for (const auto& [panel, table] :
       {std::pair{QString("Plan"), &w.plan_table()}, std::pair{QString("Compare"), &w.compare_table()},
        std::pair{QString("Compare"), static_cast<QTableView*>(&w.op_error_table())}}) {
    w.show_panel(panel);
    QCoreApplication::processEvents();
    ASSERT_GT(table->model()->rowCount(), 0) << panel.toStdString();
    expect_table_fits(*table, panel.toStdString());
  }
}

INSTANTIATE_TEST_SUITE_P(WindowSizes, Clipping,
                         ::testing::Values(Case{QSize(1280, 720), "tiny-gpt", "tiny"},
                                           Case{QSize(1600, 1000), "tiny-gpt", "tiny"},
                                           Case{QSize(1280, 720), "llama-2-13b", "default"},
                                           Case{QSize(1600, 1000), "llama-2-13b", "default"}),
                         [](const auto& param_info) {
                           std::string name =
                               param_info.param.model + "_" + std::to_string(param_info.param.size.width());
                           std::ranges::replace(name, '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace stowage::gui
