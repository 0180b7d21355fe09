// The write rate assumed for a drive whose profile gives no post-cache rate.
#include "planner/sustained_write.h"

#include <gtest/gtest.h>

#include "tests/core/test_profiles.h"

namespace stowage::planner {
namespace {

using core::testing::bundled;
using core::testing::must;

// The workstation's Samsung 990 PRO 2 TB gives only its 6900 MB/s burst
// rate: a quarter of it, 1725 MB/s, is assumed, and the warning says so.
TEST(SustainedWrite, UnknownRateIsAQuarterOfTheBurstAndSaysSo) {
  core::MachineSpec m = must(bundled().machine("workstation-24gb-1nvme"));
  ASSERT_FALSE(m.nvme.sustained_write.has_value());
  const std::optional<std::string> warning = assume_sustained_write(m);
  ASSERT_TRUE(m.nvme.sustained_write.has_value());
  EXPECT_DOUBLE_EQ(m.nvme.sustained_write->value(), 1725e6);
  ASSERT_TRUE(warning.has_value());
  EXPECT_NE(warning->find("samsung-990-pro-2tb"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("assumed 1.725 GB/s, 25% of its 6.9 GB/s burst rate"), std::string::npos)
      << *warning;
  // Once filled in, nothing more is assumed.
  EXPECT_FALSE(assume_sustained_write(m).has_value());
}

// A drive that gives its post-cache rate (980 PRO: 1750 MB/s) keeps it, and
// a machine without drives assumes nothing.
TEST(SustainedWrite, KnownRateOrNoDrivesAssumeNothing) {
  core::MachineSpec m = must(bundled().machine("workstation-24gb-1nvme"));
  m.nvme = must(bundled().nvme("samsung-980-pro-2tb"));
  EXPECT_FALSE(assume_sustained_write(m).has_value());
  EXPECT_DOUBLE_EQ(m.nvme.sustained_write->value(), 1750e6);
  core::MachineSpec none = must(bundled().machine("workstation-24gb-1nvme"));
  none.nvme_count = 0;
  EXPECT_FALSE(assume_sustained_write(none).has_value());
  EXPECT_FALSE(none.nvme.sustained_write.has_value());
}

}  // namespace
}  // namespace stowage::planner
