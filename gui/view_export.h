// Exports what a widget shows to an image file: PNG at the widget's pixel
// size (times the device pixel ratio) or SVG as vector drawing.
#pragma once

#include <QString>
#include <QWidget>

namespace stowage::gui {

// Return an empty string on success, else what went wrong.
[[nodiscard]] QString export_png(QWidget& widget, const QString& path);
[[nodiscard]] QString export_svg(QWidget& widget, const QString& path, const QString& title);

}  // namespace stowage::gui
