#include "gui/view_export.h"

#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>

namespace stowage::gui {

QString export_png(QWidget& widget, const QString& path) {
  const QPixmap pixmap = widget.grab();
  if (pixmap.isNull()) return QStringLiteral("nothing to export");
  if (!pixmap.save(path, "PNG")) return QStringLiteral("cannot write %1").arg(path);
  return {};
}

QString export_svg(QWidget& widget, const QString& path, const QString& title) {
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(widget.size());
  svg.setViewBox(QRect(QPoint(0, 0), widget.size()));
  svg.setTitle(title);
  svg.setDescription(QStringLiteral("Exported by stowage-gui"));
  QPainter painter;
  if (!painter.begin(&svg)) return QStringLiteral("cannot write %1").arg(path);
  widget.render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
  painter.end();
  return {};
}

}  // namespace stowage::gui
