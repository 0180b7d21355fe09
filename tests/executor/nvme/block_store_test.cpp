// BlockStore on a real disk under the build tree: round trips of regions
// that do not fill their last block, striping across three directories,
// queue depths 1 and 32, the queue depth a read of many blocks keeps in
// flight, a reader and a writer thread at once, statistics,
// and every error a caller must see: a corrupt byte, a region never
// written, injected ENOSPC and EIO, a real EFBIG at reservation, bad
// options, a filesystem refusing O_DIRECT. Tests skip, saying why, where
// the build tree's filesystem refuses O_DIRECT.
#include "executor/nvme/block_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

#include "executor/nvme/aligned_buffer.h"
#include "tests/executor/nvme/test_directory.h"

namespace stowage::executor {
namespace {

// Whether `text` contains `part`; on failure, shows both.
::testing::AssertionResult contains(std::string_view text, std::string_view part) {
  if (text.find(part) != std::string_view::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

constexpr int64_t kBlock = 16384;

std::vector<std::byte> pattern(int64_t bytes, unsigned seed) {
  std::vector<std::byte> v(static_cast<size_t>(bytes));
  uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) b = static_cast<std::byte>((x = x * 1664525u + 1013904223u) >> 24);
  return v;
}

std::vector<std::byte> file_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::memcpy(out.data(), chars.data(), chars.size());
  return out;
}

// In a child process: with files limited to 1 MiB, reserves 512 KiB and
// then 4 MiB more. Exits 0 when the second fails with EFBIG.
[[noreturn]] void reserve_past_file_size_limit(const BlockStoreOptions& o) {
  std::signal(SIGXFSZ, SIG_IGN);
  const rlimit limit{.rlim_cur = 1 << 20, .rlim_max = RLIM_INFINITY};
  ::setrlimit(RLIMIT_FSIZE, &limit);
  auto store = BlockStore::open(o);
  (void)store->reserve("fits", core::Bytes(512 * 1024));
  try {
    (void)store->reserve("too big", core::Bytes(4 << 20));
  } catch (const IoError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::_Exit(e.error_number() == EFBIG ? 0 : 1);
  }
  std::_Exit(2);
}

// Overwrites one byte of a block on disk behind the store's back, as a bad
// disk or a stray writer would.
void overwrite_byte(const BlockPlace& p, int64_t at, char value) {
  const int fd = ::open(p.file.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, &value, 1, p.offset + at), 1);
  ::close(fd);
}

class BlockStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = dir_.direct_io_refused()) GTEST_SKIP() << *why;
  }

  BlockStoreOptions options(int directories = 1) const {
    BlockStoreOptions o{.block_bytes = core::Bytes(kBlock), .queue_depth = 4};
    for (int i = 0; i < directories; ++i)
      o.directories.push_back(dir_.path() / ("drive" + std::to_string(i)));
    return o;
  }

  static BlockStore open(const BlockStoreOptions& o) {
    auto store = BlockStore::open(o);
    if (!store) throw std::runtime_error(core::to_string(store.error()));
    return std::move(*store);
  }

  TestDirectory dir_;
};

TEST_F(BlockStoreTest, RoundTripsRegionsThatDoNotFillTheirLastBlock) {
  BlockStore store = open(options());
  EXPECT_EQ(store.mode(), IoMode::kDirect);
  for (const int64_t bytes :
       {int64_t{0}, int64_t{1}, int64_t{4095}, int64_t{4096}, kBlock, kBlock + 1, int64_t{100000}}) {
    const Extent e = store.reserve("region of " + std::to_string(bytes), core::Bytes(bytes));
    const auto data = pattern(bytes, static_cast<unsigned>(bytes));
    store.write(e, data);
    std::vector<std::byte> back(data.size(), std::byte{0x5A});
    store.read(e, back);
    EXPECT_EQ(back, data) << bytes << " bytes";
  }
  // 100000 B in 16 KiB blocks: 6 full blocks (98304 B) and 1696 B, padded
  // on disk to 4096.
  const Extent e = store.reserve("tail", core::Bytes(100000));
  EXPECT_EQ(e.blocks, 7);
  EXPECT_EQ(store.place(e, 6).bytes, core::Bytes(4096));
  EXPECT_EQ(store.place(e, 5).bytes, core::Bytes(kBlock));
}

TEST_F(BlockStoreTest, StripesBlocksAcrossThreeDirectories) {
  // 7 blocks over 3 files: block g in file g % 3 at (g / 3) * 16 KiB, so
  // file 0 holds blocks 0, 3, 6; file 1 holds 1, 4; file 2 holds 2, 5.
  BlockStore store = open(options(3));
  const Extent e = store.reserve("striped", core::Bytes(7 * kBlock));
  const auto data = pattern(7 * kBlock, 7);
  store.write(e, data);
  const auto files = store.files();
  ASSERT_EQ(files.size(), 3u);
  for (size_t f = 0; f < 3; ++f) {
    EXPECT_EQ(files[f].parent_path(), dir_.path() / ("drive" + std::to_string(f)));
    const auto on_disk = file_bytes(files[f]);
    const int64_t blocks_here = f == 0 ? 3 : 2;
    ASSERT_EQ(static_cast<int64_t>(on_disk.size()), blocks_here * kBlock) << files[f];
    for (int64_t k = 0; k < blocks_here; ++k) {
      const int64_t g = k * 3 + static_cast<int64_t>(f);
      EXPECT_TRUE(std::equal(on_disk.begin() + k * kBlock, on_disk.begin() + (k + 1) * kBlock,
                             data.begin() + g * kBlock))
          << "block " << g;
    }
  }
}

TEST_F(BlockStoreTest, QueueDepthOneAndThirtyTwoGiveTheSameBytes) {
  const auto data = pattern(64 * kBlock + 123, 11);
  for (const int depth : {1, 32}) {
    BlockStoreOptions o = options();
    o.queue_depth = depth;
    BlockStore store = open(o);
    const Extent e = store.reserve("states", core::Bytes(static_cast<int64_t>(data.size())));
    store.write(e, data);
    std::vector<std::byte> back(data.size());
    store.read(e, back);
    EXPECT_EQ(back, data) << "queue depth " << depth;
  }
}

TEST_F(BlockStoreTest, ReadsOnOneThreadWhileWritingOnAnother) {
  // The executor's nvme.read and nvme.write lanes: a reader re-reads region
  // A while a writer rewrites region B with a new pattern each time.
  BlockStore store = open(options(2));
  const auto a_data = pattern(40 * kBlock, 1);
  const Extent a = store.reserve("a", core::Bytes(static_cast<int64_t>(a_data.size())));
  const Extent b = store.reserve("b", core::Bytes(40 * kBlock - 5));
  store.write(a, a_data);
  std::atomic<int> read_mismatches{0};
  std::thread reader([&] {
    std::vector<std::byte> back(a_data.size());
    for (int i = 0; i < 30; ++i) {
      store.read(a, back);
      if (back != a_data) ++read_mismatches;
    }
  });
  std::vector<std::byte> b_data;
  for (unsigned i = 0; i < 30; ++i) {
    b_data = pattern(b.bytes.count(), 100 + i);
    store.write(b, b_data);
  }
  reader.join();
  EXPECT_EQ(read_mismatches.load(), 0);
  std::vector<std::byte> back(b_data.size());
  store.read(b, back);
  EXPECT_EQ(back, b_data);
}

TEST_F(BlockStoreTest, AReadOfManyBlocksKeepsTheQueueDepthInFlight) {
  // 64 blocks at queue depth 4, on a real disk (O_DIRECT): the ring gives
  // the device 4 requests before it reaps any, and tops it up as each one
  // completes. A store that moved one block at a time would report 1.
  BlockStore store = open(options());
  const auto data = pattern(64 * kBlock, 9);
  const Extent e = store.reserve("many", core::Bytes(64 * kBlock));
  const core::QueueDepth wrote = store.write(e, data);
  std::vector<std::byte> back(data.size());
  const core::QueueDepth read = store.read(e, back);
  EXPECT_EQ(back, data);
  EXPECT_EQ(read.max, 4);
  EXPECT_EQ(wrote.max, 4);
  EXPECT_GT(read.mean, 1.0) << "more than one request in flight on average";
  EXPECT_LE(read.mean, 4.0);
  EXPECT_LE(wrote.mean, 4.0);
}

TEST_F(BlockStoreTest, CountsBytesOpsAndTime) {
  // 3.5 blocks: 4 block requests per pass. One write, two reads.
  BlockStore store = open(options());
  const int64_t bytes = 3 * kBlock + kBlock / 2;
  const Extent e = store.reserve("counted", core::Bytes(bytes));
  const auto data = pattern(bytes, 3);
  std::vector<std::byte> back(data.size());
  store.write(e, data);
  store.read(e, back);
  store.read(e, back);
  const IoStats s = store.stats();
  EXPECT_EQ(s.bytes_written, core::Bytes(bytes));
  EXPECT_EQ(s.bytes_read, core::Bytes(2 * bytes));
  EXPECT_EQ(s.write_ops, 4);
  EXPECT_EQ(s.read_ops, 8);
  EXPECT_EQ(s.resubmissions, 0);
  EXPECT_GT(s.write_time, core::Seconds(0));
  EXPECT_GT(s.read_time, core::Seconds(0));
}

TEST_F(BlockStoreTest, RefusesToReturnABlockWithACorruptByte) {
  BlockStore store = open(options(2));
  const Extent e = store.reserve("adam_m layers.3", core::Bytes(3 * kBlock));
  store.write(e, pattern(3 * kBlock, 9));
  // Flip one byte of block 1 through the page cache, as a bad disk or a
  // stray writer would; an O_DIRECT read flushes and bypasses the cache.
  const BlockPlace p = store.place(e, 1);
  const int fd = ::open(p.file.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  std::byte b{};
  ASSERT_EQ(::pread(fd, &b, 1, p.offset + 100), 1);
  b = ~b;
  ASSERT_EQ(::pwrite(fd, &b, 1, p.offset + 100), 1);
  ::close(fd);
  std::vector<std::byte> back(3 * kBlock);
  try {
    store.read(e, back);
    FAIL() << "a corrupt block was returned";
  } catch (const IoError& err) {
    EXPECT_EQ(err.kind(), IoErrorKind::kChecksumMismatch);
    EXPECT_EQ(err.file(), p.file);
    EXPECT_EQ(err.offset(), p.offset);
    EXPECT_TRUE(contains(err.what(), "region 'adam_m layers.3', block 1 of 3"));
    EXPECT_TRUE(contains(err.what(), p.file.string()));
    EXPECT_TRUE(contains(err.what(), "offset " + std::to_string(p.offset)));
  }
}

TEST_F(BlockStoreTest, MovesAlignedBuffersInPlaceAndStillVerifies) {
  // A 4096-aligned buffer (as pinned memory is) skips the staging copy for
  // whole blocks; the 5000-byte tail of 5 * 16 KiB + 5000 still goes
  // through staging for its padding. A corrupt block read in place is
  // reported all the same.
  BlockStore store = open(options(2));
  const int64_t bytes = 5 * kBlock + 5000;
  const auto data = pattern(bytes, 21);
  AlignedBuffer source(static_cast<size_t>(bytes)), back(static_cast<size_t>(bytes));
  std::memcpy(source.data(), data.data(), data.size());
  const Extent e = store.reserve("aligned", core::Bytes(bytes));
  store.write(e, source.span().first(data.size()));
  store.read(e, back.span().first(data.size()));
  EXPECT_EQ(std::memcmp(back.data(), data.data(), data.size()), 0);
  overwrite_byte(store.place(e, 3), 7, 'x');
  try {
    store.read(e, back.span().first(data.size()));
    FAIL() << "a corrupt block was returned";
  } catch (const IoError& err) {
    EXPECT_EQ(err.kind(), IoErrorKind::kChecksumMismatch);
    EXPECT_TRUE(contains(err.what(), "region 'aligned', block 3 of 6"));
  }
}

TEST_F(BlockStoreTest, RejectsReadingARegionNeverWritten) {
  BlockStore store = open(options());
  const Extent e = store.reserve("never written", core::Bytes(100));
  std::vector<std::byte> back(100);
  EXPECT_THROW(store.read(e, back), std::logic_error);
  std::vector<std::byte> wrong_size(99);
  EXPECT_THROW(store.write(e, wrong_size), std::logic_error);
}

TEST_F(BlockStoreTest, ReportsAnInjectedFullDiskWithFileOffsetAndRegion) {
  // Block 2 of the region (global block 2, file 0, offset 2 * 16 KiB) fails
  // with ENOSPC; the region is then unreadable rather than half-written.
  BlockStoreOptions o = options();
  o.fault = [](const IoAttempt& a) -> int64_t {
    return a.op == IoOp::kWrite && a.offset == 2 * kBlock ? -ENOSPC : 0;
  };
  BlockStore store = open(o);
  const Extent e = store.reserve("master32 layers.0", core::Bytes(5 * kBlock));
  try {
    store.write(e, pattern(5 * kBlock, 1));
    FAIL() << "no error";
  } catch (const IoError& err) {
    EXPECT_EQ(err.kind(), IoErrorKind::kIo);
    EXPECT_EQ(err.error_number(), ENOSPC);
    EXPECT_TRUE(contains(err.what(), "write of region 'master32 layers.0' failed at block 2 of 5"));
    EXPECT_TRUE(contains(err.what(), store.files()[0].string() + "', offset 32768, 16384 bytes"));
    EXPECT_TRUE(contains(err.what(), "No space left on device (ENOSPC)"));
  }
  std::vector<std::byte> back(5 * kBlock);
  EXPECT_THROW(store.read(e, back), std::logic_error);
}

TEST_F(BlockStoreTest, ReportsAnInjectedReadErrorAndKeepsWorking) {
  bool fail_reads = false;
  BlockStoreOptions o = options();
  o.fault = [&fail_reads](const IoAttempt& a) -> int64_t {
    return fail_reads && a.op == IoOp::kRead && a.offset == kBlock ? -EIO : 0;
  };
  BlockStore store = open(o);
  const auto data = pattern(4 * kBlock, 2);
  const Extent e = store.reserve("param16 layers.1", core::Bytes(4 * kBlock));
  store.write(e, data);
  std::vector<std::byte> back(data.size());
  fail_reads = true;
  try {
    store.read(e, back);
    FAIL() << "no error";
  } catch (const IoError& err) {
    EXPECT_EQ(err.error_number(), EIO);
    EXPECT_TRUE(contains(err.what(), "read of region 'param16 layers.1' failed at block 1"));
    EXPECT_TRUE(contains(err.what(), "Input/output error (EIO)"));
  }
  fail_reads = false;
  store.read(e, back);
  EXPECT_EQ(back, data);
}

// Blocks read straight into the caller's aligned memory are verified by
// the caller's thread as they arrive. When the run fails part-way, blocks
// after the failure never arrive: the caller must stop waiting for them and
// report the failure (not hang), and a mismatch it finds must reach it as
// the error, with the store usable afterwards.
TEST_F(BlockStoreTest, ADirectReadThatFailsPartWayReportsItInsteadOfWaitingForTheRest) {
  bool fail_reads = false;
  BlockStoreOptions o = options();
  o.fault = [&fail_reads](const IoAttempt& a) -> int64_t {
    return fail_reads && a.op == IoOp::kRead && a.offset == 5 * kBlock ? -EIO : 0;
  };
  BlockStore store = open(o);
  const int64_t bytes = 16 * kBlock;
  const auto data = pattern(bytes, 31);
  AlignedBuffer source(static_cast<size_t>(bytes)), back(static_cast<size_t>(bytes));
  std::memcpy(source.data(), data.data(), data.size());
  const Extent e = store.reserve("adam_v layers.2", core::Bytes(bytes));
  store.write(e, source.span());
  fail_reads = true;
  try {
    store.read(e, back.span());
    FAIL() << "no error";
  } catch (const IoError& err) {
    EXPECT_EQ(err.error_number(), EIO);
    EXPECT_TRUE(contains(err.what(), "read of region 'adam_v layers.2' failed at block 5"));
  }
  fail_reads = false;
  store.read(e, back.span());
  EXPECT_EQ(std::memcmp(back.data(), data.data(), data.size()), 0);
}

TEST_F(BlockStoreTest, AMismatchTheCallerFindsInADirectBlockIsItsErrorAndTheStoreGoesOn) {
  BlockStore store = open(options());
  const int64_t bytes = 16 * kBlock;
  const auto data = pattern(bytes, 32);
  AlignedBuffer source(static_cast<size_t>(bytes)), back(static_cast<size_t>(bytes));
  std::memcpy(source.data(), data.data(), data.size());
  const Extent bad = store.reserve("corrupt", core::Bytes(bytes));
  const Extent good = store.reserve("intact", core::Bytes(bytes));
  store.write(bad, source.span());
  store.write(good, source.span());
  overwrite_byte(store.place(bad, 1), 4097, '!');
  try {
    store.read(bad, back.span());
    FAIL() << "a corrupt block was returned";
  } catch (const IoError& err) {
    EXPECT_EQ(err.kind(), IoErrorKind::kChecksumMismatch);
    EXPECT_TRUE(contains(err.what(), "region 'corrupt', block 1 of 16"));
  }
  store.read(good, back.span());
  EXPECT_EQ(std::memcmp(back.data(), data.data(), data.size()), 0);
}

TEST_F(BlockStoreTest, SurvivesShortTransfersAndEagain) {
  // Each block's first attempt moves 4 KiB of 16 KiB, then one -EAGAIN:
  // two resubmissions per block, 4 blocks, written and read: 16.
  BlockStoreOptions o = options();
  int calls = 0;
  o.fault = [&calls](const IoAttempt& a) -> int64_t {
    if (a.offset % kBlock == 0) return 4096;
    return calls++ % 2 == 0 ? -EAGAIN : 0;
  };
  BlockStore store = open(o);
  const auto data = pattern(4 * kBlock, 4);
  const Extent e = store.reserve("flaky", core::Bytes(4 * kBlock));
  store.write(e, data);
  std::vector<std::byte> back(data.size());
  store.read(e, back);
  EXPECT_EQ(back, data);
  EXPECT_EQ(store.stats().resubmissions, 16);
}

TEST_F(BlockStoreTest, ReportsARealFullDiskAtReservation) {
  // RLIMIT_FSIZE makes fallocate past 1 MiB fail with EFBIG, as a full disk
  // fails it with ENOSPC: at reserve(), before any training step. In a
  // child process, so the limit stays there.
  const BlockStoreOptions o = options();
  EXPECT_EXIT(reserve_past_file_size_limit(o), ::testing::ExitedWithCode(0),
              "cannot allocate bytes \\[524288, 4718592\\) of .*stowage-0.blocks.*EFBIG");
}

// Issue 12: a stowage-0.blocks that this store did not create (a user's
// file, a killed run's) is neither overwritten nor, when the store closes,
// deleted. Before, it was truncated on open and removed on close.
TEST_F(BlockStoreTest, NeverOverwritesOrRemovesABlockFileItDidNotCreate) {
  const BlockStoreOptions o = options();
  std::filesystem::create_directories(o.directories[0]);
  const std::filesystem::path theirs = o.directories[0] / "stowage-0.blocks";
  std::ofstream(theirs) << "someone's data";
  try {
    (void)BlockStore::open(o);
    ADD_FAILURE() << "opened over an existing block file";
  } catch (const IoError& e) {
    EXPECT_TRUE(contains(e.what(), "already exists and this run did not create it")) << e.what();
  }
  const std::vector<std::byte> left = file_bytes(theirs);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(left.data()), left.size()), "someone's data");
}

// Issue 12: two stores on one directory destroyed each other's blocks (and
// the checksum failure blamed the disk). The second is refused at once,
// naming the process that holds the directory; the first keeps working.
TEST_F(BlockStoreTest, ASecondStoreOnTheSameDirectoryIsRefusedNamingTheFirst) {
  BlockStore first = open(options());
  try {
    (void)BlockStore::open(options());
    ADD_FAILURE() << "two stores on one directory";
  } catch (const IoError& e) {
    EXPECT_TRUE(
        contains(e.what(), "in use by another stowage run (process " + std::to_string(::getpid()) + ")"));
  }
  const Extent e = first.reserve("r", core::Bytes(kBlock));
  const std::vector<std::byte> data = pattern(kBlock, 3);
  first.write(e, data);
  std::vector<std::byte> back(data.size());
  first.read(e, back);
  EXPECT_EQ(back, data);
}

// A SIGKILLed store leaves its block file behind; the lock file says the
// dead run created it, so the next store removes it and starts afresh
// (while a file it did not create is refused, above).
TEST_F(BlockStoreTest, TheBlockFileOfAKilledStoreIsReclaimed) {
  const BlockStoreOptions o = options();
  const pid_t child = ::fork();
  if (child == 0) {
    auto store = BlockStore::open(o);
    (void)store->reserve("r", core::Bytes(kBlock));
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  ASSERT_TRUE(std::filesystem::exists(o.directories[0] / "stowage-0.blocks"));
  BlockStore store = open(o);
  EXPECT_EQ(store.files().size(), 1u);
}

TEST_F(BlockStoreTest, ClosingRemovesItsFilesAndLockSoTheDirectoryCanBeReused) {
  const BlockStoreOptions o = options();
  { BlockStore store = open(o); }
  EXPECT_TRUE(std::filesystem::is_empty(o.directories[0]));
  BlockStore again = open(o);
  EXPECT_EQ(again.files().size(), 1u);
}

TEST(BlockStoreOptions, ReportsEveryProblemAtOnce) {
  const core::Diagnostics problems =
      validate({.directories = {}, .block_bytes = core::Bytes(1000), .queue_depth = 0});
  ASSERT_EQ(problems.size(), 3u);
  EXPECT_TRUE(contains(problems[0].what, "no directory"));
  EXPECT_TRUE(contains(problems[1].what, "block size 1000"));
  EXPECT_TRUE(contains(problems[2].what, "queue depth 0"));
  EXPECT_FALSE(BlockStore::open({.directories = {"x"}, .queue_depth = 1025}).has_value());
}

TEST(BlockStoreDirectIo, RefusesAFilesystemWithoutDirectIoUnlessAllowed) {
  // tmpfs refused O_DIRECT before Linux 6.6; newer kernels accept it.
  const std::filesystem::path shm = "/dev/shm";
  struct statfs fs {};
  if (::statfs(shm.c_str(), &fs) != 0 || fs.f_type != 0x01021994 /* TMPFS_MAGIC */) {
    GTEST_SKIP() << "no tmpfs at /dev/shm";
  }
  const auto dir = shm / ("stowage-nvme-test-" + std::to_string(::getpid()));
  if (!TestDirectory::direct_io_refused_in(shm)) {
    GTEST_SKIP() << "this kernel's tmpfs accepts O_DIRECT; nothing to refuse";
  }
  try {
    (void)BlockStore::open({.directories = {dir}});
    FAIL() << "O_DIRECT on tmpfs accepted";
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::kDirectIoUnsupported);
    EXPECT_TRUE(contains(e.what(), "directory '" + dir.string() + "' refuses O_DIRECT"));
    EXPECT_TRUE(contains(e.what(), "allow_buffered"));
  }
  {
    auto store =
        BlockStore::open({.directories = {dir}, .block_bytes = core::Bytes(4096), .allow_buffered = true});
    ASSERT_TRUE(store.has_value());
    EXPECT_EQ(store->mode(), IoMode::kBuffered);
    const Extent e = store->reserve("buffered", core::Bytes(5000));
    const auto data = pattern(5000, 5);
    store->write(e, data);
    std::vector<std::byte> back(data.size());
    store->read(e, back);
    EXPECT_EQ(back, data);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace stowage::executor
