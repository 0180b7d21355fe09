// The planner panel: choose machine, model and training from the bundled
// profiles (or a YAML file), run the planner and simulator on a worker
// thread with progress (candidates simulated of the most the search may
// simulate) and cancel (stops the search before its next simulation), and
// show the chosen plan against the baselines. The chosen plan and its simulated timeline go out through
// planReady for the main window to show.
#pragma once

#include <QComboBox>
#include <QFutureWatcher>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QWidget>
#include <memory>
#include <stop_token>

#include "core/plan_file.h"
#include "gui/planner_job.h"
#include "gui/timeline_document.h"

namespace stowage::gui {

// What the worker hands back: the outcome, or the diagnostics.
struct PlannerReply {
  core::Result<PlannerOutcome> outcome;
  std::shared_ptr<const TimelineDocument> timeline;  // prepared on the worker
};

class PlannerPanel : public QWidget {
  Q_OBJECT
 public:
  PlannerPanel(std::filesystem::path profiles, QWidget* parent = nullptr);
  // Shows these profile names (or paths) in the choosers.
  void set_inputs(const QString& machine, const QString& model, const QString& training);
  void run();
  // Asks the running job to stop; it finishes (signal finished) at its next
  // candidate, with the panel saying it was cancelled.
  void cancel();
  [[nodiscard]] bool running() const { return watcher_.isRunning() && !cancelled_; }
  [[nodiscard]] QString status_text() const { return status_->text(); }
  [[nodiscard]] const QProgressBar& progress_bar() const { return *progress_; }

 signals:
  void planReady(const core::PlanFile& plan, std::shared_ptr<const TimelineDocument> timeline);
  void finished();
  // The run found nothing that fits: a timeline shown from an earlier plan is stale.
  void nothingFits();

 private:
  QComboBox* chooser(core::ProfileKind kind, const QString& initial);
  void progress_changed(const PlannerProgressReport& report);
  [[nodiscard]] QString nothing_fits_text(const PlannerOutcome& out) const;
  void show_reply();
  void show_baselines(const PlannerOutcome& outcome);

  std::filesystem::path profiles_;
  QComboBox* machine_ = nullptr;
  QComboBox* model_ = nullptr;
  QComboBox* training_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QTableWidget* results_ = nullptr;
  QFutureWatcher<std::shared_ptr<PlannerReply>> watcher_;
  std::stop_source stop_;
  bool cancelled_ = false;
  PlannerProgressReport last_;  // the search's latest progress
};

}  // namespace stowage::gui
