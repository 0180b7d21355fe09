#include "gui/timeline_view.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "gui/op_tooltip.h"
#include "gui/selection.h"

namespace stowage::gui {
namespace {

const TimelineDocument& empty_document() {
  static const TimelineDocument doc;
  return doc;
}

constexpr double kHitPixels = 3;  // how far from an op a click or hover still finds it

}  // namespace

TimelineView::TimelineView(AxisState& axis, QWidget* parent)
    : QWidget(parent),
      axis_(axis),
      layout_(empty_document().model, {}),
      interaction_(axis, LayoutMetrics{}.label_width,
                   {.op_at = [this](QPointF p) { return op_at_point(p); },
                    .select = [this](std::optional<int32_t> op) { select(op); },
                    .toggle_critical_path = [this] { set_critical_path(!highlight_.critical_path); },
                    .selection_span = [this] { return selection_span(); },
                    .repaint = [this] { update(); }}) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setMinimumHeight(120);
  connect(&axis_, &AxisState::changed, this, qOverload<>(&QWidget::update));
}

void TimelineView::set_document(std::shared_ptr<const TimelineDocument> doc) {
  doc_ = std::move(doc);
  layout_ = TimelineLayout(doc_ ? doc_->model : empty_document().model, {});
  highlight_.selection = {};
  stale_.clear();
  setMinimumHeight(static_cast<int>(std::max(120.0, layout_.height())));
  updateGeometry();
  update();
}

void TimelineView::set_counterpart(std::optional<Counterpart> other) {
  counterpart_ = std::move(other);
  highlight_.changes = nullptr;
  if (counterpart_ && counterpart_->compare && !counterpart_->this_is_predicted) {
    // Shares the comparison's ownership; the vector lives in it.
    highlight_.changes = std::shared_ptr<const std::vector<DurationChange>>(
        counterpart_->compare, &counterpart_->compare->measured_changes());
  }
  update();
}

void TimelineView::set_stale(const QString& note) {
  stale_ = note;
  update();
}

void TimelineView::set_critical_path(bool on) {
  highlight_.critical_path = on;
  emit criticalPathChanged(on);
  update();
}

void TimelineView::select(std::optional<int32_t> op) {
  if (!doc_) return;
  highlight_.selection = select_op(doc_->model, op);
  QString summary;
  if (highlight_.selection.op) {
    const TraceOp& o = doc_->model.ops[static_cast<size_t>(*op)];
    summary = QStringLiteral("%1: waits on %2 ops, %3 ops wait on it")
                  .arg(QString::fromUtf8(doc_->model.text(o.name)))
                  .arg(highlight_.selection.waits_on.size())
                  .arg(highlight_.selection.waited_by.size());
  }
  emit selectionChanged(summary);
  update();
}

std::optional<std::pair<SimTime, SimTime>> TimelineView::selection_span() const {
  if (!doc_ || !highlight_.selection.op) return std::nullopt;
  const auto& ops = doc_->model.ops;
  SimTime begin = ops[static_cast<size_t>(*highlight_.selection.op)].start;
  SimTime end = ops[static_cast<size_t>(*highlight_.selection.op)].end;
  for (const auto* list : {&highlight_.selection.waits_on, &highlight_.selection.waited_by}) {
    for (const int32_t i : *list) {
      begin = std::min(begin, ops[static_cast<size_t>(i)].start);
      end = std::max(end, ops[static_cast<size_t>(i)].end);
    }
  }
  return std::pair(begin, std::max(end, begin + 1));
}

void TimelineView::zoom_to_selection() {
  if (const auto span = selection_span())
    axis_.update([&](TimeAxis& a) { a.fit(span->first, span->second); });
}

std::optional<int32_t> TimelineView::op_at_point(QPointF point) const {
  if (!doc_ || point.x() < layout_.metrics().label_width) return std::nullopt;
  const std::optional<int32_t> track = layout_.track_at(point.y());
  if (!track) return std::nullopt;
  const TimeAxis& a = axis_.axis();
  const SimTime time = a.to_time(point.x() - layout_.metrics().label_width);
  return op_at(doc_->model, *track, time, static_cast<SimTime>(kHitPixels * a.ns_per_pixel()));
}

QString TimelineView::tooltip_at(QPointF point) const {
  // A run merged at this zoom speaks for its ops; the nearest op alone would mislead.
  if (const std::optional<int32_t> track = layout_.track_at(point.y());
      doc_ && track && point.x() >= layout_.metrics().label_width) {
    const std::optional<DrawnBox> box =
        TimelinePainter(*doc_, layout_, axis_.axis()).box_at(*track, point.x());
    if (box && box->count > 1)
      return QString::fromStdString(run_tooltip(box->count, box->busy, box->start, box->end));
  }
  const std::optional<int32_t> op = op_at_point(point);
  if (!op) return {};
  const TraceOp& self = doc_->model.ops[static_cast<size_t>(*op)];
  std::string text = op_tooltip(self, doc_->model.text(self.name));
  if (counterpart_ && counterpart_->doc && counterpart_->compare) {
    const CompareModel& c = *counterpart_->compare;
    const std::optional<int32_t> other =
        counterpart_->this_is_predicted ? c.measured_of(*op) : c.predicted_of(*op);
    const std::string source =
        counterpart_->doc->model.info.source.empty() ? "other" : counterpart_->doc->model.info.source;
    text += other ? "\n" + difference_line(self, counterpart_->doc->model.ops[static_cast<size_t>(*other)],
                                           source)
                  : "\nnot in the " + source + " timeline";
  }
  return QString::fromStdString(text);
}

QSize TimelineView::sizeHint() const {
  return {1200, static_cast<int>(std::max(160.0, layout_.height() + 4))};
}

bool TimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const QString text = tooltip_at(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(event);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  if (!doc_) {
    painter.fillRect(rect(), Qt::white);
    painter.setPen(Qt::darkGray);
    painter.drawText(
        rect(), Qt::AlignCenter,
        tr("Open a plan (.yaml) or a trace (.json): File > Open, the command line, or drop it here"));
    return;
  }
  TimelinePainter(*doc_, layout_, axis_.axis()).paint(painter, width(), highlight_);
  if (!stale_.isEmpty()) {
    // Over the tracks, under the ruler: the whole width, amber, impossible to miss.
    const QRectF banner(0, layout_.metrics().ruler_height, width(), 22);
    painter.fillRect(banner, QColor(0xff, 0xd5, 0x4f, 235));
    painter.setPen(QColor(0x33, 0x22, 0x00));
    painter.drawText(banner.adjusted(8, 0, -8, 0), Qt::AlignVCenter | Qt::AlignLeft,
                     painter.fontMetrics().elidedText(stale_, Qt::ElideRight, width() - 16));
  }
  if (const auto band = interaction_.rubber_band()) {
    painter.fillRect(QRectF(band->first, 0, band->second - band->first, height()),
                     QColor(0x30, 0x60, 0xc0, 50));
  }
}

// A view that showed everything (fit all) still does after a resize, such as
// the panels closing; one zoomed in keeps its start and scale.
void TimelineView::resizeEvent(QResizeEvent*) {
  const double plot = std::max(1.0, width() - layout_.metrics().label_width);
  const TimeAxis& a = axis_.axis();
  if (a.width() == plot) return;
  const bool showed_all = doc_ && a.visible_begin() <= a.bounds_begin() &&
                          a.visible_end() >= a.bounds_end() &&
                          a.visible_end() - a.visible_begin() <= 2 * (a.bounds_end() - a.bounds_begin());
  axis_.update([&](TimeAxis& axis) {
    axis.set_width(plot);
    if (showed_all) axis.fit_all();
  });
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  interaction_.wheel(*event);
}
void TimelineView::mousePressEvent(QMouseEvent* event) {
  interaction_.press(*event);
}
void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  interaction_.move(*event);
}
void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  interaction_.release(*event);
}
void TimelineView::keyPressEvent(QKeyEvent* event) {
  if (!interaction_.key(*event)) QWidget::keyPressEvent(event);
}

}  // namespace stowage::gui
