// IoRing's submission loop, seen through a plain job over one file: at most
// queue_depth requests in flight, short transfers completed by resubmitting
// the remainder, -EAGAIN retried (but not forever), a failure stopping new
// blocks without abandoning those in flight, and a job's exception
// rethrown with the ring left clean for the next run. Uses the page cache
// where O_DIRECT is refused: none of this depends on it.
#include "executor/nvme/io_ring.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
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


// Reads 4096-byte blocks from a pipe and records the order of the ring's
// calls ("start 3", "drain 1"). A pipe, not a disk, because the test then
// decides when each request completes: at once if the pipe holds data when
// it is submitted, or when another thread writes into it. drain(0) has that
// thread write two blocks and waits, spinning, until its write() has
// returned: the ring's thread makes no system call meanwhile.
class PipeJob final : public BlockJob {
 public:
  explicit PipeJob(int write_end) : write_end_(write_end), writer_([this] { write_when_asked(); }) {}
  ~PipeJob() override {
    ask_.store(true, std::memory_order_release);  // lets the writer leave if drain(0) never ran
    writer_.join();
  }

  BlockRequest request(int64_t b) override {
    events.push_back("start " + std::to_string(b));
    return {.file = 0, .offset = 0, .bytes = kPipeBlock};
  }
  void fill(int64_t, std::span<std::byte>) override {}
  void drain(int64_t k, std::span<const std::byte>) override {
    events.push_back("drain " + std::to_string(k));
    if (k != 0) return;
    ask_.store(true, std::memory_order_release);
    while (!written_.load(std::memory_order_acquire)) {
    }
  }

  static void write_blocks(int fd, int blocks) {
    const std::vector<char> block(static_cast<size_t>(kPipeBlock), 'x');
    for (int i = 0; i < blocks; ++i) ASSERT_EQ(::write(fd, block.data(), block.size()), kPipeBlock);
  }

  static constexpr int64_t kPipeBlock = 4096;
  std::vector<std::string> events;

 private:
  void write_when_asked() {
    while (!ask_.load(std::memory_order_acquire)) {
    }
    write_blocks(write_end_, 2);
    written_.store(true, std::memory_order_release);
  }

  int write_end_;
  std::atomic<bool> ask_{false};
  std::atomic<bool> written_{false};
  std::thread writer_;  // last: starts once the flags exist
};

// While the ring's thread is busy in a job's drain() or fill() it makes no
// system call, and the completions of requests that finish meanwhile wait
// in the kernel to be posted (IORING_SETUP_COOP_TASKRUN). The ring must
// post and reap them, and give the device their slots back, as soon as the
// job returns, not first drain every block that had already arrived: that
// left the device short of requests for as long as the CPU work took, or
// until the next timer tick (4 ms at 250 Hz) posted them.
//
// Depth 2, 4 slots: blocks 0 and 1 are in the pipe before the run and
// complete at once; 2 and 3 go in flight; during drain(0) another thread
// writes theirs. Block 1 is still waiting to be drained, but the slot of
// block 0 is free and 2 and 3 have completed: block 4 must start before
// drain(1).
TEST_F(IoRingTest, ReapsCompletionsThatArrivedWhileTheJobWasBusyBeforeDrainingMore) {
  std::array<int, 2> pipe_ends{};
  ASSERT_EQ(::pipe(pipe_ends.data()), 0);
  const int read_end = pipe_ends[0];
  PipeJob job(pipe_ends[1]);
  PipeJob::write_blocks(pipe_ends[1], 2);
  IoRunReport report;
  {
    IoRing ring({&read_end, 1}, 2, PipeJob::kPipeBlock, {});
    std::thread rest([&] {
      // The blocks after 3 (4 and 5), late enough that only blocks 0-3 can
      // have completed by the time drain(1) is due.
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      PipeJob::write_blocks(pipe_ends[1], 2);
    });
    report = ring.run(IoOp::kRead, 6, job);
    rest.join();
  }
  ::close(pipe_ends[0]);
  ::close(pipe_ends[1]);
  ASSERT_FALSE(report.failure);
  const auto at = [&](const std::string& event) {
    return std::ranges::find(job.events, event) - job.events.begin();
  };
  EXPECT_LT(at("start 4"), at("drain 1")) << ::testing::PrintToString(job.events);
}

}  // namespace
}  // namespace stowage::executor
