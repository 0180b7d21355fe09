// The warning for a plan that pins nearly all of host RAM.
#include "planner/pinned_memory.h"

#include <gtest/gtest.h>

#include "tests/core/test_profiles.h"

namespace stowage::planner {
namespace {

using core::testing::bundled;
using core::testing::must;

constexpr int64_t kGiB = int64_t{1} << 30;

// The workstation has 128 GiB; the CPU tier's peak includes the 8 GiB host
// reserve, which is not pinned. 8 + 116 GiB pins 116/128 = 90.6 %: a
// warning. 8 + 115 GiB pins 89.8 %: none. Pageable buffers are not pinned.
TEST(PinnedMemory, WarnsAboveNinetyPercentOfHostRam) {
  const core::MachineSpec m = must(bundled().machine("workstation-24gb-1nvme"));
  const core::Policy pinned{.pinned_memory = true};
  const std::optional<std::string> w = pinned_memory_warning(core::Bytes((8 + 116) * kGiB), m, pinned);
  ASSERT_TRUE(w.has_value());
  EXPECT_NE(w->find("pins 124.6 GB of 137.4 GB of host RAM (91%, above 90%)"), std::string::npos) << *w;
  EXPECT_FALSE(pinned_memory_warning(core::Bytes((8 + 115) * kGiB), m, pinned).has_value());
  const core::Policy pageable{.pinned_memory = false};
  EXPECT_FALSE(pinned_memory_warning(core::Bytes((8 + 116) * kGiB), m, pageable).has_value());
}

// Past capacity the plan overflows, which is reported as such.
TEST(PinnedMemory, AnOverflowIsNotAWarning) {
  const core::MachineSpec m = must(bundled().machine("workstation-24gb-1nvme"));
  EXPECT_FALSE(pinned_memory_warning(core::Bytes(200 * kGiB), m, core::Policy{}).has_value());
}

}  // namespace
}  // namespace stowage::planner
