// Error dialogs summarise: a file with 30 mistakes gives one line per kind
// of mistake with the lines it is on, not 30 lines.
#include "gui/diagnostics_summary.h"

#include <gtest/gtest.h>

namespace stowage::gui {
namespace {

core::Diagnostic at(int line, std::string what, std::string expected = {}) {
  return {.where = {.file = "/tmp/plans/plan.yaml", .line = line, .column = 3},
          .what = std::move(what),
          .expected = std::move(expected)};
}

TEST(DiagnosticsSummary, ThirtyProblemsGroupedByKind) {
  // 28 unknown tiers on lines 12, 14, ..., 66 and two unknown keys.
  core::Diagnostics ds;
  for (int i = 0; i < 28; ++i) ds.push_back(at(12 + 2 * i, "unknown tier 'cpuu'", "did you mean 'cpu'"));
  ds.push_back(at(3, "unknown key 'memroy'", "did you mean 'memory'"));
  ds.push_back(at(5, "unknown key 'memroy'", "did you mean 'memory'"));
  const std::string text = summarize(ds);
  EXPECT_EQ(text,
            "30 problems in plan.yaml:\n"
            "- unknown tier 'cpuu' (did you mean 'cpu') at lines 12, 14, 16, 18, 20, 22 and 22 more\n"
            "- unknown key 'memroy' (did you mean 'memory') at lines 3, 5");
}

TEST(DiagnosticsSummary, AFewProblemsAreListedAsTheyAre) {
  const core::Diagnostics ds{at(2, "bad"), at(4, "worse")};
  EXPECT_EQ(summarize(ds), core::to_string(ds));
}

TEST(DiagnosticsSummary, ManyKindsSayHowManyAreLeftOut) {
  core::Diagnostics ds;
  for (int i = 0; i < 9; ++i) ds.push_back(at(i + 1, "problem " + std::to_string(i)));
  const std::string text = summarize(ds, {.kinds = 3});
  EXPECT_NE(
      text.find("- problem 0 at line 1\n- problem 1 at line 2\n- problem 2 at line 3\n- and 6 other kinds"),
      std::string::npos)
      << text;
}

}  // namespace
}  // namespace stowage::gui
