#include "executor/checkpoint/checkpoint_reader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <stdexcept>

#include "executor/checkpoint/save_checkpoint.h"
#include "tests/executor/checkpoint/scratch_dir.h"

namespace stowage::executor {
namespace {

using testing::pattern_bytes;
using testing::ScratchDir;

// Reading straight into the caller's buffer, as a resume into a pinned
// arena would: the bytes arrive, a wrong-sized buffer is our bug, and an
// unknown name is a checkpoint from another model.
TEST(CheckpointReader, ReadsABlobIntoTheCallersBuffer) {
  ScratchDir root;
  const auto bytes = pattern_bytes(777, 5);
  const std::vector<BlobSource> blobs{{.name = "master32", .tier = "cpu", .content = std::span(bytes)}};
  const auto reader = CheckpointReader::open(save_checkpoint(root.path(), "step-000001", "{}", blobs));
  ASSERT_TRUE(reader) << core::to_string(reader.error());

  std::vector<std::byte> arena(777);
  ASSERT_TRUE(reader->read_blob("master32", arena));
  EXPECT_EQ(arena, bytes);
  std::vector<std::byte> too_small(776);
  EXPECT_THROW((void)reader->read_blob("master32", too_small), std::invalid_argument);
  const auto missing = reader->read_blob("adam_m", arena);
  ASSERT_FALSE(missing);
  EXPECT_NE(core::to_string(missing.error()).find("checkpoint has no blob 'adam_m'"), std::string::npos);
}

// verify() reads a blob larger than its 8 MiB buffer in pieces, and names
// every damaged blob, not just the first. Layout: "big" (8 MiB + 3) at 0,
// "small" at 8 MiB + 4096.
TEST(CheckpointReader, VerifyNamesEveryCorruptBlob) {
  ScratchDir root;
  const auto big = pattern_bytes((8u << 20) + 3, 1);
  const auto small = pattern_bytes(10, 2);
  const std::vector<BlobSource> blobs{{.name = "big", .tier = "gpu", .content = std::span(big)},
                                      {.name = "small", .tier = "cpu", .content = std::span(small)}};
  const auto dir = save_checkpoint(root.path(), "step-000001", "{}", blobs);
  {
    const auto reader = CheckpointReader::open(dir);
    ASSERT_TRUE(reader) << core::to_string(reader.error());
    EXPECT_TRUE(reader->verify());
    EXPECT_EQ(reader->blobs()[1].offset.count(), (8 << 20) + 4096);
  }
  testing::flip_bit(dir / "blobs.bin", (8 << 20) + 1);  // in big's last piece
  testing::flip_bit(dir / "blobs.bin", (8 << 20) + 4096 + 9);
  const auto reader = CheckpointReader::open(dir);
  ASSERT_TRUE(reader);
  const auto verified = reader->verify();
  ASSERT_FALSE(verified);
  ASSERT_EQ(verified.error().size(), 2u);
  EXPECT_NE(verified.error()[0].what.find("blob 'big'"), std::string::npos);
  EXPECT_NE(verified.error()[1].what.find("blob 'small'"), std::string::npos);
}

// Issue 12: a FIFO in place of a checkpoint's file blocked the open
// forever. Each is refused as not a regular file, without waiting.
TEST(CheckpointReader, AFifoInPlaceOfAFileIsRefusedWithoutBlocking) {
  for (const char* file : {"manifest.json", "blobs.bin"}) {
    ScratchDir root;
    const auto dir = save_checkpoint(root.path(), "step-000001", "{}", {});
    std::filesystem::remove(dir / file);
    ASSERT_EQ(::mkfifo((dir / file).c_str(), 0600), 0);
    const auto reader = CheckpointReader::open(dir);
    ASSERT_FALSE(reader) << file;
    EXPECT_NE(core::to_string(reader.error()).find("not a regular file"), std::string::npos)
        << core::to_string(reader.error());
  }
}

// Issue 12: a blob of the wrong size was found only after verify() had
// read and checksummed all of it (71 s for a claimed 50 GiB). expect_blobs
// compares sizes from the manifest alone, and names every problem.
TEST(CheckpointReader, ExpectBlobsNamesEveryMissingOrMisSizedBlobWithoutReading) {
  ScratchDir root;
  const auto bytes = pattern_bytes(100, 1);
  const std::vector<BlobSource> blobs{{.name = "a", .tier = "cpu", .content = std::span(bytes)},
                                      {.name = "b", .tier = "cpu", .content = std::span(bytes)}};
  const auto reader = CheckpointReader::open(save_checkpoint(root.path(), "step-000001", "{}", blobs));
  ASSERT_TRUE(reader);
  const std::vector<ExpectedBlob> right{{"a", core::Bytes(100)}, {"b", core::Bytes(100)}};
  EXPECT_TRUE(reader->expect_blobs(right));
  const std::vector<ExpectedBlob> wrong{
      {"a", core::Bytes(100)}, {"b", core::Bytes(50)}, {"c", core::Bytes(1)}};
  const auto checked = reader->expect_blobs(wrong);
  ASSERT_FALSE(checked);
  ASSERT_EQ(checked.error().size(), 2u);
  EXPECT_EQ(checked.error()[0].what, "blob 'b' has 100 bytes");
  EXPECT_EQ(checked.error()[1].what, "checkpoint has no blob 'c'");
}

}  // namespace
}  // namespace stowage::executor
