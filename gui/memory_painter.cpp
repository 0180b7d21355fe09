#include "gui/memory_painter.h"

#include <QFontMetricsF>
#include <algorithm>

#include "gui/memory_series.h"
#include "gui/palette.h"
#include "gui/ruler_ticks.h"

namespace stowage::gui {
namespace {

constexpr double kHeadroom = 1.05;  // the scale's top, at least, relative to max(peak, capacity)
// A capacity more than this many times the peak would flatten the curve:
// the scale then follows the peak and the label gives the capacity.
constexpr double kCapacityOnScale = 1.6;
constexpr double kAxisWidth = 50;    // the tick labels, right of the row's label
constexpr double kTickSpacing = 15;  // pixels between y ticks, at least (a line of text)
constexpr double kTimeTickSpacing = 110;

QString bytes_text(core::Bytes b) {
  return QString::fromStdString(core::format_bytes(b, core::Prefix::kDecimal, 3));
}

QString tier_name(core::Tier tier) {
  return QString::fromStdString(std::string(core::to_string(tier)));
}

}  // namespace

MemoryPainter::MemoryPainter(const TraceModel& model, const TimeAxis& axis, double label_width,
                             const std::array<std::optional<core::Bytes>, 3>& capacity,
                             const TraceModel* measured)
    : model_(model), measured_(measured), axis_(axis), label_width_(label_width), capacity_(capacity) {
  // A tier gets a row when either trace has its memory: a prediction
  // re-simulated from a measured trace has none, and the measured run's
  // line is drawn alone.
  for (const core::Tier tier : core::kAllTiers) {
    const auto t = static_cast<size_t>(tier);
    if (!model.memory[t].empty() || (measured != nullptr && !measured->memory[t].empty())) tiers_.push_back(tier);
  }
}

int MemoryPainter::ranks() const {
  return std::max({1, model_.info.ranks, model_.rank_count()});
}

QString MemoryPainter::scope(core::Tier tier) const {
  if (tier == core::Tier::kGpu) return QStringLiteral("per GPU");
  return ranks() > 1 ? QStringLiteral("per machine, %1 ranks").arg(ranks()) : QStringLiteral("per machine");
}

double MemoryPainter::preferred_height() const {
  double h = 0;
  for (const core::Tier t : tiers_)
    h += states_[static_cast<size_t>(t)] == RowState::kCollapsed ? kCollapsedRowHeight : kDefaultRowHeight;
  return h;
}

std::vector<MemoryRow> MemoryPainter::rows(int width, int height) const {
  std::vector<MemoryRow> out;
  if (tiers_.empty()) return out;
  int expanded = 0;
  for (const core::Tier t : tiers_)
    expanded += states_[static_cast<size_t>(t)] == RowState::kExpanded ? 1 : 0;
  const double collapsed_height =
      kCollapsedRowHeight * static_cast<double>(static_cast<int>(tiers_.size()) - expanded);
  const double expanded_height =
      expanded > 0 ? std::max(kCollapsedRowHeight, (height - collapsed_height) / expanded) : 0;
  double top = 0;
  for (size_t i = 0; i < tiers_.size(); ++i) {
    MemoryRow r{.tier = tiers_[i], .state = states_[static_cast<size_t>(tiers_[i])]};
    const auto& series = model_.memory[static_cast<size_t>(r.tier)];
    const double row_height = r.state == RowState::kCollapsed ? kCollapsedRowHeight : expanded_height;
    r.row = QRectF(0, top, width, row_height);
    top += row_height;
    r.plot = r.state == RowState::kCollapsed
                 ? QRectF(label_width_, r.row.top() + 3, width - label_width_, row_height - 6)
                 : QRectF(label_width_, r.row.top() + 8, width - label_width_, row_height - 14);
    r.per_rank_factor = core::ranks_in_scope(r.tier, ranks());
    r.peak = peak_of(series) * r.per_rank_factor;
    r.has_samples = !series.empty();
    r.measured_peak = measured_ ? peak_of(measured_->memory[static_cast<size_t>(r.tier)]) * r.per_rank_factor
                                : core::Bytes();
    const core::Bytes measured_peak = r.measured_peak;
    r.capacity = capacity_[static_cast<size_t>(r.tier)];
    if (r.capacity) r.capacity = *r.capacity * r.per_rank_factor;
    r.capacity_on_scale = r.capacity && r.capacity->as_double() <= kCapacityOnScale * r.peak.as_double();
    const double highest = std::max({r.peak.as_double(), measured_peak.as_double(),
                                     r.capacity_on_scale ? r.capacity->as_double() : 0}) *
                           kHeadroom;
    // As many ticks as keep their labels kTickSpacing apart, at least 0 and one more.
    const core::Bytes scale_top(static_cast<int64_t>(std::max(1.0, highest)));
    for (int max_ticks = 6; max_ticks >= 2; --max_ticks) {
      r.scale = byte_scale(scale_top, max_ticks);
      if (r.plot.height() * (r.scale.step / r.scale.top) >= kTickSpacing) break;
    }
    out.push_back(std::move(r));
  }
  return out;
}

void MemoryPainter::paint(QPainter& painter, int width, int height) const {
  painter.fillRect(QRectF(0, 0, width, height), Qt::white);
  if (tiers_.empty()) {
    painter.setPen(Qt::darkGray);
    painter.drawText(QRectF(0, 0, width, height), Qt::AlignCenter,
                     QStringLiteral("no memory samples in this timeline"));
    return;
  }
  for (const MemoryRow& row : rows(width, height)) paint_row(painter, row);
  painter.setPen(QColor(0xbb, 0xbb, 0xbb));
  painter.drawLine(QPointF(label_width_ - 0.5, 0), QPointF(label_width_ - 0.5, height));
}

void MemoryPainter::paint_row(QPainter& painter, const MemoryRow& row) const {
  const auto& series = model_.memory[static_cast<size_t>(row.tier)];
  painter.fillRect(row.row, QColor(0xfa, 0xfa, 0xfa));
  painter.fillRect(row.plot, Qt::white);
  painter.setPen(QColor(0xe8, 0xe8, 0xe8));
  for (const Tick& tick : ticks(axis_, kTimeTickSpacing))
    painter.drawLine(QPointF(label_width_ + tick.pixel, row.plot.top()),
                     QPointF(label_width_ + tick.pixel, row.plot.bottom()));
  if (row.state == RowState::kExpanded) paint_axis(painter, row);

  const QColor fill = color_of(row.tier);
  const auto columns = memory_columns(series, axis_, static_cast<int>(row.plot.width()), model_.end_time());
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!columns[c]) continue;
    const double x = row.plot.left() + static_cast<double>(c);
    const core::Bytes held = *columns[c] * row.per_rank_factor;
    const double y = row.y_of(held);
    painter.fillRect(QRectF(x, y, 1, row.plot.bottom() - y), fill);
    if (row.capacity && row.capacity_on_scale && held > *row.capacity)
      painter.fillRect(QRectF(x, y, 1, row.y_of(*row.capacity) - y), QColor(0xd6, 0x00, 0x00));
  }
  paint_measured(painter, row);
  paint_capacity(painter, row);
  paint_label(painter, row);
  painter.setPen(QColor(0xcc, 0xcc, 0xcc));
  painter.drawLine(QPointF(0, row.row.bottom() - 0.5), QPointF(row.row.width(), row.row.bottom() - 0.5));
}

// The measured run's memory as a line: the most held in each pixel column,
// joined by vertical steps.
void MemoryPainter::paint_measured(QPainter& painter, const MemoryRow& row) const {
  if (!measured_) return;
  const auto& series = measured_->memory[static_cast<size_t>(row.tier)];
  const auto columns =
      memory_columns(series, axis_, static_cast<int>(row.plot.width()), measured_->end_time());
  painter.setPen(QPen(measured_color(), 1.5));
  std::optional<QPointF> last;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (!columns[c]) {
      last.reset();
      continue;
    }
    const QPointF at(row.plot.left() + static_cast<double>(c), row.y_of(*columns[c] * row.per_rank_factor));
    if (last) painter.drawLine(*last, QPointF(at.x(), last->y()));
    if (last) painter.drawLine(QPointF(at.x(), last->y()), at);
    last = at;
  }
}

// Tick labels right-aligned against the plot, with a light grid line each.
void MemoryPainter::paint_axis(QPainter& painter, const MemoryRow& row) const {
  const QFontMetricsF metrics(painter.font());
  const double text_height = metrics.height();
  for (const ByteTick& tick : row.scale.ticks) {
    const double y = row.y_of(tick.value);
    painter.setPen(QColor(0xe8, 0xe8, 0xe8));
    if (tick.value.count() > 0) painter.drawLine(QPointF(row.plot.left(), y), QPointF(row.plot.right(), y));
    painter.setPen(QColor(0x88, 0x88, 0x88));
    painter.drawLine(QPointF(row.plot.left() - 4, y), QPointF(row.plot.left(), y));
    painter.setPen(QColor(0x44, 0x44, 0x44));
    painter.drawText(QRectF(label_width_ - kAxisWidth, y - text_height / 2, kAxisWidth - 6, text_height),
                     Qt::AlignRight | Qt::AlignVCenter, QString::fromStdString(tick.label));
  }
}

void MemoryPainter::paint_capacity(QPainter& painter, const MemoryRow& row) const {
  if (!row.capacity || !row.capacity_on_scale) return;
  const auto& series = model_.memory[static_cast<size_t>(row.tier)];
  const double y = row.y_of(*row.capacity);
  painter.setPen(QPen(capacity_color(), 1.2, Qt::DashLine));
  painter.drawLine(QPointF(row.plot.left(), y), QPointF(row.plot.right(), y));
  for (const TimeSpan& s : overflows(series, *row.capacity / row.per_rank_factor, model_.end_time())) {
    const double x0 = label_width_ + axis_.to_pixel(s.begin),
                 x1 = std::max(x0 + 2, label_width_ + axis_.to_pixel(s.end));
    const double left = std::max(x0, row.plot.left()), right = std::min(x1, row.plot.right());
    if (right > left) painter.fillRect(QRectF(left, row.row.top(), right - left, 3), Qt::red);
  }
  if (row.state == RowState::kCollapsed) return;  // no room for the label
  const QString text = QStringLiteral("capacity %1").arg(bytes_text(*row.capacity));
  const QFontMetricsF metrics(painter.font());
  // Above the line, or under it when the line is near the row's top.
  QRectF box(row.plot.right() - metrics.horizontalAdvance(text) - 10, y - metrics.height() - 1,
             metrics.horizontalAdvance(text) + 6, metrics.height());
  if (box.top() < row.row.top() + 1) box.moveTop(y + 2);
  painter.fillRect(box, QColor(255, 255, 255, 220));
  painter.setPen(capacity_color());
  painter.drawText(box, Qt::AlignCenter, text);
}

// "gpu memory", "per GPU", "peak 21.3 GB", and the capacity when its line is
// not drawn: one line each, as many as the row has room for.
QStringList MemoryPainter::label_lines(const MemoryRow& row) const {
  const bool collapsed = row.state == RowState::kCollapsed;
  // A trace without memory counters (compare's re-simulated prediction: a
  // trace carries no memory effects) says so instead of "peak 0 B".
  const QString peak = row.has_samples ? QStringLiteral("peak %1").arg(bytes_text(row.peak))
                                       : QStringLiteral("no memory in trace");
  QStringList lines{
      QStringLiteral("%1 %2 memory")
          .arg(collapsed ? QStringLiteral("\u25b8") : QStringLiteral("\u25be"), tier_name(row.tier)),
      scope(row.tier), peak};
  if (collapsed) lines = {lines.front() + QStringLiteral(", ") + peak};
  if (row.capacity && row.peak > *row.capacity) lines.back() += QStringLiteral(" OVER");
  // Comparing: the fill and the peak above are the prediction's; the line
  // is the measured run, and its peak follows.
  if (measured_) lines << QStringLiteral("line: measured") << QStringLiteral("its peak %1").arg(bytes_text(row.measured_peak));
  if (row.capacity && !row.capacity_on_scale)
    lines << QStringLiteral("of %1, off scale").arg(bytes_text(*row.capacity));
  return lines;
}

void MemoryPainter::paint_label(QPainter& painter, const MemoryRow& row) const {
  const bool collapsed = row.state == RowState::kCollapsed;
  QStringList lines = label_lines(row);
  const QFontMetricsF metrics(painter.font());
  const double line = metrics.height(), width = label_width_ - (collapsed ? 12 : kAxisWidth + 8);
  const auto fit = static_cast<qsizetype>(std::max(1.0, (row.row.height() - 4) / line));
  if (lines.size() > fit) lines.resize(fit);
  double y = row.row.top() + (row.row.height() - line * static_cast<double>(lines.size())) / 2;
  for (qsizetype i = 0; i < lines.size(); ++i, y += line) {
    QFont font = painter.font();
    font.setBold(i == 0);
    painter.setFont(font);
    painter.setPen(i == 0 ? QColor(0x22, 0x22, 0x22) : QColor(0x55, 0x55, 0x55));
    painter.drawText(QRectF(6, y, width, line), Qt::AlignLeft | Qt::AlignVCenter,
                     QFontMetricsF(font).elidedText(lines[i], Qt::ElideRight, width));
  }
  QFont plain = painter.font();
  plain.setBold(false);
  painter.setFont(plain);
}

namespace {

// "\nlargest: master32 1.26 GB, adam_m 1.26 GB, adam_v 1.26 GB": the
// classes holding the most at `t`, at most kTopClasses; "" when the trace
// has no breakdown for the tier.
QString top_classes(const ClassMemory& classes, SimTime t, int64_t factor) {
  constexpr size_t kTopClasses = 3;
  const std::vector<ClassMemory::Share> shares = classes.at(t);
  if (shares.empty()) return {};
  QStringList parts;
  for (size_t i = 0; i < shares.size() && i < kTopClasses; ++i)
    parts << QStringLiteral("%1 %2").arg(QString::fromUtf8(shares[i].name.data(), static_cast<qsizetype>(shares[i].name.size())),
                                         bytes_text(shares[i].bytes * factor));
  return QStringLiteral("\nlargest: ") + parts.join(QStringLiteral(", "));
}

}  // namespace

QString MemoryPainter::readout(QPointF at, int width, int height) const {
  for (const MemoryRow& row : rows(width, height)) {
    if (!row.row.contains(at) || at.x() < row.plot.left()) continue;
    const auto& series = model_.memory[static_cast<size_t>(row.tier)];
    const double column = std::floor(at.x() - row.plot.left());
    const SimTime t = axis_.to_time(column);
    std::optional<core::Bytes> now = bytes_at(series, t);
    if (!now) return {};
    now = *now * row.per_rank_factor;
    QString text = QStringLiteral("%1 memory, %2\nat %3: %4 in use")
                       .arg(tier_name(row.tier), scope(row.tier), QString::fromStdString(format_time(t)),
                            bytes_text(*now));
    if (row.capacity)
      text += QStringLiteral(" (%1 % of %2)")
                  .arg(std::lround(100 * (*now / *row.capacity)))
                  .arg(bytes_text(*row.capacity));
    text += top_classes(model_.class_memory[static_cast<size_t>(row.tier)], t, row.per_rank_factor);
    if (measured_) {
      if (const auto m = bytes_at(measured_->memory[static_cast<size_t>(row.tier)], t))
        text += QStringLiteral("\nmeasured: %1 in use").arg(bytes_text(*m * row.per_rank_factor));
    }
    const auto most = memory_columns(series, axis_, static_cast<int>(column) + 1, model_.end_time());
    if (!most.empty() && most.back() && *most.back() * row.per_rank_factor != *now)
      text +=
          QStringLiteral("\nmost within this pixel: %1").arg(bytes_text(*most.back() * row.per_rank_factor));
    return text;
  }
  return {};
}

}  // namespace stowage::gui
