// The File > Recent list: the last files opened, newest first, kept in
// QSettings between runs.
#pragma once

#include <QObject>
#include <QStringList>

namespace stowage::gui {

class RecentFiles : public QObject {
  Q_OBJECT
 public:
  static constexpr int kMax = 8;
  explicit RecentFiles(QObject* parent = nullptr);
  void add(const QString& path);
  void clear();
  [[nodiscard]] const QStringList& files() const { return files_; }

 signals:
  void changed();

 private:
  void save() const;
  QStringList files_;
};

}  // namespace stowage::gui
