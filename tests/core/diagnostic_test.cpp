#include "core/diagnostic.h"

#include <gtest/gtest.h>

namespace stowage::core {
namespace {

TEST(Diagnostic, PrintsFileLineColumnWhatAndExpected) {
  const Diagnostic d{{"gpus/x.yaml", 3, 9}, "memory: unknown unit 'Gb'", "units B, kB, ..."};
  EXPECT_EQ(d.to_string(), "gpus/x.yaml:3:9: memory: unknown unit 'Gb' (units B, kB, ...)");
}

TEST(Diagnostic, OmitsUnknownLineAndEmptyExpectation) {
  EXPECT_EQ((Diagnostic{{"a.yaml", 0, 0}, "cannot read file", ""}).to_string(), "a.yaml: cannot read file");
  EXPECT_EQ((Diagnostic{{"", 0, 0}, "unknown gpu profile 'x'", ""}).to_string(), "unknown gpu profile 'x'");
}

TEST(Diagnostic, JoinsSeveralWithNewlines) {
  const Diagnostics all{{{"f", 1, 1}, "a", ""}, {{"f", 2, 1}, "b", ""}};
  EXPECT_EQ(to_string(all), "f:1:1: a\nf:2:1: b");
}

}  // namespace
}  // namespace stowage::core
