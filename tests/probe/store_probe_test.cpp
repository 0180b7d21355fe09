// The store probe on a real directory: each direction's rate alone and
// beside the other, by regions at a time, and nothing left behind.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "executor/nvme/io_error.h"
#include "probe/probes.h"

namespace stowage::probe {
namespace {

namespace fs = std::filesystem;

fs::path fresh_directory(const std::string& name) {
  const fs::path dir = fs::current_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(StoreProbe, MeasuresEachDirectionAloneAndBesideTheOtherAndLeavesNothing) {
  const fs::path dir = fresh_directory("store_probe_test");
  std::ofstream(dir / "someone-elses.txt") << "kept";
  int ticks = 0;
  std::vector<StoreRate> rates;
  try {
    rates = probe_store_at(dir, 8, [&](const char*) { ++ticks; });
  } catch (const executor::IoError& e) {
    if (e.kind() == executor::IoErrorKind::kDirectIoUnsupported) GTEST_SKIP() << "no O_DIRECT here: " << e.what();
    throw;
  }
  ASSERT_EQ(rates.size(), 2u);
  for (size_t i = 0; i < rates.size(); ++i) {
    const StoreRate& r = rates[i];
    SCOPED_TRACE(r.callers);
    EXPECT_EQ(r.callers, static_cast<int>(i) + 1);
    EXPECT_EQ(r.block, 1 << 20);
    EXPECT_EQ(r.depth, 8);
    EXPECT_GT(r.read, 0);
    EXPECT_GT(r.write, 0);
    // Beside each other: the direction through first completed every one
    // of its regions in the overlap, so at least one rate is there. (The
    // other may have completed none: a disk may serve reads first.)
    EXPECT_GT(std::max(r.mixed_read, r.mixed_write), 0);
    EXPECT_GE(std::min(r.mixed_read, r.mixed_write), 0);
  }
  EXPECT_EQ(ticks, 10);
  // Only what was there before is left.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"someone-elses.txt"});
  fs::remove_all(dir);
}

TEST(StoreProbe, NeverUsesADirectoryItDidNotMake) {
  const fs::path dir = fresh_directory("store_probe_taken_test");
  const fs::path taken = dir / ("stowage-profile-" + std::to_string(::getpid()) + ".store");
  fs::create_directories(taken);
  std::ofstream(taken / "data") << "someone's";
  EXPECT_THROW((void)probe_store_at(dir, 2, [](const char*) {}), std::runtime_error);
  std::ifstream in(taken / "data");
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "someone's");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace stowage::probe
