// memory_exhausted: one wording for a tier that cannot hold an allocation,
// CpuBackend's and the CUDA device arena's.
#include "executor/memory_exhausted.h"

#include <gtest/gtest.h>

#include "executor/cpu_backend.h"

namespace stowage::executor {
namespace {

TEST(MemoryExhausted, NamesWhatBytesUseAndCap) {
  const core::Diagnostic d = memory_exhausted(
      core::Tier::kGpu, "param16 layers.3",
      {.bytes = 4'000'000, .in_use = 7'998'000'000, .capacity = 8'000'000'000});  // 2 MB left
  EXPECT_EQ(d.what, "gpu memory exhausted: 'param16 layers.3' needs 4 MB with 7.998 GB of 8 GB in use");
  EXPECT_EQ(d.expected, "a plan that offloads more, or a larger --device-memory");
}

TEST(MemoryExhausted, SaysWhenTheBytesAreFreeButNotInOnePiece) {
  // 5 MB of 8 free in total, but the longest free run is 2 MB.
  const core::Diagnostic d = memory_exhausted(
      core::Tier::kGpu, "grad16 layers.0",
      {.bytes = 4'000'000, .in_use = 3'000'000, .capacity = 8'000'000, .largest_free = 2'000'000});
  EXPECT_EQ(d.what,
            "gpu memory exhausted: 'grad16 layers.0' needs 4 MB with 3 MB of 8 MB in use, the largest free "
            "range 2 MB");
}

TEST(MemoryExhausted, IsWhatTheCpuBackendSays) {
  auto backend = CpuBackend::create({.capacity = {1'000'000, 0, 0}});
  ASSERT_TRUE(backend);
  auto first = (*backend)->allocate(core::Tier::kGpu, 600'000, "a");
  ASSERT_TRUE(first);
  const auto second = (*backend)->allocate(core::Tier::kGpu, 500'000, "b");
  ASSERT_FALSE(second);
  EXPECT_EQ(
      second.error().front().what,
      memory_exhausted(core::Tier::kGpu, "b", {.bytes = 500'000, .in_use = 600'000, .capacity = 1'000'000})
          .what);
  (*backend)->release(*first);
}

}  // namespace
}  // namespace stowage::executor
