// IoRing's submission loop, seen through a plain job over one file: at most
// queue_depth requests in flight, short transfers completed by resubmitting
// the remainder, -EAGAIN retried (but not forever), a failure stopping new
// blocks without abandoning those in flight, and a job's exception
// rethrown with the ring left clean for the next run. Uses the page cache
// where O_DIRECT is refused: none of this depends on it.
#include "executor/nvme/io_ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "executor/nvme/direct_file.h"
#include "tests/executor/nvme/test_directory.h"

namespace stowage::executor {
namespace {

constexpr int64_t kBlock = 16384;

// Block b of `data` at offset b * kBlock of file 0; counts the blocks
// started, and can fail on purpose while draining one.
class VectorJob final : public BlockJob {
 public:
  explicit VectorJob(std::vector<std::byte>& data) : data_(data) {}

  BlockRequest request(int64_t b) override {
    ++started;
    return {.file = 0, .offset = b * kBlock, .bytes = kBlock};
  }
  void fill(int64_t b, std::span<std::byte> staging) override {
    std::memcpy(staging.data(), data_.data() + b * kBlock, kBlock);
  }
  void drain(int64_t b, std::span<const std::byte> staging) override {
    if (b == throw_at) throw std::runtime_error("job failed on purpose");
    std::memcpy(data_.data() + b * kBlock, staging.data(), kBlock);
  }

  int64_t started = 0;
  int64_t throw_at = -1;

 private:
  std::vector<std::byte>& data_;
};

std::vector<std::byte> pattern(int64_t blocks, unsigned seed) {
  std::vector<std::byte> v(static_cast<size_t>(blocks * kBlock));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::byte>((i * 131 + seed) >> 3);
  return v;
}

class IoRingTest : public ::testing::Test {
 protected:
  DirectFile open_file() { return DirectFile(dir_.path() / "ring.bin", DirectIo::kFallBackToBuffered); }

  TestDirectory dir_;
};

TEST_F(IoRingTest, KeepsAtMostQueueDepthInFlight) {
  DirectFile file = open_file();
  const int fd = file.fd();
  IoRing ring({&fd, 1}, 4, kBlock, {});
  auto data = pattern(40, 1);
  VectorJob writer(data);
  ASSERT_FALSE(ring.run(IoOp::kWrite, 40, writer).failure);
  std::vector<std::byte> back(data.size());
  VectorJob reader(back);
  const IoRunReport report = ring.run(IoOp::kRead, 40, reader);
  ASSERT_FALSE(report.failure);
  EXPECT_EQ(report.completed, 40);
  // 40 blocks, depth 4: four go to the device before the first is reaped.
  // A ring that waited for each block before the next would report 1.
  EXPECT_EQ(report.depth.max, 4);
  EXPECT_EQ(back, data);
}

TEST_F(IoRingTest, ResubmitsTheRestOfShortTransfers) {
  // Every first attempt moves only 4096 of its 16384 bytes; the rest goes
  // in a second attempt at offset + 4096. 10 blocks written and read: 20
  // resubmissions in all.
  DirectFile file = open_file();
  const int fd = file.fd();
  auto short_first = [](const IoAttempt& a) -> int64_t { return a.offset % kBlock == 0 ? 4096 : 0; };
  IoRing ring({&fd, 1}, 3, kBlock, short_first);
  auto data = pattern(10, 2);
  VectorJob writer(data);
  EXPECT_EQ(ring.run(IoOp::kWrite, 10, writer).resubmissions, 10);
  std::vector<std::byte> back(data.size());
  VectorJob reader(back);
  EXPECT_EQ(ring.run(IoOp::kRead, 10, reader).resubmissions, 10);
  EXPECT_EQ(back, data);
}

TEST_F(IoRingTest, RetriesEagainButNotForever) {
  DirectFile file = open_file();
  const int fd = file.fd();
  int calls = 0;
  auto eagain_once = [&calls](const IoAttempt&) -> int64_t { return calls++ % 2 == 0 ? -EAGAIN : 0; };
  auto data = pattern(6, 3);
  {
    IoRing ring({&fd, 1}, 2, kBlock, eagain_once);
    VectorJob writer(data);
    const IoRunReport report = ring.run(IoOp::kWrite, 6, writer);
    EXPECT_FALSE(report.failure);
    EXPECT_EQ(report.resubmissions, 6);
  }
  IoRing stuck({&fd, 1}, 2, kBlock, [](const IoAttempt&) -> int64_t { return -EAGAIN; });
  VectorJob writer(data);
  const IoRunReport report = stuck.run(IoOp::kWrite, 6, writer);
  ASSERT_TRUE(report.failure);
  EXPECT_EQ(report.failure->error_number, EAGAIN);
}

TEST_F(IoRingTest, StopsStartingBlocksAfterAFailureAndStaysUsable) {
  // Block 3 fails with EIO, at once, when it is issued. By then at most 2
  // blocks after it can have started: staged in the spare buffers while
  // the device held 2 requests. None starts later.
  DirectFile file = open_file();
  const int fd = file.fd();
  bool inject = true;
  auto eio_at_block_3 = [&inject](const IoAttempt& a) -> int64_t {
    return inject && a.offset == 3 * kBlock ? -EIO : 0;
  };
  IoRing ring({&fd, 1}, 2, kBlock, eio_at_block_3);
  auto data = pattern(20, 4);
  VectorJob writer(data);
  const IoRunReport report = ring.run(IoOp::kWrite, 20, writer);
  ASSERT_TRUE(report.failure);
  EXPECT_EQ(report.failure->block, 3);
  EXPECT_EQ(report.failure->error_number, EIO);
  EXPECT_EQ(report.failure->request.offset, 3 * kBlock);
  EXPECT_LE(writer.started, 6);
  inject = false;
  VectorJob again(data);
  EXPECT_FALSE(ring.run(IoOp::kWrite, 20, again).failure);
}

TEST_F(IoRingTest, RethrowsAJobsExceptionAfterDraining) {
  DirectFile file = open_file();
  const int fd = file.fd();
  IoRing ring({&fd, 1}, 4, kBlock, {});
  auto data = pattern(12, 5);
  VectorJob writer(data);
  ASSERT_FALSE(ring.run(IoOp::kWrite, 12, writer).failure);
  std::vector<std::byte> back(data.size());
  VectorJob failing(back);
  failing.throw_at = 2;
  EXPECT_THROW((void)ring.run(IoOp::kRead, 12, failing), std::runtime_error);
  VectorJob reader(back);
  const IoRunReport report = ring.run(IoOp::kRead, 12, reader);
  EXPECT_FALSE(report.failure);
  EXPECT_EQ(report.completed, 12);
  EXPECT_EQ(back, data);
}

}  // namespace
}  // namespace stowage::executor
