#include "gui/timeline_painter.h"

#include <QFontMetrics>
#include <algorithm>
#include <cmath>

#include "gui/palette.h"
#include "gui/ruler_ticks.h"

namespace stowage::gui {
namespace {

constexpr double kNameAbove = 48;  // boxes wider than this show the op's name

void draw_arrow(QPainter& painter, QPointF from, QPointF to, const QColor& color) {
  painter.setPen(QPen(color, 1.5));
  painter.drawLine(from, to);
  const QPointF d = to - from;
  const double length = std::max(1.0, std::hypot(d.x(), d.y()));
  const QPointF u = d / length, n(-u.y(), u.x());
  painter.setBrush(color);
  painter.drawPolygon(QPolygonF({to, to - 7 * u + 3.5 * n, to - 7 * u - 3.5 * n}));
}

}  // namespace

int TimelinePainter::paint(QPainter& painter, int width, const TimelineHighlight& highlight) const {
  painter.fillRect(QRectF(0, 0, width, layout_.height()), QColor(0xfb, 0xfb, 0xfb));
  paint_rows(painter, width);
  const double left = layout_.metrics().label_width;
  painter.save();
  painter.setClipRect(QRectF(left, 0, width - left, layout_.height()));
  int drawn = 0;
  for (const LayoutRow& row : layout_.rows()) {
    if (row.kind == LayoutRow::Kind::kTrack) drawn += paint_track(painter, row, highlight);
  }
  const RulerPainter rule = ruler(width);
  rule.paint_step_lines(painter, layout_.metrics().ruler_height, layout_.height());
  if (highlight.critical_path) paint_critical_path(painter);
  painter.setRenderHint(QPainter::Antialiasing, true);
  paint_selection(painter, highlight.selection);
  painter.restore();
  rule.paint(painter);
  painter.fillRect(QRectF(0, 0, left, layout_.metrics().ruler_height - 0.5), QColor(0xee, 0xee, 0xee));
  painter.setPen(QColor(0x33, 0x33, 0x33));
  painter.drawText(
      QRectF(6, 0, left - 8, layout_.metrics().ruler_height), Qt::AlignVCenter | Qt::AlignLeft,
      QString::fromStdString(doc_.model.info.source.empty() ? "timeline" : doc_.model.info.source));
  return drawn;
}

RulerPainter TimelinePainter::ruler(int width) const {
  const double ruler_height = layout_.metrics().ruler_height;
  return RulerPainter(axis_, doc_.steps,
                      {.left = layout_.metrics().label_width,
                       .right = static_cast<double>(width),
                       .time_height = ruler_height - RulerMetrics{}.step_height,
                       .step_height = RulerMetrics{}.step_height});
}

bool TimelinePainter::first_of_lane(int32_t track) const {
  const auto& tracks = doc_.model.tracks;
  const Track& t = tracks[static_cast<size_t>(track)];
  for (int32_t i = 0; i < track; ++i) {
    if (tracks[static_cast<size_t>(i)].lane == t.lane && tracks[static_cast<size_t>(i)].rank == t.rank)
      return false;
  }
  return true;
}

double TimelinePainter::busy_share(int32_t track) const {
  const SimTime begin = std::max(axis_.visible_begin(), doc_.model.begin_time());
  const SimTime end = std::min(axis_.visible_end(), doc_.model.end_time());
  const Track& t = doc_.model.tracks[static_cast<size_t>(track)];
  const BusyTime* busy = first_of_lane(track) ? doc_.busy.of(t.rank, t.lane) : nullptr;
  if (!busy && static_cast<size_t>(track) < doc_.busy.by_track.size())
    busy = &doc_.busy.by_track[static_cast<size_t>(track)];
  return busy ? busy->share_in(begin, end) : 0;
}

QString TimelinePainter::busy_text(int32_t track) const {
  return QStringLiteral("%1 %").arg(std::lround(busy_share(track) * 100));
}

void TimelinePainter::paint_rows(QPainter& painter, int width) const {
  const double left = layout_.metrics().label_width;
  for (const LayoutRow& row : layout_.rows()) {
    const QRectF label(6, row.top, left - 10, row.height);
    if (row.kind == LayoutRow::Kind::kRankHeader) {
      painter.fillRect(QRectF(0, row.top, width, row.height), QColor(0xdd, 0xe3, 0xea));
      QFont bold = painter.font();
      bold.setBold(true);
      painter.save();
      painter.setFont(bold);
      painter.setPen(Qt::black);
      painter.drawText(label, Qt::AlignVCenter | Qt::AlignLeft, QStringLiteral("rank %1").arg(row.index));
      painter.restore();
      continue;
    }
    painter.fillRect(QRectF(0, row.top, width, row.height),
                     row.index % 2 ? QColor(0xf2, 0xf4, 0xf7) : QColor(Qt::white));
    paint_track_label(painter, row);
  }
  painter.setPen(QColor(0xbb, 0xbb, 0xbb));
  painter.drawLine(QPointF(left - 0.5, 0), QPointF(left - 0.5, layout_.height()));
}

// The track's name on the left, its busy share in view on the right of the
// label column; the lane's first track in bold, as it speaks for the lane.
void TimelinePainter::paint_track_label(QPainter& painter, const LayoutRow& row) const {
  const QRectF label(6, row.top, layout_.metrics().label_width - 12, row.height);
  const Track& track = doc_.model.tracks[static_cast<size_t>(row.index)];
  const QString share = busy_text(row.index);
  painter.save();
  painter.setPen(QColor(0x22, 0x22, 0x22));
  const QFontMetricsF metrics(painter.font());
  const double share_width = metrics.horizontalAdvance(QStringLiteral("100 %"));
  painter.drawText(label.adjusted(0, 0, -share_width - 4, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   metrics.elidedText(QString::fromStdString(track.name), Qt::ElideRight,
                                      label.width() - share_width - 4));
  painter.setPen(QColor(0x44, 0x44, 0x44));
  painter.drawText(label, Qt::AlignVCenter | Qt::AlignRight, share);
  painter.restore();
}

// The LOD level under 3 pixels, then what is still narrower than 3 pixels
// at this exact zoom merged on the fly.
std::vector<DrawnBox> TimelinePainter::track_boxes(int32_t track) const {
  std::vector<DrawnBox> out;
  if (track < 0 || static_cast<size_t>(track) >= doc_.lod.size()) return out;
  const LodLevel& level =
      doc_.lod[static_cast<size_t>(track)].level_for(kMergeBelowPixels * axis_.ns_per_pixel());
  for (const LodBox& box : TrackLod::visible(level, axis_.visible_begin(), axis_.visible_end())) {
    const DrawnBox next{.x0 = x_of(box.start),
                        .x1 = x_of(box.end),
                        .count = box.count,
                        .first = box.first,
                        .start = box.start,
                        .end = box.end,
                        .busy = box.busy,
                        .lead = box.lead,
                        .category = box.category};
    if (!out.empty()) {
      DrawnBox& run = out.back();
      if ((run.narrow() || run.count > 1) && next.narrow() && next.x0 - run.x1 < 1.0) {
        if (next.lead > run.lead) run.category = next.category, run.lead = next.lead;
        run.x1 = std::max(run.x1, next.x1);
        run.end = std::max(run.end, next.end);
        run.count += next.count;
        run.busy += next.busy;
        continue;
      }
    }
    out.push_back(next);
  }
  return out;
}

std::optional<DrawnBox> TimelinePainter::box_at(int32_t track, double x, double slack) const {
  std::optional<DrawnBox> best;
  double best_distance = slack;
  for (const DrawnBox& b : track_boxes(track)) {
    const double d = x < b.x0 ? b.x0 - x : (x > std::max(b.x1, b.x0 + 1) ? x - std::max(b.x1, b.x0 + 1) : 0);
    if (d <= best_distance) best = b, best_distance = d;
    if (b.x0 > x + slack) break;
  }
  return best;
}

// A strip along the top of a measured op that ran more than 10 % faster or
// slower than predicted.
void TimelinePainter::paint_change(QPainter& painter, const QRectF& box, DurationChange change) const {
  if (change == DurationChange::kNone) return;
  painter.fillRect(QRectF(box.left(), box.top(), box.width(), std::min(4.0, box.height() / 3)),
                   change == DurationChange::kSlower ? slower_color() : faster_color());
}

int TimelinePainter::paint_track(QPainter& painter, const LayoutRow& row,
                                 const TimelineHighlight& highlight) const {
  const Track& track = doc_.model.tracks[static_cast<size_t>(row.index)];
  const QRectF band(0, row.top + 2, 0, row.height - 4);
  const bool dim = highlight.critical_path;
  int drawn = 0;
  for (const DrawnBox& b : track_boxes(row.index)) {
    const QColor color = dim ? dimmed(color_of(b.category)) : color_of(b.category);
    const QRectF r(b.x0, band.top(), std::max(1.0, b.x1 - b.x0), band.height());
    ++drawn;
    if (b.count > 1) {
      painter.fillRect(r, color.lighter(118));
      continue;
    }
    painter.fillRect(r, color);
    if (r.width() >= 4) {
      painter.setPen(color.darker(140));
      painter.drawRect(r.adjusted(0, 0, -1, -1));
    }
    const auto op = track.ops[static_cast<size_t>(b.first)];
    if (highlight.changes && static_cast<size_t>(op) < highlight.changes->size())
      paint_change(painter, r, (*highlight.changes)[static_cast<size_t>(op)]);
    if (!dim) paint_name(painter, r, op, color);
  }
  return drawn;
}

void TimelinePainter::paint_name(QPainter& painter, const QRectF& r, int32_t op, const QColor& fill) const {
  if (r.width() <= kNameAbove) return;
  const QRectF visible =
      r.intersected(QRectF(layout_.metrics().label_width, r.top(), axis_.width(), r.height()));
  painter.setPen(text_color_on(fill));
  painter.drawText(visible.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                   painter.fontMetrics().elidedText(
                       QString::fromUtf8(doc_.model.text(doc_.model.ops[static_cast<size_t>(op)].name)),
                       Qt::ElideRight, static_cast<int>(visible.width()) - 5));
}

std::optional<QRectF> TimelinePainter::op_rect(int32_t op) const {
  const TraceOp& o = doc_.model.ops[static_cast<size_t>(op)];
  const std::optional<LayoutRow> row = layout_.row_of_track(o.track);
  if (!row) return std::nullopt;
  const double x0 = x_of(o.start), x1 = std::max(x_of(o.end), x0 + 3);
  return QRectF(x0, row->top + 1, x1 - x0, row->height - 2);
}

void TimelinePainter::paint_selection(QPainter& painter, const Selection& selection) const {
  if (!selection.op) return;
  const std::optional<QRectF> self = op_rect(*selection.op);
  if (!self) return;
  const auto link = [&](int32_t other, const QColor& color, bool into_self) {
    const std::optional<QRectF> r = op_rect(other);
    if (!r) return;
    painter.setPen(QPen(color, 2));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(*r);
    if (into_self) {
      draw_arrow(painter, QPointF(r->right(), r->center().y()), QPointF(self->left(), self->center().y()),
                 color);
    } else {
      draw_arrow(painter, QPointF(self->right(), self->center().y()), QPointF(r->left(), r->center().y()),
                 color);
    }
  };
  for (const int32_t d : selection.waits_on) link(d, waits_on_color(), true);
  for (const int32_t c : selection.waited_by) link(c, waited_by_color(), false);
  painter.setPen(QPen(selection_color(), 2.5));
  painter.setBrush(Qt::NoBrush);
  painter.drawRect(self->adjusted(-1, -1, 1, 1));
}

// Over the dimmed timeline the path's ops are drawn again in full colour
// with a black outline, and black links join them. The ops run one after
// another, so their ends ascend: drawing starts
// at the first op that ends in view (and the one before, for the link into
// it) and stops past the view. Consecutive path ops on one track less than
// a pixel apart are drawn as one outline, so a long path costs no more than
// the pixels it covers.
void TimelinePainter::paint_critical_path(QPainter& painter) const {
  const std::vector<int32_t>& path = doc_.critical_path;
  const auto& ops = doc_.model.ops;
  auto it = std::ranges::lower_bound(path, axis_.visible_begin(), {},
                                     [&](int32_t i) { return ops[static_cast<size_t>(i)].end; });
  if (it != path.begin()) --it;
  std::optional<QRectF> run;
  int32_t run_track = -1;
  OpCategory run_category = OpCategory::kCompute;
  std::optional<QPointF> exit;
  const auto flush = [&] {
    if (!run) return;
    painter.fillRect(*run, color_of(run_category));
    painter.setPen(QPen(critical_color(), 1));
    if (exit) painter.drawLine(*exit, QPointF(run->left(), run->center().y()));
    painter.setPen(QPen(critical_color(), 1.5));
    painter.setBrush(Qt::NoBrush);
    painter.drawRect(*run);
    exit = QPointF(run->right(), run->center().y());
  };
  for (; it != path.end(); ++it) {
    const TraceOp& op = ops[static_cast<size_t>(*it)];
    const std::optional<QRectF> r = op_rect(*it);
    if (!r) continue;
    if (run && op.track == run_track && r->left() - run->right() < 1.0) {
      run = run->united(*r);
      continue;
    }
    flush();
    run = r;
    run_track = op.track;
    run_category = op.category;
    if (op.start > axis_.visible_end()) break;
  }
  flush();
}

}  // namespace stowage::gui
