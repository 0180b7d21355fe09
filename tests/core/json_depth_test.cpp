// check_json_depth: the cap on nesting checked before any parse (issue 12:
// a manifest nested 100,000 deep overflowed the stack).
#include "core/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace stowage::core {
namespace {

TEST(JsonDepth, ShallowTextPasses) {
  EXPECT_EQ(check_json_depth(R"({"a": [1, {"b": [2]}]})", "m.json", 4), std::nullopt);  // four levels
}

// Levels 1 and 2 open on line 1; on line 2 two spaces, level 3 at column 3
// and level 4, one too many, at column 4.
TEST(JsonDepth, TheFirstBracketTooDeepIsLocated) {
  const auto d = check_json_depth("[[\n  [{}]]]", "m.json", 3);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->where.line, 2);
  EXPECT_EQ(d->where.column, 4);
  EXPECT_NE(d->what.find("deeper than 3"), std::string::npos);
}

TEST(JsonDepth, BracketsInsideStringsDoNotCount) {
  EXPECT_EQ(check_json_depth(R"(["[[[[", "\"{{{{"])", "m.json", 1), std::nullopt);
}

TEST(JsonDepth, AHundredThousandLevelsAreRefusedWithoutRecursion) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const auto d = check_json_depth(deep, "m.json");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->where.column, kMaxJsonDepth + 1);
}

}  // namespace
}  // namespace stowage::core
