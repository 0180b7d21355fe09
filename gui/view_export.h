// Exports what a widget shows to an image file: PNG (or any format Qt
// writes) at the widget's pixel size (times the device pixel ratio), or SVG
// as vector drawing. Every file is written by core/output_file.h's rules,
// as the CLI's outputs are (issue 12): encoded in memory, written to a
// temporary file in the target's folder and renamed over the target only
// when that is a regular file or absent; device nodes, FIFOs and folders
// are refused and left as they were, a symlink's target is replaced, an
// existing file keeps its permission bits.
#pragma once

#include <QByteArray>
#include <QString>
#include <QWidget>

namespace stowage::gui {

// Each returns an empty string on success, else what went wrong, starting
// with the file's name ("shot.png: ... (expected ...)").
[[nodiscard]] QString export_png(QWidget& widget, const QString& path);
[[nodiscard]] QString export_svg(QWidget& widget, const QString& path, const QString& title);
// `format` as QImageWriter names it ("png", "jpg").
[[nodiscard]] QString export_image(QWidget& widget, const QString& path, const QByteArray& format);

// Whether `path` could be written, checked before long work (loading, a
// planner run) so that a bad path costs nothing; creates nothing.
[[nodiscard]] QString check_export_path(const QString& path);

}  // namespace stowage::gui
