#include "gui/main_window.h"

#include <QApplication>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QHeaderView>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollBar>
#include <QStatusBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>
#include <iostream>
#include <utility>

#include "gui/background_task.h"
#include "gui/diagnostics_summary.h"
#include "gui/legend_bar.h"
#include "gui/partition_names.h"
#include "gui/view_export.h"

namespace stowage::gui {
namespace {

// How a warning stands out: the prediction's warnings above the timeline,
// a comparison of two machines above the compare table.
const QString kWarningStyle =
    QStringLiteral("QLabel { background: #fff3cd; color: #332200; padding: 3px 8px; }");

// Above the comparison: what each side's times are of, and, where the
// measured run was not on the predicted machine's GPU, that the errors are
// mostly the machines' difference (highlighted, as the warnings are);
// led by `first`, highlighted too, where one is given.
void show_origins(QLabel& label, const core::TraceOrigin& predicted, const core::TraceOrigin& measured,
                  const QString& first = {}) {
  QStringList lines;
  if (!first.isEmpty()) lines << first;
  for (const std::string& line : core::comparison_origins(predicted, measured))
    lines << QString::fromStdString(line);
  const std::optional<std::string> difference = core::machine_difference(predicted, measured);
  if (difference) lines << QStringLiteral("Note: ") + QString::fromStdString(*difference);
  label.setText(lines.join('\n'));
  label.setStyleSheet(difference || !first.isEmpty() ? kWarningStyle : QString());
  label.setVisible(!lines.isEmpty());
}

// Why a PyTorch profiler trace is drawn but not compared here, and the
// command that compares it.
QString pytorch_profiler_note(const TimelineDocument& foreign, const TimelineDocument& predicted,
                              const TimelineDocument& measured) {
  const auto name = [](const TimelineDocument& d) {
    return QString::fromStdString(std::filesystem::path(d.model.info.file).filename().string());
  };
  const QString why =
      QStringLiteral(
          "%1 is a PyTorch profiler trace: its ops have no Stowage ids, so none can be matched "
          "to a prediction's here. ")
          .arg(name(foreign));
  // Opened first, it was taken for the prediction: the command has it second.
  if (&foreign != &measured)
    return why + QStringLiteral("It is the measured side of stowage compare PREDICTED.json %1")
                     .arg(QString::fromStdString(foreign.model.info.file));
  return why + QStringLiteral("To compare the two lane by lane: stowage compare %1 %2")
                   .arg(QString::fromStdString(predicted.model.info.file),
                        QString::fromStdString(measured.model.info.file));
}

QDockWidget* dock(QMainWindow& window, const QString& title, QWidget* content) {
  auto* d = new QDockWidget(title, &window);
  d->setObjectName(title);
  d->setWidget(content);
  window.addDockWidget(Qt::RightDockWidgetArea, d);
  return d;
}

}  // namespace

MainWindow::MainWindow(std::filesystem::path profiles, ErrorReporting errors, QWidget* parent)
    : QMainWindow(parent), profiles_(std::move(profiles)), errors_(errors) {
  setWindowTitle(tr("Stowage"));
  setAcceptDrops(true);
  timeline_ = new TimelineView(axis_);
  measured_ = new TimelineView(axis_);
  measured_->hide();
  memory_ = new MemoryView(axis_);
  auto* splitter = splitter_ = new QSplitter(Qt::Vertical);
  splitter->addWidget(timeline_);
  splitter->addWidget(measured_);
  splitter->addWidget(memory_);
  // Memory keeps its rows' default height (the splitter moves it); the
  // timelines take the rest.
  splitter->setStretchFactor(0, 1);
  splitter->setStretchFactor(1, 1);
  splitter->setStretchFactor(2, 0);
  view_area_ = new QWidget;
  auto* layout = new QVBoxLayout(view_area_);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  legend_ = new LegendBar;
  layout->addWidget(legend_);
  // The shown prediction's warnings (TraceInfo::warnings), as `stowage
  // simulate` printed them, above the timeline: in the view, and in its
  // exports, wherever the figures are. Hidden when there are none.
  warnings_ = new QLabel;
  warnings_->setWordWrap(true);
  warnings_->setTextFormat(Qt::PlainText);
  warnings_->setStyleSheet(kWarningStyle);
  warnings_->hide();
  layout->addWidget(warnings_);
  layout->addWidget(splitter, 1);
  setCentralWidget(view_area_);
  recent_ = new RecentFiles(this);
  build_docks();
  build_menus();
  connect(memory_, &MemoryView::rowsChanged, this, &MainWindow::apply_default_heights);
  connect(timeline_, &TimelineView::selectionChanged, statusBar(),
          [this](const QString& s) { statusBar()->showMessage(s); });
  connect(measured_, &TimelineView::selectionChanged, statusBar(),
          [this](const QString& s) { statusBar()->showMessage(s); });
  connect(timeline_, &TimelineView::criticalPathChanged, this,
          [this](bool on) { critical_action_->setChecked(on); });
  statusBar()->showMessage(
      tr("Wheel or W/S zooms, drag or A/D pans, F fits, Shift-drag zooms to a span, click selects, C shows "
         "the critical path"));
}

void MainWindow::build_docks() {
  plan_model_ = new PlanTableModel(this);
  auto* table = plan_table_ = new QTableView;
  table->setModel(plan_model_);
  table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  plan_summary_ = new QLabel(tr("No plan open."));
  plan_summary_->setWordWrap(true);
  auto* plan_box = new QWidget;
  auto* plan_layout = new QVBoxLayout(plan_box);
  plan_layout->addWidget(plan_summary_);
  plan_layout->addWidget(table, 1);
  planner_ = new PlannerPanel(profiles_);
  compare_summary_ = new CompareSummaryView;
  op_errors_ = new OpErrorTable;
  auto* compare_box = new QWidget;
  auto* compare_layout = new QVBoxLayout(compare_box);
  compare_origins_ = new QLabel;
  compare_origins_->setWordWrap(true);
  compare_origins_->setTextFormat(Qt::PlainText);
  compare_origins_->hide();
  compare_layout->addWidget(compare_origins_);
  compare_layout->addWidget(compare_summary_);
  compare_layout->addWidget(new QLabel(tr("Ops with the largest error (click one to show it):")));
  compare_layout->addWidget(op_errors_, 1);
  connect(op_errors_, &OpErrorTable::jumpTo, this, &MainWindow::show_measured_op);
  QDockWidget* plan_dock = plan_dock_ = dock(*this, tr("Plan"), plan_box);
  QDockWidget* planner_dock = dock(*this, tr("Planner"), planner_);
  QDockWidget* compare_dock = dock(*this, tr("Compare"), compare_box);
  tabifyDockWidget(plan_dock, planner_dock);
  tabifyDockWidget(planner_dock, compare_dock);
  plan_dock->raise();
  resizeDocks({plan_dock}, {430}, Qt::Horizontal);
  connect(planner_, &PlannerPanel::planReady, this,
          [this](const core::PlanFile& plan, std::shared_ptr<const TimelineDocument> doc) {
            set_plan(plan, doc ? doc->model.capacity : std::array<std::optional<core::Bytes>, 3>{});
            set_measured(nullptr);
            if (doc) set_primary(std::move(doc));
          });
  connect(planner_, &PlannerPanel::finished, this, &MainWindow::fit_panels_to_tables);
  connect(planner_, &PlannerPanel::nothingFits, this, [this] {
    if (!timeline_->document()) return;
    timeline_->set_stale(
        tr("Stale: the last planner run found nothing that fits (see the Planner panel); "
           "this timeline is of the plan shown before it."));
  });
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open..."), QKeySequence::Open, this, [this] {
    open_files(QFileDialog::getOpenFileNames(this, tr("Open plan or trace"), {},
                                             tr("Plans and traces (*.yaml *.yml *.json);;All files (*)")));
  });
  file->addAction(tr("Open &measured trace to compare..."), this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Measured trace"), {}, tr("Traces (*.json)"));
    if (!path.isEmpty()) open_measured(path);
  });
  recent_menu_ = file->addMenu(tr("Open &recent"));
  connect(recent_, &RecentFiles::changed, this, &MainWindow::rebuild_recent_menu);
  rebuild_recent_menu();
  file->addSeparator();
  file->addAction(tr("Export view as &PNG..."), this, [this] { export_view(false); });
  file->addAction(tr("Export view as &SVG..."), this, [this] { export_view(true); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::quit);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Fit all"), QKeySequence(Qt::Key_F), this,
                  [this] { axis_.update([](TimeAxis& a) { a.fit_all(); }); });
  view->addAction(tr("&Zoom to selection"), QKeySequence(Qt::Key_Z), this,
                  [this] { timeline_->zoom_to_selection(); });
  view->addAction(tr("Zoom &in"), QKeySequence::ZoomIn, this,
                  [this] { axis_.update([](TimeAxis& a) { a.zoom_around(a.width() / 2, kZoomStep); }); });
  view->addAction(tr("Zoom &out"), QKeySequence::ZoomOut, this,
                  [this] { axis_.update([](TimeAxis& a) { a.zoom_around(a.width() / 2, 1 / kZoomStep); }); });
  critical_action_ = view->addAction(tr("&Critical path"), QKeySequence(Qt::Key_C), this,
                                     [this](bool on) { set_critical_path(on); });
  critical_action_->setCheckable(true);
  for (QAction* a : view->actions()) a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  QMenu* panels = view->addMenu(tr("&Panels"));
  for (QDockWidget* d : findChildren<QDockWidget*>()) panels->addAction(d->toggleViewAction());
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  for (const QString& path : recent_->files()) {
    recent_menu_->addAction(path, this, [this, path] { open_files({path}); });
  }
  recent_menu_->setEnabled(!recent_->files().isEmpty());
  if (!recent_->files().isEmpty()) {
    recent_menu_->addSeparator();
    recent_menu_->addAction(tr("Clear"), recent_, &RecentFiles::clear);
  }
}

void MainWindow::open_files(const QStringList& paths) {
  for (const QString& path : paths) load(path, false);
}

void MainWindow::open_measured(const QString& path) {
  load(path, true);
}

void MainWindow::load(const QString& path, bool as_measured) {
  ++pending_;
  auto* watcher = new QFutureWatcher<core::Result<LoadedFile>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, as_measured] {
    loaded(watcher->result(), as_measured);
    watcher->deleteLater();
    finish_load();
  });
  const std::filesystem::path file = path.toStdString();
  watcher->setFuture(
      QtConcurrent::run([file, root = profiles_] {
        return without_throwing<LoadedFile>(file.string(), "cannot load",
                                            [&] { return load_file(file, core::ProfileCatalog(root)); });
      }));
  if (errors_ == ErrorReporting::kDialog) recent_->add(path);
}

void MainWindow::loaded(const core::Result<LoadedFile>& file, bool as_measured) {
  if (!file) {
    ++failed_inputs_;
    return report(tr("Cannot open file"), file.error());
  }
  if (file->plan) return set_plan(*file->plan, file->capacity);
  const TraceInfo& info = file->timeline->model.info;
  const bool measured_source = info.source == "measured" || info.pytorch_profiler;
  if (as_measured || (measured_source && timeline_->document())) return set_measured(file->timeline);
  // Opened together, a prediction and a run load at once: the one that
  // finishes first must not decide which is shown as which, so a run
  // waits for the rest of its batch (finish_load).
  if (measured_source && pending_ > 1) {
    waiting_measured_ = file->timeline;
    return;
  }
  set_primary(file->timeline);
}

// When everything asked for has loaded: a run that waited goes under the
// prediction (or is shown alone); a plan opened without a trace is
// simulated so that its timeline shows.
void MainWindow::finish_load() {
  if (--pending_ > 0) return;
  if (auto measured = std::exchange(waiting_measured_, nullptr)) {
    if (timeline_->document()) {
      set_measured(measured);
    } else {
      set_primary(measured);
    }
  }
  if (plan_model_->plan() && !timeline_->document() && !simulated_plan_) {
    simulated_plan_ = true;
    ++pending_;
    auto* watcher = new QFutureWatcher<core::Result<std::shared_ptr<const TimelineDocument>>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher] {
      const auto result = watcher->result();
      watcher->deleteLater();
      if (result) {
        set_primary(*result);
      } else {
        ++failed_inputs_;
        report(tr("Cannot simulate the plan"), result.error());
      }
      finish_load();
    });
    watcher->setFuture(
        QtConcurrent::run([plan = *plan_model_->plan(),
                           root = profiles_]() -> core::Result<std::shared_ptr<const TimelineDocument>> {
          return without_throwing<std::shared_ptr<const TimelineDocument>>(
              plan.places.file, "cannot simulate the plan",
              [&]() -> core::Result<std::shared_ptr<const TimelineDocument>> {
                auto model = simulate_plan(plan, core::ProfileCatalog(root));
                if (!model) return std::unexpected(model.error());
                return prepare_document(std::move(*model));
              });
        }));
    return;
  }
  emit loadsFinished();
}

void MainWindow::set_primary(std::shared_ptr<const TimelineDocument> doc) {
  setWindowTitle(tr("Stowage - %1").arg(QString::fromStdString(doc->model.info.title)));
  QStringList warnings;
  for (const std::string& w : doc->model.info.warnings) warnings << QStringLiteral("warning: ") + QString::fromStdString(w);
  warnings_->setText(warnings.join('\n'));
  warnings_->setVisible(!warnings.isEmpty());
  timeline_->set_document(doc);
  memory_->set_document(doc);
  if (const auto& measured = measured_->document()) set_measured(measured);
  refit_axis();
  apply_default_heights();
}

// Memory gets its rows' default height, at most a third of the view; the
// timelines share the rest in proportion to the heights their tracks need.
void MainWindow::apply_default_heights() {
  const int total = splitter_->height();
  if (total <= 0) return;
  const int memory = std::min(memory_->sizeHint().height(), total / 3);
  const int primary = timeline_->sizeHint().height();
  const int measured = measured_->isVisibleTo(this) ? measured_->sizeHint().height() : 0;
  const int rest = total - memory;
  const int measured_share = measured > 0 ? rest * measured / (primary + measured) : 0;
  splitter_->setSizes({rest - measured_share, measured_share, memory});
}

void MainWindow::set_measured(std::shared_ptr<const TimelineDocument> doc) {
  const auto predicted = timeline_->document();
  measured_->set_document(doc);
  memory_->set_measured(predicted && doc != predicted ? doc : nullptr);
  measured_->setVisible(doc != nullptr);
  legend_->set_comparing(doc != nullptr && predicted != nullptr);
  if (!doc || !predicted) {
    timeline_->set_counterpart(std::nullopt);
    measured_->set_counterpart(std::nullopt);
    compare_summary_->clear_comparison();
    op_errors_->clear_comparison();
    compare_origins_->hide();
    if (doc && !predicted) set_primary(doc);
    return;
  }
  // A PyTorch profiler trace's ops have no Stowage ids: matched by their
  // order they would pair unrelated ops (every op's error, every lane's,
  // made up). Both are drawn; the comparison by lane is the command's.
  if (const TimelineDocument* foreign = doc->model.info.pytorch_profiler         ? doc.get()
                                        : predicted->model.info.pytorch_profiler ? predicted.get()
                                                                                 : nullptr) {
    timeline_->set_counterpart(std::nullopt);
    measured_->set_counterpart(std::nullopt);
    compare_summary_->clear_comparison();
    op_errors_->clear_comparison();
    show_origins(*compare_origins_, predicted->model.info.origin, doc->model.info.origin,
                 pytorch_profiler_note(*foreign, *predicted, *doc));
    show_panel(tr("Compare"));
    refit_axis();
    apply_default_heights();
    return;
  }
  const auto compare = std::make_shared<const CompareModel>(predicted->model, doc->model);
  timeline_->set_counterpart(Counterpart{.doc = doc, .compare = compare, .this_is_predicted = true});
  measured_->set_counterpart(Counterpart{.doc = predicted, .compare = compare, .this_is_predicted = false});
  compare_summary_->set_comparison(*compare);
  op_errors_->set_comparison(*compare, doc->model);
  show_origins(*compare_origins_, predicted->model.info.origin, doc->model.info.origin);
  fit_panels_to_tables();
  show_panel(tr("Compare"));
  refit_axis();
  apply_default_heights();
}

void MainWindow::set_plan(const core::PlanFile& plan,
                          const std::array<std::optional<core::Bytes>, 3>& capacity) {
  plan_model_->set_plan(plan, partition_names(plan, core::ProfileCatalog(profiles_)));
  memory_->set_capacity(capacity);
  QString text = tr("<b>%1</b> on <b>%2</b>, training %3, ZeRO stage %4, %5 partitions")
                     .arg(QString::fromStdString(plan.model), QString::fromStdString(plan.machine),
                          QString::fromStdString(plan.training))
                     .arg(static_cast<int>(plan.policy.stage))
                     .arg(plan.policy.partitions.size());
  if (plan.predicted) {
    text += tr("<br>the plan records: step %1, %2 tokens/s, bound by %3")
                .arg(QString::fromStdString(core::format_seconds(plan.predicted->step_time)))
                .arg(plan.predicted->tokens_per_second, 0, 'f', 0)
                .arg(QString::fromStdString(plan.predicted->bounding_lane));
  }
  plan_summary_->setText(text);
  fit_panels_to_tables();
  planner_->set_inputs(QString::fromStdString(plan.machine), QString::fromStdString(plan.model),
                       QString::fromStdString(plan.training));
}

void MainWindow::refit_axis() {
  SimTime begin = 0, end = 1;
  for (const TimelineView* v : {timeline_, measured_}) {
    if (const auto& doc = v->document())
      begin = std::min(begin, doc->model.begin_time()), end = std::max(end, doc->model.end_time());
  }
  axis_.update([&](TimeAxis& a) {
    a.set_bounds(begin, end);
    a.fit_all();
  });
}

void MainWindow::set_critical_path(bool on) {
  if (timeline_->critical_path() != on) timeline_->set_critical_path(on);
  if (measured_->critical_path() != on) measured_->set_critical_path(on);
  critical_action_->setChecked(on);
}

void MainWindow::select_op_id(qint64 id) {
  const auto& doc = timeline_->document();
  if (!doc) return;
  if (const std::optional<int32_t> op = doc->model.index_of_id(id)) {
    timeline_->select(op);
    timeline_->zoom_to_selection();
  }
}

void MainWindow::show_panel(const QString& dock_name) {
  if (auto* d = findChild<QDockWidget*>(dock_name)) {
    d->show();
    d->raise();
  }
}

// The panels (tabbed in one dock area) get the width their widest table
// needs to show every column whole, up to 45 % of the window. (The
// planner's notes and the op error list's names wrap instead.)
void MainWindow::fit_panels_to_tables() {
  int needed = 0;
  for (QTableView* t : std::initializer_list<QTableView*>{plan_table_, compare_summary_}) {
    t->resizeColumnsToContents();
    int w = 2 * t->frameWidth() + t->verticalScrollBar()->sizeHint().width() + 24;  // 24: the dock's margins
    if (t->verticalHeader()->isVisible()) w += t->verticalHeader()->sizeHint().width();
    for (int c = 0; c < t->model()->columnCount(); ++c) w += t->horizontalHeader()->sectionSize(c);
    needed = std::max(needed, w);
  }
  resizeDocks({plan_dock_}, {std::clamp(needed, 430, width() * 45 / 100)}, Qt::Horizontal);
}

// Selects a measured op and fits the view to it and its neighbours.
void MainWindow::show_measured_op(int32_t op) {
  if (!measured_->document() || op < 0) return;
  measured_->select(op);
  measured_->zoom_to_selection();
}

void MainWindow::hide_panels() {
  for (QDockWidget* d : findChildren<QDockWidget*>()) d->hide();
}

void MainWindow::report(const QString& title, const QString& text, const QString& details) {
  if (errors_ == ErrorReporting::kStderr) {
    std::cerr << (details.isEmpty() ? text : details).toStdString() << '\n';
    return;
  }
  QMessageBox box(QMessageBox::Critical, title, text, QMessageBox::Ok, this);
  if (!details.isEmpty() && details != text) box.setDetailedText(details);
  box.exec();
}

// Many problems are summarised by kind, with the whole list behind "Show Details".
void MainWindow::report(const QString& title, const core::Diagnostics& diagnostics) {
  report(title, QString::fromStdString(summarize(diagnostics)),
         QString::fromStdString(core::to_string(diagnostics)));
}

void MainWindow::export_view(bool as_svg) {
  const QString filter = as_svg ? tr("SVG (*.svg)") : tr("PNG (*.png)");
  const QString path = QFileDialog::getSaveFileName(this, tr("Export view"), {}, filter);
  if (path.isEmpty()) return;
  const QString problem =
      as_svg ? export_svg(*view_area_, path, windowTitle()) : export_png(*view_area_, path);
  if (!problem.isEmpty()) report(tr("Cannot export"), problem);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList paths;
  for (const QUrl& url : event->mimeData()->urls()) {
    if (url.isLocalFile()) paths << url.toLocalFile();
  }
  open_files(paths);
  event->acceptProposedAction();
}

}  // namespace stowage::gui
