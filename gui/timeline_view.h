// The timeline widget: shows one TimelineDocument on the shared axis,
// paints through TimelinePainter, hands input to TimelineInteraction and
// shows an op's details on hover. When comparing, it knows the other
// timeline so hovering an op also shows how the other run of it differed.
#pragma once

#include <QWidget>
#include <memory>
#include <optional>

#include "gui/axis_state.h"
#include "gui/compare_model.h"
#include "gui/timeline_document.h"
#include "gui/timeline_interaction.h"
#include "gui/timeline_layout.h"
#include "gui/timeline_painter.h"

namespace stowage::gui {

// The other timeline of a comparison, as seen from this view.
struct Counterpart {
  std::shared_ptr<const TimelineDocument> doc;
  std::shared_ptr<const CompareModel> compare;
  bool this_is_predicted = true;  // which side of `compare` this view shows
};

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(AxisState& axis, QWidget* parent = nullptr);

  void set_document(std::shared_ptr<const TimelineDocument> doc);
  [[nodiscard]] const std::shared_ptr<const TimelineDocument>& document() const { return doc_; }
  void set_counterpart(std::optional<Counterpart> other);
  void set_critical_path(bool on);
  // Marks the timeline as no longer matching what the user asked for (a
  // planner run found nothing): a banner says `note`. A new document clears it.
  void set_stale(const QString& note);
  [[nodiscard]] const QString& stale_note() const { return stale_; }
  [[nodiscard]] bool critical_path() const { return highlight_.critical_path; }
  // Selects op `op` (an index into the model) or clears the selection.
  void select(std::optional<int32_t> op);
  [[nodiscard]] const TimelineHighlight& highlight() const { return highlight_; }
  [[nodiscard]] const TimelineLayout& timeline_layout() const { return layout_; }
  [[nodiscard]] const AxisState& axis_state() const { return axis_; }
  // Fits the axis to the selected op with what it waits on and what waits on it.
  void zoom_to_selection();
  // The op under a widget point, if any.
  [[nodiscard]] std::optional<int32_t> op_at_point(QPointF point) const;
  // What hovering `point` shows: a merged run's count and busy time, or the
  // op's details (and, when comparing, the other run's); empty over nothing.
  [[nodiscard]] QString tooltip_at(QPointF point) const;
  [[nodiscard]] QSize sizeHint() const override;

 signals:
  void selectionChanged(const QString& summary);
  void criticalPathChanged(bool on);

 protected:
  bool event(QEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;

 private:
  [[nodiscard]] std::optional<std::pair<SimTime, SimTime>> selection_span() const;

  AxisState& axis_;
  std::shared_ptr<const TimelineDocument> doc_;
  std::optional<Counterpart> counterpart_;
  TimelineLayout layout_;
  TimelineHighlight highlight_;
  TimelineInteraction interaction_;
  QString stale_;
};

}  // namespace stowage::gui
