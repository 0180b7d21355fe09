// The plan as a table: one row per partition, one column per tensor class
// (param16, grad16, master32, adam_m, adam_v) showing the tier it rests on,
// coloured by tier, and a column for where the optimizer runs. Rows are
// named by partition ("layers.3") when the names are known.
#pragma once

#include <QAbstractTableModel>
#include <optional>
#include <string>
#include <vector>

#include "core/plan_file.h"

namespace stowage::gui {

class PlanTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  using QAbstractTableModel::QAbstractTableModel;
  // `names`: one per partition (partition_names.h), or empty to number the rows.
  void set_plan(std::optional<core::PlanFile> plan, std::vector<std::string> names = {});
  [[nodiscard]] const std::optional<core::PlanFile>& plan() const { return plan_; }

  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  std::optional<core::PlanFile> plan_;
  std::vector<std::string> names_;
};

}  // namespace stowage::gui
