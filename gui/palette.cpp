#include "gui/palette.h"

namespace stowage::gui {

QColor color_of(OpCategory category) {
  switch (category) {
    case OpCategory::kCompute:
      return QColor(0x00, 0x72, 0xb2);  // blue
    case OpCategory::kH2d:
      return QColor(0x56, 0xb4, 0xe9);  // sky blue
    case OpCategory::kD2h:
      return QColor(0xe6, 0x9f, 0x00);  // orange
    case OpCategory::kNvmeRead:
      return QColor(0x00, 0x9e, 0x73);  // bluish green
    case OpCategory::kNvmeWrite:
      return QColor(0xd5, 0x5e, 0x00);  // vermillion
    case OpCategory::kOptimizer:
      return QColor(0xf0, 0xe4, 0x42);  // yellow
    case OpCategory::kCommunication:
      return QColor(0xcc, 0x79, 0xa7);  // reddish purple
  }
  return Qt::gray;
}

QColor color_of(core::Tier tier) {
  switch (tier) {
    case core::Tier::kGpu:
      return QColor(0x33, 0x22, 0x88);  // indigo
    case core::Tier::kCpu:
      return QColor(0x99, 0x99, 0x33);  // olive
    case core::Tier::kNvme:
      return QColor(0x88, 0x22, 0x55);  // wine
  }
  return Qt::gray;
}

QColor background_of(core::Tier tier) {
  const QColor c = color_of(tier);
  const auto fade = [](int v) { return v + (255 - v) * 11 / 20; };
  return QColor(fade(c.red()), fade(c.green()), fade(c.blue()));
}

// 75 % of the way to white: still tells the categories apart, but recedes.
QColor dimmed(const QColor& color) {
  const auto fade = [](int c) { return c + (255 - c) * 3 / 4; };
  return QColor(fade(color.red()), fade(color.green()), fade(color.blue()));
}

// Relative luminance as in WCAG 2 (sRGB weights, without the gamma curve:
// close enough to pick black or white).
QColor text_color_on(const QColor& background) {
  const double y = 0.2126 * background.redF() + 0.7152 * background.greenF() + 0.0722 * background.blueF();
  return y > 0.55 ? QColor(0x11, 0x11, 0x11) : QColor(Qt::white);
}

QColor selection_color() {
  return QColor(0x11, 0x11, 0x11);
}
// Dark enough to stand out on every op colour, compute's blue included.
QColor waits_on_color() {
  return QColor(0x00, 0x2b, 0x7f);
}
QColor waited_by_color() {
  return QColor(0x9b, 0x00, 0x5f);
}
QColor critical_color() {
  return QColor(0x00, 0x00, 0x00);
}
QColor slower_color() {
  return QColor(0x5a, 0x00, 0x2c);  // dark wine
}
QColor faster_color() {
  return QColor(0x00, 0x40, 0x1a);  // dark green
}
QColor step_color() {
  return QColor(0x2a, 0x3d, 0x5c);
}
QColor steady_color() {
  return QColor(0xd2, 0xe3, 0xf3);
}
QColor measured_color() {
  return QColor(0x00, 0x00, 0x00);
}
QColor capacity_color() {
  return QColor(0x11, 0x11, 0x11);
}

}  // namespace stowage::gui
