// host_pages.h: large blocks are their own mappings, each at a page colour
// its neighbours do not share, and the CPU backend hands out its tiers'
// buffers that way, so no two arrays of one Adam step alias in bits 12-20
// (the slow layout of host_pages.h's comment).
#include "executor/host_pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <cstdint>
#include <set>
#include <vector>

#include "executor/cpu_backend.h"

namespace stowage::executor {
namespace {

bool page_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kHostPage == 0; }

// Whether any page of [p, p + bytes) is mapped: mincore fails with ENOMEM
// on a range that is not.
bool unmapped(const std::byte* p, size_t bytes) {
  std::vector<unsigned char> resident((bytes + kHostPage - 1) / kHostPage);
  return mincore(const_cast<std::byte*>(p), bytes, resident.data()) != 0 && errno == ENOMEM;
}

TEST(HostPages, AsManyLargeBlocksInARowAsThereAreColoursAllGetDifferentOnes) {
  constexpr size_t kBytes = kColouredMinBytes + 100;  // not a whole number of pages
  std::vector<std::byte*> blocks;
  std::set<size_t> colours;
  for (size_t i = 0; i < kPageColours; ++i) {
    std::byte* p = allocate_host_pages(kBytes);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(page_aligned(p));
    p[0] = std::byte{1};  // the first and the last byte asked for are writable
    p[kBytes - 1] = std::byte{2};
    blocks.push_back(p);
    colours.insert(page_colour(p));
  }
  EXPECT_EQ(colours.size(), kPageColours);
  for (std::byte* p : blocks) free_host_pages(p, kBytes);
}

TEST(HostPages, ALargeBlockIsUnmappedWhenFreedHeadAndTailAtOnce) {
  constexpr size_t kBytes = size_t{64} << 20;
  std::byte* p = allocate_host_pages(kBytes);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(unmapped(p, kBytes));
  free_host_pages(p, kBytes);
  EXPECT_TRUE(unmapped(p, kBytes));
}

TEST(HostPages, SmallBlocksArePageAlignedToo) {
  for (const size_t bytes : {size_t{1}, size_t{100}, kHostPage, kColouredMinBytes - 1}) {
    std::byte* p = allocate_host_pages(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_TRUE(page_aligned(p)) << bytes;
    p[bytes - 1] = std::byte{1};
    free_host_pages(p, bytes);
  }
}

TEST(HostPages, ASizeNoMachineHasIsNullNotACrash) {
  EXPECT_EQ(allocate_host_pages(0), nullptr);
  EXPECT_EQ(allocate_host_pages(size_t{1} << 50), nullptr);  // past x86-64's 128 TiB of user addresses
  EXPECT_EQ(allocate_host_pages(SIZE_MAX), nullptr);
  free_host_pages(nullptr, 4096);  // a no-op, as free(nullptr) is
}

TEST(HostPages, AHostArrayIsFilledByEveryThread) {
  const HostArray<float> a(1'000'003, 0.5f, 3);
  ASSERT_EQ(a.size(), 1'000'003u);
  for (const float x : a.span()) ASSERT_EQ(x, 0.5f);
  const HostArray<uint16_t> empty(0, 7, 2);
  EXPECT_TRUE(empty.span().empty());
}

// The buffers of one Adam step (master, m, v on the CPU tier; the gradient
// and the 16-bit copy on the device tier), as the executor allocates them.
TEST(HostPages, TheCpuBackendsBuffersOfOneAdamStepAreAtDifferentPageColours) {
  auto backend = CpuBackend::create({.lock_host_memory = false});
  ASSERT_TRUE(backend.has_value());
  constexpr int64_t kParams = int64_t{16} << 20;
  std::vector<Buffer> buffers;
  for (const char* what : {"master", "m", "v"})
    buffers.push_back(*(*backend)->allocate(core::Tier::kCpu, 4 * kParams, what));
  buffers.push_back(*(*backend)->allocate(core::Tier::kGpu, 4 * kParams, "grad"));
  buffers.push_back(*(*backend)->allocate(core::Tier::kGpu, 2 * kParams, "param16"));
  std::set<size_t> colours;
  for (const Buffer& b : buffers) colours.insert(page_colour(b.data));
  EXPECT_EQ(colours.size(), buffers.size());
  for (Buffer& b : buffers) (*backend)->release(b);
}

// Whether the kernel may back the mapping that holds `p` with transparent
// huge pages (smaps' THPeligible), or nullopt where it does not say.
std::optional<bool> huge_page_eligible(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
    } else if (inside && line.starts_with("THPeligible:")) {
      return line.find('1') != std::string::npos;
    }
  }
  return std::nullopt;
}

// O_DIRECT pins every page it moves, and with 4 KiB pages the block store
// read and wrote at half the rate it reaches with 2 MiB ones (host_pages.cpp).
// Under THP's default `madvise` mode only an madvise makes a block eligible.
TEST(HostPages, ALargeBlockMayHaveHugePages) {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(enabled, modes);
  if (modes.empty() || modes.find("[never]") != std::string::npos) GTEST_SKIP() << "no transparent huge pages here";
  const size_t bytes = size_t{16} << 20;
  std::byte* block = allocate_host_pages(bytes);
  ASSERT_NE(block, nullptr);
  const std::optional<bool> eligible = huge_page_eligible(block + (size_t{4} << 20));
  free_host_pages(block, bytes);
  if (!eligible) GTEST_SKIP() << "/proc/self/smaps has no THPeligible";
  EXPECT_TRUE(*eligible) << "THP mode " << modes;
}

}  // namespace
}  // namespace stowage::executor
