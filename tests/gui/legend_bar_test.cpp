// The legend wraps instead of cutting keys off: at 1280 px with the
// comparison keys every key lies inside the bar, which grows a line.
#include "gui/legend_bar.h"

#include <gtest/gtest.h>

namespace stowage::gui {
namespace {

TEST(LegendBar, KeysWrapIntoTheBarAtNarrowWidths) {
  LegendBar legend;
  legend.set_comparing(true);
  for (const int width : {1600, 1280, 900, 500}) {
    legend.resize(width, legend.heightForWidth(width));
    const std::vector<LegendKey> keys = legend.layout_keys(width);
    ASSERT_EQ(keys.size(), 12u);
    for (const LegendKey& k : keys) {
      EXPECT_GE(k.rect.left(), 0) << k.text.toStdString() << " at " << width;
      EXPECT_LE(k.rect.right(), width) << k.text.toStdString() << " at " << width;
      EXPECT_LE(k.rect.bottom(), legend.heightForWidth(width)) << k.text.toStdString() << " at " << width;
    }
  }
  EXPECT_GT(legend.heightForWidth(500), legend.heightForWidth(1600));
  EXPECT_EQ(legend.heightForWidth(5000), LegendBar::kLineHeight);
}

}  // namespace
}  // namespace stowage::gui
