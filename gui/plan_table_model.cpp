#include "gui/plan_table_model.h"

#include <array>

#include "gui/palette.h"

namespace stowage::gui {
namespace {

// The columns: the tensor classes a policy places, then the optimizer device.
constexpr std::array<core::TensorClass, 5> kColumns = {
    core::TensorClass::kParam16, core::TensorClass::kGrad16, core::TensorClass::kMaster32,
    core::TensorClass::kAdamM, core::TensorClass::kAdamV};
constexpr int kOptimizerColumn = static_cast<int>(kColumns.size());

core::Tier tier_of(const core::PartitionPolicy& p, core::TensorClass c) {
  switch (c) {
    case core::TensorClass::kParam16:
      return p.param16;
    case core::TensorClass::kGrad16:
      return p.gradients;
    default:
      return p.optimizer_states;  // master32, adam_m and adam_v rest together
  }
}

}  // namespace

void PlanTableModel::set_plan(std::optional<core::PlanFile> plan, std::vector<std::string> names) {
  beginResetModel();
  plan_ = std::move(plan);
  names_ = plan_ && names.size() == plan_->policy.partitions.size() ? std::move(names)
                                                                    : std::vector<std::string>{};
  endResetModel();
}

int PlanTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !plan_ ? 0 : static_cast<int>(plan_->policy.partitions.size());
}

int PlanTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kOptimizerColumn + 1;
}

QVariant PlanTableModel::data(const QModelIndex& index, int role) const {
  if (!plan_ || !index.isValid()) return {};
  const core::PartitionPolicy& p = plan_->policy.partitions[static_cast<size_t>(index.row())];
  if (index.column() == kOptimizerColumn) {
    if (role == Qt::DisplayRole)
      return p.optimizer == core::OptimizerDevice::kCpu ? QStringLiteral("cpu") : QStringLiteral("gpu");
    if (role == Qt::TextAlignmentRole) return int(Qt::AlignCenter);
    return {};
  }
  const core::Tier tier = tier_of(p, kColumns[static_cast<size_t>(index.column())]);
  switch (role) {
    case Qt::DisplayRole:
      return QString::fromStdString(std::string(core::to_string(tier)));
    case Qt::BackgroundRole:
      return background_of(tier);
    case Qt::TextAlignmentRole:
      return int(Qt::AlignCenter);
    default:
      return {};
  }
}

QVariant PlanTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  if (orientation == Qt::Vertical) {
    if (section >= 0 && static_cast<size_t>(section) < names_.size())
      return QString::fromStdString(names_[static_cast<size_t>(section)]);
    return QString::number(section);
  }
  if (section == kOptimizerColumn) return QStringLiteral("optimizer\non");
  return QString::fromStdString(std::string(core::to_string(kColumns[static_cast<size_t>(section)])));
}

}  // namespace stowage::gui
