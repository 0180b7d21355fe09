#include "gui/planner_panel.h"

#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QPointer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>

#include "core/profile_catalog.h"
#include "gui/background_task.h"
#include "gui/ruler_ticks.h"

namespace stowage::gui {
namespace {

QTableWidgetItem* cell(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
  return item;
}

QString step_text(const planner::Evaluation& e) {
  return e.summary ? QString::fromStdString(core::format_seconds(e.summary->step_time)) : QStringLiteral("-");
}

}  // namespace

PlannerPanel::PlannerPanel(std::filesystem::path profiles, QWidget* parent)
    : QWidget(parent), profiles_(std::move(profiles)) {
  auto* form = new QFormLayout;
  machine_ = chooser(core::ProfileKind::kMachine, QStringLiteral("workstation-24gb-1nvme"));
  model_ = chooser(core::ProfileKind::kModel, QStringLiteral("llama-2-13b"));
  training_ = chooser(core::ProfileKind::kTraining, QStringLiteral("default"));
  const auto with_browse = [this](QComboBox* box) {
    auto* row = new QHBoxLayout;
    auto* browse = new QPushButton(tr("File..."));
    connect(browse, &QPushButton::clicked, this, [this, box] {
      const QString file = QFileDialog::getOpenFileName(this, tr("Profile"), {}, tr("YAML (*.yaml *.yml)"));
      if (!file.isEmpty()) box->setCurrentText(file);
    });
    row->addWidget(box, 1);
    row->addWidget(browse);
    return row;
  };
  form->addRow(tr("Machine"), with_browse(machine_));
  form->addRow(tr("Model"), with_browse(model_));
  form->addRow(tr("Training"), with_browse(training_));

  run_ = new QPushButton(tr("Plan"));
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setFormat(QStringLiteral("%v / %m"));
  status_ = new QLabel(tr("Choose profiles and press Plan."));
  status_->setWordWrap(true);
  results_ = new QTableWidget(0, 5);
  results_->setHorizontalHeaderLabels({tr("plan"), tr("fits"), tr("step time"), tr("tokens/s"), tr("note")});
  results_->verticalHeader()->hide();
  // Notes can be long (the chosen plan's description): they wrap in the
  // last column, which takes the width left, and rows grow to hold them.
  results_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  results_->horizontalHeader()->setSectionResizeMode(4, QHeaderView::Stretch);
  results_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  results_->setWordWrap(true);

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  buttons->addWidget(progress_, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(status_);
  layout->addWidget(results_, 1);

  connect(run_, &QPushButton::clicked, this, &PlannerPanel::run);
  connect(cancel_, &QPushButton::clicked, this, &PlannerPanel::cancel);
  connect(&watcher_, &QFutureWatcherBase::finished, this, &PlannerPanel::show_reply);
}

QComboBox* PlannerPanel::chooser(core::ProfileKind kind, const QString& initial) {
  auto* box = new QComboBox;
  box->setEditable(true);
  for (const std::string& name : core::ProfileCatalog(profiles_).names(kind))
    box->addItem(QString::fromStdString(name));
  box->setCurrentText(initial);
  return box;
}

void PlannerPanel::set_inputs(const QString& machine, const QString& model, const QString& training) {
  machine_->setCurrentText(machine);
  model_->setCurrentText(model);
  training_->setCurrentText(training);
}

void PlannerPanel::run() {
  if (watcher_.isRunning()) return;
  const PlannerRequest request{.machine = machine_->currentText().toStdString(),
                               .model = model_->currentText().toStdString(),
                               .training = training_->currentText().toStdString(),
                               .profiles = profiles_};
  stop_ = std::stop_source();
  cancelled_ = false;
  run_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setRange(0, 0);  // busy until the search says how far it may go
  progress_->setFormat(QStringLiteral("%v / %m"));
  last_ = {};
  QPointer<PlannerPanel> self(this);
  const auto progress = [self](const PlannerProgressReport& report) {
    QMetaObject::invokeMethod(
        qApp,
        [self, report] {
          if (self) self->progress_changed(report);
        },
        Qt::QueuedConnection);
  };
  watcher_.setFuture(QtConcurrent::run([request, token = stop_.get_token(), progress] {
    auto reply = std::make_shared<PlannerReply>(PlannerReply{.outcome = without_throwing<PlannerOutcome>(
                                                              "", "the planner failed",
                                                              [&] { return run_planner(request, token, progress); })});
    if (reply->outcome && reply->outcome->timeline) {
      auto doc = without_throwing<std::shared_ptr<const TimelineDocument>>(
          "", "cannot show the plan's timeline",
          [&]() -> core::Result<std::shared_ptr<const TimelineDocument>> {
            return prepare_document(*reply->outcome->timeline);
          });
      if (doc)
        reply->timeline = *doc;
      else
        reply->outcome = std::unexpected(doc.error());
    }
    return reply;
  }));
}

// The stop request is an atomic flag the search reads before each
// simulation; the job then returns what it found and show_reply() runs.
void PlannerPanel::cancel() {
  if (!watcher_.isRunning()) return;
  stop_.request_stop();
  cancelled_ = true;
  cancel_->setEnabled(false);
  status_->setText(tr("Cancelling..."));
}

void PlannerPanel::progress_changed(const PlannerProgressReport& report) {
  if (cancelled_) return;
  if (report.stage == PlannerStage::kSearching) last_ = report;
  QString text = QString::fromStdString(std::string(to_string(report.stage)));
  if (report.stage == PlannerStage::kSearching && report.most > 0) {
    progress_->setRange(0, report.most);
    progress_->setValue(std::min(report.simulated, report.most));
    text += tr(": %1 of at most %2 candidates simulated").arg(report.simulated).arg(report.most);
  } else if (report.stage != PlannerStage::kDone) {
    progress_->setRange(0, 0);  // busy: no count for this stage
  }
  status_->setText(text + QStringLiteral("..."));
}

void PlannerPanel::show_reply() {
  run_->setEnabled(true);
  cancel_->setEnabled(false);
  const std::shared_ptr<PlannerReply> reply = watcher_.result();
  if (cancelled_ || (reply->outcome && reply->outcome->cancelled)) {
    progress_->setRange(0, 1);
    progress_->setValue(0);
    progress_->setFormat(tr("cancelled"));
    status_->setText(tr("Cancelled after %1 candidates simulated.").arg(last_.simulated));
    return emit finished();
  }
  progress_->setRange(0, 1);
  progress_->setValue(1);
  progress_->setFormat(tr("done"));
  if (!reply->outcome) {
    status_->setText(QString::fromStdString(core::to_string(reply->outcome.error())));
    return emit finished();
  }
  const PlannerOutcome& out = *reply->outcome;
  show_baselines(out);
  // Warnings as `stowage plan` prints them, under what they qualify.
  QString warnings;
  for (const std::string& w : out.warnings) warnings += QStringLiteral("\nwarning: ") + QString::fromStdString(w);
  if (!out.result.best) {
    status_->setText(nothing_fits_text(out) + warnings);
    emit nothingFits();
  } else {
    const planner::Evaluation& best = *out.result.best;
    status_->setText(
        tr("Chosen: %1\nstep time %2, %3 tokens/s, bound by %4")
            .arg(QString::fromStdString(best.candidate.name), step_text(best))
            .arg(best.summary->tokens_per_second, 0, 'f', 0)
            .arg(QString::fromStdString(std::string(core::to_string(best.summary->bounding_lane)))) +
        warnings);
    emit planReady(*out.plan, reply->timeline);
  }
  emit finished();
}

// As `stowage plan` says it: each change that would make a plan fit, with
// the re-planned step time or what still overflows.
QString PlannerPanel::nothing_fits_text(const PlannerOutcome& out) const {
  QString text = tr("Nothing fits on this machine (the table says what each baseline needs).");
  if (out.advice.empty()) return text;
  return text + QString::fromStdString(planner::advice_text(out.advice)).trimmed().prepend('\n');
}

void PlannerPanel::show_baselines(const PlannerOutcome& out) {
  std::vector<const planner::Evaluation*> rows;
  if (out.result.best) rows.push_back(&*out.result.best);
  for (const planner::Evaluation& e : out.result.baselines) rows.push_back(&e);
  results_->setRowCount(static_cast<int>(rows.size()));
  for (size_t i = 0; i < rows.size(); ++i) {
    const planner::Evaluation& e = *rows[i];
    const int r = static_cast<int>(i);
    results_->setItem(
        r, 0, cell(i == 0 && out.result.best ? tr("chosen") : QString::fromStdString(e.candidate.name)));
    results_->setItem(r, 1, cell(e.fits() ? tr("yes") : tr("NO")));
    results_->setItem(r, 2, cell(step_text(e)));
    results_->setItem(
        r, 3, cell(e.summary ? QString::number(e.summary->tokens_per_second, 'f', 0) : QStringLiteral("-")));
    results_->setItem(r, 4,
                      cell(QString::fromStdString(i == 0 && out.result.best ? e.candidate.name : e.reason)));
  }
}

}  // namespace stowage::gui
