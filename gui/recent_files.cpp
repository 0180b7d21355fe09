#include "gui/recent_files.h"

#include <QFileInfo>
#include <QSettings>

namespace stowage::gui {
namespace {
constexpr const char* kKey = "recent_files";
}

RecentFiles::RecentFiles(QObject* parent) : QObject(parent) {
  files_ = QSettings().value(kKey).toStringList();
  while (files_.size() > kMax) files_.removeLast();
}

void RecentFiles::add(const QString& path) {
  const QString absolute = QFileInfo(path).absoluteFilePath();
  files_.removeAll(absolute);
  files_.prepend(absolute);
  while (files_.size() > kMax) files_.removeLast();
  save();
  emit changed();
}

void RecentFiles::clear() {
  files_.clear();
  save();
  emit changed();
}

void RecentFiles::save() const {
  QSettings().setValue(kKey, files_);
}

}  // namespace stowage::gui
