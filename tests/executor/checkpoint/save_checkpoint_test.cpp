#include "executor/checkpoint/save_checkpoint.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <nlohmann/json.hpp>

#include "executor/checkpoint/checkpoint_reader.h"
#include "executor/checkpoint/checkpoint_root.h"
#include "executor/checkpoint/checkpoint_write_error.h"
#include "executor/checkpoint/load_checkpoint.h"
#include "tests/executor/checkpoint/scratch_dir.h"

namespace stowage::executor {
namespace {

using testing::entries_of;
using testing::pattern_bytes;
using testing::ScratchDir;

// Saves two blobs of distinct contents per `seed` as `name`.
std::vector<std::vector<std::byte>> save_two(const std::filesystem::path& root, const std::string& name,
                                             uint32_t seed, const SaveOptions& options = {}) {
  std::vector<std::vector<std::byte>> data{pattern_bytes(5000, seed), pattern_bytes(6000, seed + 1)};
  const std::vector<BlobSource> blobs{
      {.name = "layer0.adam_m", .tier = "cpu", .content = std::span(data[0])},
      {.name = "layer0.adam_v", .tier = "nvme", .content = std::span(data[1])}};
  save_checkpoint(root, name, R"({"seed": )" + std::to_string(seed) + "}", blobs, options);
  return data;
}

void expect_holds(const std::filesystem::path& dir, const std::vector<std::vector<std::byte>>& data) {
  const auto loaded = load_checkpoint(dir);
  ASSERT_TRUE(loaded) << core::to_string(loaded.error());
  ASSERT_EQ(loaded->blobs.size(), data.size());
  for (size_t i = 0; i < data.size(); ++i)
    EXPECT_EQ(loaded->blobs[i].bytes, data[i]) << loaded->blobs[i].name;
}

// Empty, one byte, one past a 4 KiB boundary, and 3 MiB + 7 streamed by a
// producer in 1000-byte chunks: every size and both kinds of source.
TEST(SaveCheckpoint, RoundTripsBlobsOfEverySize) {
  ScratchDir root;
  const auto one = pattern_bytes(1, 1);
  const auto odd = pattern_bytes(4097, 2);
  const auto big = pattern_bytes((3u << 20) + 7, 3);
  const auto produce_big = [&big](BlobSink& sink) {
    for (size_t at = 0; at < big.size(); at += 1000)
      sink.write(std::span(big).subspan(at, std::min<size_t>(1000, big.size() - at)));
  };
  const std::vector<BlobSource> blobs{
      {.name = "empty", .tier = "gpu", .content = std::span<const std::byte>()},
      {.name = "one", .tier = "cpu", .content = std::span(one)},
      {.name = "odd", .tier = "nvme", .content = std::span(odd)},
      {.name = "big", .tier = "gpu", .content = produce_big}};
  const auto dir = save_checkpoint(root.path(), "step-000010", "{}", blobs);
  EXPECT_EQ(dir, root.path() / "step-000010");

  const auto loaded = load_checkpoint(dir);
  ASSERT_TRUE(loaded) << core::to_string(loaded.error());
  ASSERT_EQ(loaded->blobs.size(), 4u);
  const std::vector<std::vector<std::byte>> expected{{}, one, odd, big};
  const std::vector<std::string> tiers{"gpu", "cpu", "nvme", "gpu"};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(loaded->blobs[i].name, blobs[i].name);
    EXPECT_EQ(loaded->blobs[i].tier, tiers[i]);
    EXPECT_EQ(loaded->blobs[i].bytes, expected[i]) << blobs[i].name;
  }
  EXPECT_EQ(entries_of(root.path()), std::vector<std::string>{"step-000010"});  // no temp dir left
}

// The metadata comes back as the same JSON value, keys in the order given.
TEST(SaveCheckpoint, RoundTripsMetadata) {
  ScratchDir root;
  const std::string metadata =
      R"({"step": 200, "plan": "plans/gpt-tiny.yaml", "model": "gpt-tiny", "seed": 1234,)"
      R"( "loss_scaler": {"scale": 65536.0, "good_steps": 17}, "rng": [3735928559, 0, 42], "note": "ü"})";
  const auto dir = save_checkpoint(root.path(), checkpoint_name(200), metadata, {});
  const auto loaded = load_checkpoint(dir);
  ASSERT_TRUE(loaded) << core::to_string(loaded.error());
  EXPECT_EQ(nlohmann::ordered_json::parse(loaded->metadata_json), nlohmann::ordered_json::parse(metadata));
  EXPECT_TRUE(loaded->metadata_json.starts_with(R"({"step":200,"plan")"));
}

// Blobs start on 4 KiB boundaries (O_DIRECT-friendly): 5000 bytes at 0,
// then the next at 8192, so the data file is 8192 + 6000 = 14192 bytes.
TEST(SaveCheckpoint, AlignsEveryBlobTo4KiB) {
  ScratchDir root;
  save_two(root.path(), "step-000001", 1);
  const auto reader = CheckpointReader::open(root.path() / "step-000001");
  ASSERT_TRUE(reader) << core::to_string(reader.error());
  ASSERT_EQ(reader->blobs().size(), 2u);
  EXPECT_EQ(reader->blobs()[0].offset.count(), 0);
  EXPECT_EQ(reader->blobs()[1].offset.count(), 8192);
  EXPECT_EQ(std::filesystem::file_size(root.path() / "step-000001" / "blobs.bin"), 14192u);
}

// A full disk while writing the second blob of step 200: the error names
// the file, the blob and ENOSPC; step 100 is untouched and the temp
// directory is gone.
TEST(SaveCheckpoint, FullDiskMidSaveKeepsPreviousCheckpoint) {
  ScratchDir root;
  const auto old_data = save_two(root.path(), "step-000100", 1);
  const SaveOptions full_disk{.inject_write_fault = [](std::string_view file, int64_t offset) {
    return file.ends_with("blobs.bin") && offset >= 8192 ? -ENOSPC : 0;
  }};
  try {
    save_two(root.path(), "step-000200", 5, full_disk);
    FAIL() << "the save should have failed";
  } catch (const CheckpointWriteError& e) {
    EXPECT_EQ(e.error_number(), ENOSPC);
    EXPECT_EQ(e.blob(), "layer0.adam_v");
    EXPECT_EQ(e.file().filename(), "blobs.bin");
    const std::string what = e.what();
    EXPECT_NE(what.find("blobs.bin"), std::string::npos) << what;
    EXPECT_NE(what.find("'layer0.adam_v'"), std::string::npos) << what;
    EXPECT_NE(what.find("No space left on device"), std::string::npos) << what;
  }
  EXPECT_EQ(entries_of(root.path()), std::vector<std::string>{"step-000100"});
  EXPECT_EQ(*find_latest(root.path()), root.path() / "step-000100");
  expect_holds(root.path() / "step-000100", old_data);
}

// Replacing step 100 fails at its very last file (the manifest): the old
// step 100 must still be there, bit for bit.
TEST(SaveCheckpoint, FailureWhileReplacingKeepsTheOldCheckpoint) {
  ScratchDir root;
  const auto old_data = save_two(root.path(), "step-000100", 1);
  const SaveOptions eio{.inject_write_fault = [](std::string_view file, int64_t) {
    return file.ends_with("manifest.json") ? -EIO : 0;
  }};
  EXPECT_THROW(save_two(root.path(), "step-000100", 9, eio), CheckpointWriteError);
  EXPECT_EQ(entries_of(root.path()), std::vector<std::string>{"step-000100"});
  expect_holds(root.path() / "step-000100", old_data);
}

TEST(SaveCheckpoint, SavingOverTheSameNameReplacesIt) {
  ScratchDir root;
  save_two(root.path(), "step-000100", 1);
  const auto only = pattern_bytes(10, 4);
  const std::vector<BlobSource> blobs{{.name = "master32", .tier = "cpu", .content = std::span(only)}};
  save_checkpoint(root.path(), "step-000100", R"({"try": 2})", blobs);

  EXPECT_EQ(entries_of(root.path()), std::vector<std::string>{"step-000100"});  // old one removed
  const auto loaded = load_checkpoint(root.path() / "step-000100");
  ASSERT_TRUE(loaded) << core::to_string(loaded.error());
  ASSERT_EQ(loaded->blobs.size(), 1u);
  EXPECT_EQ(loaded->blobs[0].name, "master32");
  EXPECT_EQ(loaded->blobs[0].bytes, only);
  EXPECT_EQ(loaded->metadata_json, R"({"try":2})");
}

// A producer that fails (a CUDA copy error, say) leaves nothing behind.
TEST(SaveCheckpoint, ProducerExceptionLeavesNoTempDir) {
  ScratchDir root;
  const std::vector<BlobSource> blobs{{.name = "gpu_state", .tier = "gpu", .content = [](BlobSink&) {
                                         throw std::runtime_error("device lost");
                                       }}};
  EXPECT_THROW(save_checkpoint(root.path(), "step-000001", "{}", blobs), std::runtime_error);
  EXPECT_TRUE(entries_of(root.path()).empty());
}

TEST(SaveCheckpoint, RefusesCallerMistakesBeforeWriting) {
  ScratchDir root;
  const auto bytes = pattern_bytes(4, 1);
  const std::vector<BlobSource> twice{{.name = "a", .tier = "cpu", .content = std::span(bytes)},
                                      {.name = "a", .tier = "cpu", .content = std::span(bytes)}};
  EXPECT_THROW(save_checkpoint(root.path(), "step-000001", "{}", twice), std::invalid_argument);
  EXPECT_THROW(save_checkpoint(root.path(), "step-000001", "[1, 2]", {}), std::invalid_argument);
  EXPECT_THROW(save_checkpoint(root.path(), "step-000001", "{oops", {}), std::invalid_argument);
  EXPECT_THROW(save_checkpoint(root.path(), "a/b", "{}", {}), std::invalid_argument);
  EXPECT_THROW(save_checkpoint(root.path(), "step-1.tmp-abc", "{}", {}), std::invalid_argument);
  EXPECT_TRUE(entries_of(root.path()).empty());
}

// A real EACCES from the OS, not the hook. Root ignores mode bits, so the
// test cannot provoke it there.
TEST(SaveCheckpoint, UnwritableRootGivesPermissionError) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: chmod 0500 does not stop root from writing";
  ScratchDir scratch;
  const auto root = scratch.path() / "ckpt";
  const auto old_data = save_two(root, "step-000100", 1);
  std::filesystem::permissions(root, std::filesystem::perms(0500));
  try {
    save_two(root, "step-000200", 2);
    FAIL() << "the save should have failed";
  } catch (const CheckpointWriteError& e) {
    EXPECT_EQ(e.error_number(), EACCES);
    EXPECT_NE(std::string(e.what()).find(root.string()), std::string::npos) << e.what();
  }
  std::filesystem::permissions(root, std::filesystem::perms(0700));
  EXPECT_EQ(entries_of(root), std::vector<std::string>{"step-000100"});
  expect_holds(root / "step-000100", old_data);
}

// What the child reports through its exit status.
enum ChildOutcome { kFailedAsExpected = 0, kSaved = 1, kWrongError = 2, kOtherException = 3 };

// A real write failure from the kernel, which also works as root: a file
// size limit of 64 KiB makes write(2) fail with EFBIG (SIGXFSZ ignored,
// setrlimit(2)) partway through a 1 MiB blob. Runs in a forked child so the
// limit does not reach the rest of the tests.
TEST(SaveCheckpoint, FileSizeLimitInChildGivesEfbig) {
  ScratchDir root;
  const auto old_data = save_two(root.path(), "step-000100", 1);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{.rlim_cur = 64 << 10, .rlim_max = RLIM_INFINITY};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const auto big = pattern_bytes(1 << 20, 2);
    const std::vector<BlobSource> blobs{{.name = "adam_m", .tier = "nvme", .content = std::span(big)}};
    try {
      save_checkpoint(root.path(), "step-000200", "{}", blobs);
      ::_exit(kSaved);
    } catch (const CheckpointWriteError& e) {
      ::_exit(e.error_number() == EFBIG && e.blob() == "adam_m" ? kFailedAsExpected : kWrongError);
    } catch (...) {
      ::_exit(kOtherException);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kFailedAsExpected);
  EXPECT_EQ(entries_of(root.path()), std::vector<std::string>{"step-000100"});
  expect_holds(root.path() / "step-000100", old_data);
}

}  // namespace
}  // namespace stowage::executor
