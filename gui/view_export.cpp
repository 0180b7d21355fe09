#include "gui/view_export.h"

#include <QBuffer>
#include <QPainter>
#include <QPixmap>
#include <QSvgGenerator>
#include <string>

#include "core/output_file.h"

namespace stowage::gui {
namespace {

QString problem_text(const core::Diagnostics& diagnostics) {
  return QString::fromStdString(core::to_string(diagnostics));
}

// Writes the encoded bytes through core/output_file.h.
QString write_bytes(const QString& path, const QByteArray& bytes) {
  return problem_text(core::write_file_atomically(
      path.toStdString(), std::string(bytes.constData(), static_cast<size_t>(bytes.size()))));
}

QString cannot_encode(const QString& path, const char* what) {
  return QStringLiteral("%1: %2 (nothing was written)").arg(path, QString::fromLatin1(what));
}

}  // namespace

QString check_export_path(const QString& path) {
  const auto target = core::check_output_path(path.toStdString());
  return target ? QString() : problem_text(target.error());
}

QString export_image(QWidget& widget, const QString& path, const QByteArray& format) {
  // Checked first: a refused path costs no rendering.
  if (QString problem = check_export_path(path); !problem.isEmpty()) return problem;
  const QPixmap pixmap = widget.grab();
  if (pixmap.isNull()) return cannot_encode(path, "nothing to export");
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!pixmap.save(&buffer, format.constData())) return cannot_encode(path, "cannot encode the image");
  buffer.close();
  return write_bytes(path, bytes);
}

QString export_png(QWidget& widget, const QString& path) { return export_image(widget, path, "png"); }

QString export_svg(QWidget& widget, const QString& path, const QString& title) {
  if (QString problem = check_export_path(path); !problem.isEmpty()) return problem;
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  {
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(widget.size());
    svg.setViewBox(QRect(QPoint(0, 0), widget.size()));
    svg.setTitle(title);
    svg.setDescription(QStringLiteral("Exported by stowage-gui"));
    QPainter painter;
    if (!painter.begin(&svg)) return cannot_encode(path, "cannot start the SVG drawing");
    widget.render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
    painter.end();
  }
  buffer.close();
  return write_bytes(path, bytes);
}

}  // namespace stowage::gui
