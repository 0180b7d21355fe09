// The palette is colour-blind safe where it matters most (issue 18 item 3):
// a tier's colour never reads as an op's, even to a viewer without red or
// green cones. Colours are simulated for protanopia, deuteranopia and
// tritanopia with the matrices of Machado, Oliveira and Fernandes (2009,
// "A physiologically-based model for simulation of color vision
// deficiency", severity 1.0, on linear sRGB), and compared as CIE76 ΔE in
// L*a*b* (D65). ΔE 10 is a difference anyone sees at a glance; the palette
// as chosen keeps 13.5 (vermillion NVMe writes against the olive CPU tier,
// under protanopia).
#include "gui/palette.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace stowage::gui {
namespace {

using Matrix = std::array<std::array<double, 3>, 3>;
using Vec = std::array<double, 3>;

constexpr Matrix kNormal = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
constexpr Matrix kProtanopia = {{{0.152286, 1.052583, -0.204868},
                                 {0.114503, 0.786281, 0.099216},
                                 {-0.003882, -0.048116, 1.051998}}};
constexpr Matrix kDeuteranopia = {{{0.367322, 0.860646, -0.227968},
                                   {0.280085, 0.672501, 0.047413},
                                   {-0.011820, 0.042940, 0.968881}}};
constexpr Matrix kTritanopia = {{{1.255528, -0.076749, -0.178779},
                                 {-0.078411, 0.930809, 0.147602},
                                 {0.004733, 0.691367, 0.303900}}};

double linear(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }

// L*a*b* of `color` as a viewer with `vision` sees it.
Vec lab_seen(const QColor& color, const Matrix& vision) {
  const Vec rgb = {linear(color.redF()), linear(color.greenF()), linear(color.blueF())};
  Vec seen{};
  for (size_t i = 0; i < 3; ++i) {
    for (size_t j = 0; j < 3; ++j) seen[i] += vision[i][j] * rgb[j];
    seen[i] = std::clamp(seen[i], 0.0, 1.0);
  }
  const double x = (0.4124 * seen[0] + 0.3576 * seen[1] + 0.1805 * seen[2]) / 0.95047;
  const double y = 0.2126 * seen[0] + 0.7152 * seen[1] + 0.0722 * seen[2];
  const double z = (0.0193 * seen[0] + 0.1192 * seen[1] + 0.9505 * seen[2]) / 1.08883;
  const auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
  return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

double delta_e(const Vec& a, const Vec& b) {
  return std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

TEST(Palette, TierColoursStayApartFromOpColoursForColourBlindViewers) {
  constexpr double kAtAGlance = 10;
  const std::array<std::pair<const char*, Matrix>, 4> visions = {
      {{"normal", kNormal}, {"protanopia", kProtanopia}, {"deuteranopia", kDeuteranopia}, {"tritanopia", kTritanopia}}};
  for (const auto& [name, vision] : visions) {
    for (int c = 0; c < kOpCategoryCount; ++c) {
      for (const core::Tier t : core::kAllTiers) {
        const double d = delta_e(lab_seen(color_of(static_cast<OpCategory>(c)), vision), lab_seen(color_of(t), vision));
        EXPECT_GT(d, kAtAGlance) << name << ": " << to_string(static_cast<OpCategory>(c)) << " against tier "
                                 << core::to_string(t);
      }
    }
  }
}

TEST(Palette, AColourNextToATierColourFailsTheCheck) {
  // The check can fail: the GPU tier's indigo nudged by a few levels is
  // under ΔE 10 from itself for every viewer.
  const QColor near(0x36, 0x25, 0x8b);
  for (const Matrix& vision : {kNormal, kProtanopia, kDeuteranopia, kTritanopia})
    EXPECT_LT(delta_e(lab_seen(near, vision), lab_seen(color_of(core::Tier::kGpu), vision)), 10);
}

}  // namespace
}  // namespace stowage::gui
