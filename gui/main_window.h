// The main window wires the pieces together and does little else: the
// timeline (and a measured one under it when comparing) and the memory view
// on one shared axis, docks for the plan table, the planner panel and the
// comparison summary, the File and View menus, drag and drop, and loading
// files on worker threads.
#pragma once

#include <QDockWidget>
#include <QFutureWatcher>
#include <QLabel>
#include <QMainWindow>
#include <QMenu>
#include <QSplitter>
#include <QTableView>
#include <filesystem>
#include <memory>

#include "core/diagnostic.h"
#include "gui/axis_state.h"
#include "gui/compare_model.h"
#include "gui/compare_summary_view.h"
#include "gui/file_loader.h"
#include "gui/legend_bar.h"
#include "gui/memory_view.h"
#include "gui/op_error_table.h"
#include "gui/plan_table_model.h"
#include "gui/planner_panel.h"
#include "gui/recent_files.h"
#include "gui/timeline_view.h"

namespace stowage::gui {

// How problems reach the user: a dialog, or (screenshot mode) stderr.
enum class ErrorReporting { kDialog, kStderr };

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  MainWindow(std::filesystem::path profiles, ErrorReporting errors, QWidget* parent = nullptr);

  // Opens plans and traces; each loads on a worker thread. A trace whose
  // source is "measured" (or a PyTorch profiler's) goes under the predicted
  // one already open.
  void open_files(const QStringList& paths);
  // Opens `path` as the measured side of a comparison.
  void open_measured(const QString& path);
  [[nodiscard]] bool loading() const { return pending_ > 0; }
  // Inputs that could not be opened or simulated so far (--screenshot exits
  // non-zero when there is one).
  [[nodiscard]] int failed_inputs() const { return failed_inputs_; }

  void set_critical_path(bool on);
  void select_op_id(qint64 id);
  void show_panel(const QString& dock_name);
  // Hides the Plan, Planner and Compare panels (View > Panels brings them back).
  void hide_panels();
  [[nodiscard]] TimelineView& timeline() { return *timeline_; }
  [[nodiscard]] TimelineView& measured_timeline() { return *measured_; }
  [[nodiscard]] MemoryView& memory() { return *memory_; }
  [[nodiscard]] PlannerPanel& planner() { return *planner_; }
  [[nodiscard]] QWidget& view_area() { return *view_area_; }
  [[nodiscard]] LegendBar& legend() { return *legend_; }
  [[nodiscard]] const QLabel& warnings_label() const { return *warnings_; }
  [[nodiscard]] QTableView& plan_table() { return *plan_table_; }
  [[nodiscard]] QTableView& compare_table() { return *compare_summary_; }
  [[nodiscard]] const QLabel& compare_origins_label() const { return *compare_origins_; }
  [[nodiscard]] OpErrorTable& op_error_table() { return *op_errors_; }

 signals:
  void loadsFinished();

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void build_menus();
  void build_docks();
  void rebuild_recent_menu();
  void load(const QString& path, bool as_measured);
  void loaded(const core::Result<LoadedFile>& file, bool as_measured);
  void finish_load();
  void set_primary(std::shared_ptr<const TimelineDocument> doc);
  void set_measured(std::shared_ptr<const TimelineDocument> doc);
  void set_plan(const core::PlanFile& plan, const std::array<std::optional<core::Bytes>, 3>& capacity);
  void refit_axis();
  void apply_default_heights();
  void fit_panels_to_tables();
  void show_measured_op(int32_t op);
  void report(const QString& title, const QString& text, const QString& details = {});
  void report(const QString& title, const core::Diagnostics& diagnostics);
  void export_view(bool as_svg);

  std::filesystem::path profiles_;
  ErrorReporting errors_;
  AxisState axis_;
  QWidget* view_area_ = nullptr;
  QSplitter* splitter_ = nullptr;
  LegendBar* legend_ = nullptr;
  QLabel* warnings_ = nullptr;
  TimelineView* timeline_ = nullptr;
  TimelineView* measured_ = nullptr;
  MemoryView* memory_ = nullptr;
  PlanTableModel* plan_model_ = nullptr;
  QLabel* plan_summary_ = nullptr;
  QTableView* plan_table_ = nullptr;
  QDockWidget* plan_dock_ = nullptr;
  PlannerPanel* planner_ = nullptr;
  CompareSummaryView* compare_summary_ = nullptr;
  QLabel* compare_origins_ = nullptr;  // where each side's times come from (core/trace_origin.h)
  OpErrorTable* op_errors_ = nullptr;
  QAction* critical_action_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  RecentFiles* recent_ = nullptr;
  int pending_ = 0;
  // A measured trace loaded before the rest of its batch: shown once the
  // batch is in, under the prediction if one came with it.
  std::shared_ptr<const TimelineDocument> waiting_measured_;
  int failed_inputs_ = 0;
  bool simulated_plan_ = false;
};

}  // namespace stowage::gui
