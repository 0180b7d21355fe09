// IoQueue: one direction's device queue shared by callers on many threads.
// The next region's blocks join the device while the previous region's are
// still in flight (the queue depth holds across region boundaries), the
// depth never exceeds queue_depth however many callers there are, and one
// caller's failure stays that caller's. Uses the page cache where O_DIRECT
// is refused: none of this depends on it.
#include "executor/nvme/io_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "executor/nvme/direct_file.h"
#include "tests/executor/nvme/test_directory.h"

namespace stowage::executor {
namespace {

constexpr int64_t kBlock = 16384;

// Blocks first .. first + count - 1 of a file, to and from `data` (which
// holds exactly those blocks).
class RangeJob final : public BlockJob {
 public:
  RangeJob(std::vector<std::byte>& data, int64_t first) : data_(data), first_(first) {}
  BlockRequest request(int64_t b) override { return {.file = 0, .offset = (first_ + b) * kBlock, .bytes = kBlock}; }
  void fill(int64_t b, std::span<std::byte> staging) override {
    std::memcpy(staging.data(), data_.data() + b * kBlock, kBlock);
  }
  void drain(int64_t b, std::span<const std::byte> staging) override {
    std::memcpy(data_.data() + b * kBlock, staging.data(), kBlock);
  }

 private:
  std::vector<std::byte>& data_;
  int64_t first_;
};

std::vector<std::byte> pattern(int64_t blocks, unsigned seed) {
  std::vector<std::byte> v(static_cast<size_t>(blocks * kBlock));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::byte>((i * 131 + seed) >> 3);
  return v;
}

class IoQueueTest : public ::testing::Test {
 protected:
  DirectFile open_file() { return DirectFile(dir_.path() / "queue.bin", DirectIo::kFallBackToBuffered); }

  TestDirectory dir_;
};

TEST_F(IoQueueTest, TheNextRegionsBlocksJoinWhileThePreviousAreStillInFlight) {
  // Regions A (blocks 0-2) and B (blocks 3-5), queue depth 4. The fault hook
  // holds A's first request until B has been submitted, so B is waiting when
  // A's blocks go out. Submitted region by region (A drains, then B
  // starts), at most 3 would ever be in flight; sharing one queue, the
  // device gets A's 3 and B's first at once: 4, the queue depth, for both.
  DirectFile file = open_file();
  const int fd = file.fd();
  std::promise<void> b_submitted;
  std::shared_future<void> gate = b_submitted.get_future().share();
  std::atomic<bool> held{false};
  auto hold_first = [&](const IoAttempt& a) -> int64_t {
    if (a.offset == 0 && !held.exchange(true)) gate.wait_for(std::chrono::seconds(10));
    return 0;
  };
  auto data = pattern(6, 1);
  {
    IoQueue writer({&fd, 1}, 4, kBlock, {});
    RangeJob all(data, 0);
    ASSERT_FALSE(writer.run(IoOp::kWrite, 6, all).failure);
  }
  IoQueue queue({&fd, 1}, 4, kBlock, hold_first);
  std::vector<std::byte> a_back(3 * kBlock), b_back(3 * kBlock);
  RangeJob a(a_back, 0), b(b_back, 3);
  auto a_ticket = queue.submit(IoOp::kRead, 3, a);
  auto b_ticket = queue.submit(IoOp::kRead, 3, b);
  b_submitted.set_value();
  const IoRunReport a_report = queue.wait(*a_ticket);
  const IoRunReport b_report = queue.wait(*b_ticket);
  EXPECT_EQ(a_report.depth.max, 4);
  EXPECT_EQ(b_report.depth.max, 4);
  EXPECT_EQ(a_report.completed, 3);
  EXPECT_EQ(b_report.completed, 3);
  EXPECT_TRUE(std::equal(a_back.begin(), a_back.end(), data.begin()));
  EXPECT_TRUE(std::equal(b_back.begin(), b_back.end(), data.begin() + 3 * kBlock));
}

TEST_F(IoQueueTest, ManyCallersShareOneQueueDepth) {
  // Four threads read 20 blocks each at once through a queue of depth 3:
  // the device never holds more than 3, whoever asked.
  DirectFile file = open_file();
  const int fd = file.fd();
  auto data = pattern(80, 2);
  IoQueue queue({&fd, 1}, 3, kBlock, {});
  RangeJob all(data, 0);
  ASSERT_FALSE(queue.run(IoOp::kWrite, 80, all).failure);
  std::vector<std::vector<std::byte>> backs(4, std::vector<std::byte>(20 * kBlock));
  std::vector<IoRunReport> reports(4);
  {
    std::vector<std::jthread> readers;
    for (int t = 0; t < 4; ++t) {
      readers.emplace_back([&, t] {
        RangeJob job(backs[static_cast<size_t>(t)], 20 * t);
        reports[static_cast<size_t>(t)] = queue.run(IoOp::kRead, 20, job);
      });
    }
  }
  for (int t = 0; t < 4; ++t) {
    const IoRunReport& r = reports[static_cast<size_t>(t)];
    EXPECT_FALSE(r.failure) << "reader " << t;
    EXPECT_EQ(r.completed, 20) << "reader " << t;
    EXPECT_GE(r.depth.max, 1) << "reader " << t;
    EXPECT_LE(r.depth.max, 3) << "reader " << t;
    EXPECT_LE(r.depth.mean, 3.0) << "reader " << t;
    EXPECT_TRUE(std::equal(backs[static_cast<size_t>(t)].begin(), backs[static_cast<size_t>(t)].end(),
                           data.begin() + 20 * t * kBlock))
        << "reader " << t;
  }
}

TEST_F(IoQueueTest, OneCallersFailureStaysItsOwn) {
  // Region A's block 1 fails with EIO; region B, queued right behind it,
  // completes. The queue then serves a third run as usual.
  DirectFile file = open_file();
  const int fd = file.fd();
  auto data = pattern(8, 3);
  {
    IoQueue writer({&fd, 1}, 2, kBlock, {});
    RangeJob all(data, 0);
    ASSERT_FALSE(writer.run(IoOp::kWrite, 8, all).failure);
  }
  std::atomic<bool> inject{true};
  auto eio_at_block_1 = [&](const IoAttempt& a) -> int64_t {
    return inject && a.offset == kBlock ? -EIO : 0;
  };
  IoQueue queue({&fd, 1}, 2, kBlock, eio_at_block_1);
  std::vector<std::byte> a_back(4 * kBlock), b_back(4 * kBlock);
  RangeJob a(a_back, 0), b(b_back, 4);
  auto a_ticket = queue.submit(IoOp::kRead, 4, a);
  auto b_ticket = queue.submit(IoOp::kRead, 4, b);
  const IoRunReport a_report = queue.wait(*a_ticket);
  const IoRunReport b_report = queue.wait(*b_ticket);
  ASSERT_TRUE(a_report.failure);
  EXPECT_EQ(a_report.failure->block, 1);
  EXPECT_EQ(a_report.failure->error_number, EIO);
  EXPECT_FALSE(b_report.failure);
  EXPECT_TRUE(std::equal(b_back.begin(), b_back.end(), data.begin() + 4 * kBlock));
  inject = false;
  EXPECT_FALSE(queue.run(IoOp::kRead, 4, a).failure);
  EXPECT_TRUE(std::equal(a_back.begin(), a_back.end(), data.begin()));
}

}  // namespace
}  // namespace stowage::executor
