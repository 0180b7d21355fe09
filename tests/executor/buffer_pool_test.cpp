// BufferPool, and CpuBackend reusing what its tiers were given back: the
// pages of a released buffer are mapped already, so the next buffer of its
// size costs no page faults, and what is kept never exceeds the peak in use.
#include "executor/buffer_pool.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstring>
#include <string>
#include <vector>

#include "executor/cpu_backend.h"

namespace stowage::executor {
namespace {

TEST(BufferPool, GivesBackOnlyABlockOfTheSizeAsked) {
  std::vector<std::byte> a(64), b(64);
  BufferPool pool;
  pool.keep({.data = a.data(), .bytes = 4096});
  pool.keep({.data = b.data(), .bytes = 8192});
  EXPECT_EQ(pool.kept_bytes(), 12288);
  EXPECT_EQ(pool.take(2048), nullptr);
  EXPECT_EQ(pool.take(8192), b.data());
  EXPECT_EQ(pool.take(8192), nullptr);
  EXPECT_EQ(pool.kept_bytes(), 4096);
  EXPECT_EQ(pool.take(4096), a.data());
  EXPECT_EQ(pool.kept_bytes(), 0);
}

TEST(BufferPool, TrimsTheLargestFirstDownToTheLimit) {
  std::vector<std::byte> a(8), b(8), c(8);
  BufferPool pool;
  pool.keep({.data = a.data(), .bytes = 4096});
  pool.keep({.data = b.data(), .bytes = 16384});
  pool.keep({.data = c.data(), .bytes = 8192});
  const std::vector<BufferPool::Block> first = pool.trim(12288);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].data, b.data());
  EXPECT_EQ(first[0].bytes, 16384);
  EXPECT_EQ(pool.kept_bytes(), 12288);
  const std::vector<BufferPool::Block> rest = pool.trim(0);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].data, c.data());
  EXPECT_EQ(rest[1].data, a.data());
  EXPECT_EQ(pool.kept_bytes(), 0);
}

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// 64 MiB: above glibc's largest mmap threshold (32 MiB), so without the pool
// every such buffer is a fresh mapping whose first write faults each page.
constexpr int64_t kLarge = int64_t{64} << 20;

TEST(CpuBackendReuse, AReleasedBufferIsReusedWithoutFaultingItsPagesAgain) {
  for (const core::Tier tier : {core::Tier::kGpu, core::Tier::kCpu}) {
    SCOPED_TRACE(core::to_string(tier));
    auto backend = CpuBackend::create({.lock_host_memory = false});
    ASSERT_TRUE(backend);
    CpuBackend& b = **backend;
    auto first = b.allocate(tier, kLarge, "first");
    ASSERT_TRUE(first);
    const long before_first = minor_faults();
    std::memset(first->data, 1, static_cast<size_t>(kLarge));
    const long first_faults = minor_faults() - before_first;
    std::byte* const address = first->data;
    b.release(*first);
    EXPECT_EQ(b.kept_bytes(tier), kLarge);

    auto second = b.allocate(tier, kLarge, "second");
    ASSERT_TRUE(second);
    EXPECT_EQ(second->data, address);
    EXPECT_EQ(b.kept_bytes(tier), 0);
    const long before_second = minor_faults();
    std::memset(second->data, 2, static_cast<size_t>(kLarge));
    const long second_faults = minor_faults() - before_second;
    // With 4 KiB pages the first write faulted up to 16384 times; huge
    // pages fault far fewer, and then there is little to compare.
    if (first_faults >= 1000) {
      EXPECT_LT(second_faults, first_faults / 20) << "first " << first_faults;
    }
    b.release(*second);
  }
}

TEST(CpuBackendReuse, KeepsAtMostThePeakInUse) {
  auto backend = CpuBackend::create({.lock_host_memory = false});
  ASSERT_TRUE(backend);
  CpuBackend& b = **backend;
  const core::Tier gpu = core::Tier::kGpu;
  auto eight = b.allocate(gpu, 8 << 20, "8 MiB");
  ASSERT_TRUE(eight);
  b.release(*eight);
  EXPECT_EQ(b.kept_bytes(gpu), 8 << 20);  // peak 8

  // A new size: the peak becomes 16 MiB, and the 8 MiB kept fit under it.
  auto sixteen = b.allocate(gpu, 16 << 20, "16 MiB");
  ASSERT_TRUE(sixteen);
  EXPECT_EQ(b.kept_bytes(gpu), 8 << 20);
  b.release(*sixteen);
  EXPECT_EQ(b.kept_bytes(gpu), 24 << 20);

  // Another new size: what is kept goes down to the 16 MiB peak, the
  // largest block first, so the 8 MiB block stays.
  auto four = b.allocate(gpu, 4 << 20, "4 MiB");
  ASSERT_TRUE(four);
  EXPECT_EQ(b.kept_bytes(gpu), 8 << 20);
  EXPECT_LE(b.kept_bytes(gpu) + b.in_use(gpu), 2 * (16 << 20));
  b.release(*four);
}

// What the pool keeps goes back to the system when asked (after a run's
// steps, before the trainer's evaluation allocates on its own); buffers
// in use stay.
TEST(CpuBackendReuse, GivesBackWhatItKeepsWhenAsked) {
  auto backend = CpuBackend::create({.lock_host_memory = false});
  ASSERT_TRUE(backend);
  CpuBackend& b = **backend;
  auto kept = b.allocate(core::Tier::kGpu, kLarge, "kept");
  auto host = b.allocate(core::Tier::kCpu, kLarge, "kept too");
  auto held = b.allocate(core::Tier::kGpu, 8 << 20, "held");
  ASSERT_TRUE(kept && host && held);
  b.release(*kept);
  b.release(*host);
  ASSERT_EQ(b.kept_bytes(core::Tier::kGpu) + b.kept_bytes(core::Tier::kCpu), 2 * kLarge);
  b.give_back_kept();
  EXPECT_EQ(b.kept_bytes(core::Tier::kGpu), 0);
  EXPECT_EQ(b.kept_bytes(core::Tier::kCpu), 0);
  EXPECT_EQ(b.in_use(core::Tier::kGpu), 8 << 20);
  const int64_t fresh = b.fresh_blocks(core::Tier::kGpu);
  auto again = b.allocate(core::Tier::kGpu, kLarge, "again");
  ASSERT_TRUE(again);
  EXPECT_EQ(b.fresh_blocks(core::Tier::kGpu), fresh + 1) << "mapped anew";
  b.release(*again);
  b.release(*held);
}

// A step that uses one large buffer and then three smaller ones of another
// size at once, as a layer's activations and its gradient copies do. The
// bound the pool had before (peak less what is in use) freed the large
// block while the small ones were in use and then the small ones when the
// large came back, every step: 4 new mappings a step, each faulted again.
TEST(CpuBackendReuse, AStepOfManySizesMapsNothingNewAfterTheFirst) {
  for (const core::Tier tier : {core::Tier::kGpu, core::Tier::kCpu}) {
    SCOPED_TRACE(core::to_string(tier));
    auto backend = CpuBackend::create({.lock_host_memory = false});
    ASSERT_TRUE(backend);
    CpuBackend& b = **backend;
    auto step = [&] {
      auto large = b.allocate(tier, 10 << 20, "activations");
      ASSERT_TRUE(large);
      b.release(*large);
      std::vector<Buffer> small;
      for (int i = 0; i < 3; ++i) {
        auto s = b.allocate(tier, 4 << 20, "gradient " + std::to_string(i));
        ASSERT_TRUE(s);
        small.push_back(*s);
      }
      for (Buffer& s : small) b.release(s);
    };
    step();
    const int64_t after_first = b.fresh_blocks(tier);
    EXPECT_EQ(after_first, 4);
    for (int i = 0; i < 3; ++i) step();
    EXPECT_EQ(b.fresh_blocks(tier), after_first);
    EXPECT_LE(b.kept_bytes(tier), 2 * (12 << 20));  // all of it kept: at most twice the 12 MiB peak
  }
}

TEST(CpuBackendReuse, OpaqueDeviceBuffersAreReusedToo) {
  auto backend = CpuBackend::create({.opaque_device_memory = true});
  ASSERT_TRUE(backend);
  CpuBackend& b = **backend;
  auto first = b.allocate(core::Tier::kGpu, 1 << 20, "first");
  ASSERT_TRUE(first);
  ASSERT_TRUE(b.zero(core::Lane::kGpuCompute, *first));
  const std::byte* const address = first->data;
  b.release(*first);
  EXPECT_EQ(b.kept_bytes(core::Tier::kGpu), 1 << 20);
  auto second = b.allocate(core::Tier::kGpu, 1 << 20, "second");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->data, address);  // the same opaque handle: the same block
  ASSERT_TRUE(b.zero(core::Lane::kGpuCompute, *second));
  b.release(*second);
}

}  // namespace
}  // namespace stowage::executor
