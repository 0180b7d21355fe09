#include "executor/checkpoint/load_checkpoint.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/text_file.h"
#include "executor/checkpoint/checkpoint_reader.h"
#include "executor/checkpoint/manifest.h"
#include "executor/checkpoint/save_checkpoint.h"
#include "tests/executor/checkpoint/scratch_dir.h"

namespace stowage::executor {
namespace {

using testing::pattern_bytes;
using testing::ScratchDir;
using testing::write_text;

// A checkpoint of three blobs under a fresh scratch root.
class LoadCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = {pattern_bytes(100, 1), pattern_bytes(5000, 2), pattern_bytes(33, 3)};
    const std::vector<BlobSource> blobs{
        {.name = "layer0.adam_m", .tier = "cpu", .content = std::span(data_[0])},
        {.name = "layer1.adam_v", .tier = "nvme", .content = std::span(data_[1])},
        {.name = "loss_scaler", .tier = "cpu", .content = std::span(data_[2])}};
    dir_ = save_checkpoint(root_.path(), "step-000100", R"({"step": 100})", blobs);
  }

  // All diagnostics of a load that must fail, as one text.
  std::string load_error() {
    const auto loaded = load_checkpoint(dir_);
    EXPECT_FALSE(loaded) << "the load should have failed";
    return loaded ? std::string() : core::to_string(loaded.error());
  }

  ScratchDir root_;
  std::vector<std::vector<std::byte>> data_;
  std::filesystem::path dir_;
};

TEST_F(LoadCheckpoint, LoadsWhatWasSaved) {
  const auto loaded = load_checkpoint(dir_);
  ASSERT_TRUE(loaded) << core::to_string(loaded.error());
  ASSERT_NE(loaded->find("layer1.adam_v"), nullptr);
  EXPECT_EQ(loaded->find("layer1.adam_v")->bytes, data_[1]);
  EXPECT_EQ(loaded->find("layer1.adam_v")->tier, "nvme");
  EXPECT_EQ(loaded->find("nothing"), nullptr);
}

// Blobs at 0, 4096 (5000 bytes) and 12288 (33 bytes): blobs.bin is 12321
// bytes; one byte less is a truncated checkpoint.
TEST_F(LoadCheckpoint, TruncatedFileIsRefusedNamingTheFile) {
  const auto data_file = dir_ / "blobs.bin";
  ASSERT_EQ(std::filesystem::file_size(data_file), 12321u);
  std::filesystem::resize_file(data_file, 12320);
  const std::string error = load_error();
  EXPECT_NE(
      error.find("file " + data_file.string() + " is 12320 bytes, manifest says 12321: truncated checkpoint"),
      std::string::npos)
      << error;
}

// One bit flipped in the middle blob: that blob, and only it, is named.
TEST_F(LoadCheckpoint, FlippedBitIsRefusedNamingTheBlob) {
  testing::flip_bit(dir_ / "blobs.bin", 4096 + 2500);
  const auto loaded = load_checkpoint(dir_);
  ASSERT_FALSE(loaded);
  ASSERT_EQ(loaded.error().size(), 1u) << core::to_string(loaded.error());
  const std::string error = loaded.error()[0].to_string();
  EXPECT_NE(error.find("blob 'layer1.adam_v'"), std::string::npos) << error;
  EXPECT_NE(error.find((dir_ / "blobs.bin").string()), std::string::npos) << error;
  EXPECT_NE(error.find("corrupt checkpoint"), std::string::npos) << error;
}

TEST_F(LoadCheckpoint, MissingManifestIsRefused) {
  std::filesystem::remove(dir_ / "manifest.json");
  const std::string error = load_error();
  EXPECT_NE(error.find((dir_ / "manifest.json").string() + ": manifest is missing"), std::string::npos)
      << error;
}

TEST_F(LoadCheckpoint, MissingDataFileIsRefused) {
  std::filesystem::remove(dir_ / "blobs.bin");
  const std::string error = load_error();
  EXPECT_NE(error.find((dir_ / "blobs.bin").string()), std::string::npos) << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
}

// The stray comma sits on line 3, column 16: `  "metadata": {,`.
TEST_F(LoadCheckpoint, GarbageManifestGivesLineAndColumn) {
  write_text(dir_ / "manifest.json", "{\n  \"format\": \"stowage/checkpoint/v2\",\n  \"metadata\": {,\n}\n");
  const auto loaded = load_checkpoint(dir_);
  ASSERT_FALSE(loaded);
  ASSERT_EQ(loaded.error().size(), 1u);
  const core::Diagnostic& d = loaded.error()[0];
  EXPECT_EQ(d.where.file, (dir_ / "manifest.json").string());
  EXPECT_EQ(d.where.line, 3);
  EXPECT_EQ(d.where.column, 16);
  EXPECT_NE(d.what.find("not valid JSON"), std::string::npos) << d.what;
}

TEST_F(LoadCheckpoint, UnknownFormatNamesTheKnownOne) {
  write_text(dir_ / "manifest.json",
             R"({"format": "stowage/checkpoint/v9", "metadata": {}, "files": [], "blobs": []})");
  const std::string error = load_error();
  EXPECT_NE(error.find("unknown format 'stowage/checkpoint/v9'"), std::string::npos) << error;
  EXPECT_NE(error.find("stowage/checkpoint/v2"), std::string::npos) << error;
}

// A blob without its size and with a tier that is a number: both problems
// reported together, not one per attempt.
TEST_F(LoadCheckpoint, ReportsEveryManifestProblemAtOnce) {
  write_text(dir_ / "manifest.json", seal_manifest_text(R"({"format": "stowage/checkpoint/v2", "metadata": {},
    "files": [{"file": "blobs.bin", "size": 12321}],
    "blobs": [{"name": "a", "tier": 3, "file": "blobs.bin", "offset": 0, "crc32c": 0}]})"));
  const auto loaded = load_checkpoint(dir_);
  ASSERT_FALSE(loaded);
  const std::string error = core::to_string(loaded.error());
  EXPECT_EQ(loaded.error().size(), 2u) << error;
  EXPECT_NE(error.find("blobs[0]: key 'tier' is not a string"), std::string::npos) << error;
  EXPECT_NE(error.find("blobs[0]: key 'size' is missing"), std::string::npos) << error;
}

// A manifest may not send the loader outside the checkpoint directory.
TEST_F(LoadCheckpoint, FileOutsideTheCheckpointIsRefused) {
  write_text(dir_ / "manifest.json", seal_manifest_text(R"({"format": "stowage/checkpoint/v2", "metadata": {},
    "files": [{"file": "../step-000099/blobs.bin", "size": 0}], "blobs": []})"));
  const std::string error = load_error();
  EXPECT_NE(error.find("is not a plain file name"), std::string::npos) << error;
}

// Issue 12 item 5: the manifest was trusted. One byte changed in a field no
// blob checksum covers (a blob's tier: "nvme" becomes "nvmf") is refused by
// the manifest's own CRC32C, at the checksum's line and column.
TEST_F(LoadCheckpoint, AFlippedByteInTheManifestIsRefused) {
  const std::filesystem::path manifest = dir_ / "manifest.json";
  std::string text = core::read_text_file(manifest).value();
  const size_t tier = text.find("\"nvme\"");
  ASSERT_NE(tier, std::string::npos) << text;
  text[tier + 4] = 'f';
  write_text(manifest, text);
  const auto loaded = load_checkpoint(dir_);
  ASSERT_FALSE(loaded);
  ASSERT_EQ(loaded.error().size(), 1u) << core::to_string(loaded.error());
  const core::Diagnostic& d = loaded.error()[0];
  EXPECT_EQ(d.where.file, manifest.string());
  EXPECT_EQ(d.where.line, static_cast<int>(std::count(text.begin(), text.end(), '\n')) - 1);
  EXPECT_EQ(d.where.column, 3);
  EXPECT_NE(d.what.find("key 'manifest_crc32c'"), std::string::npos) << d.what;
  EXPECT_NE(d.what.find("corrupt or edited checkpoint manifest"), std::string::npos) << d.what;
}

}  // namespace
}  // namespace stowage::executor
