#include "gui/palette.h"

namespace stowage::gui {

QColor color_of(OpCategory category) {
  switch (category) {
    case OpCategory::kCompute:
      return QColor(0x4e, 0x79, 0xa7);
    case OpCategory::kH2d:
      return QColor(0x59, 0xa1, 0x4f);
    case OpCategory::kD2h:
      return QColor(0xf2, 0x8e, 0x2b);
    case OpCategory::kNvmeRead:
      return QColor(0xb0, 0x7a, 0xa1);
    case OpCategory::kNvmeWrite:
      return QColor(0xe1, 0x57, 0x59);
    case OpCategory::kOptimizer:
      return QColor(0xed, 0xc9, 0x48);
    case OpCategory::kCommunication:
      return QColor(0x76, 0xb7, 0xb2);
  }
  return Qt::gray;
}

QColor color_of(core::Tier tier) {
  switch (tier) {
    case core::Tier::kGpu:
      return QColor(0x4e, 0x79, 0xa7);
    case core::Tier::kCpu:
      return QColor(0x59, 0xa1, 0x4f);
    case core::Tier::kNvme:
      return QColor(0xb0, 0x7a, 0xa1);
  }
  return Qt::gray;
}

QColor selection_color() {
  return QColor(0x11, 0x11, 0x11);
}
QColor waits_on_color() {
  return QColor(0x00, 0x9e, 0xff);
}
QColor waited_by_color() {
  return QColor(0xff, 0x2d, 0x95);
}
QColor critical_color() {
  return QColor(0xd6, 0x00, 0x00);
}
QColor slower_color() {
  return QColor(0x7a, 0x00, 0x3c);  // dark wine: apart from the critical path's red
}
QColor faster_color() {
  return QColor(0x00, 0x6d, 0x2c);  // dark green
}

}  // namespace stowage::gui
