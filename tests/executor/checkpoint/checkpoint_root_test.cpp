#include "executor/checkpoint/checkpoint_root.h"

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "executor/checkpoint/checkpoint_write_error.h"
#include "executor/checkpoint/save_checkpoint.h"
#include "tests/executor/checkpoint/scratch_dir.h"

namespace stowage::executor {
namespace {

using testing::entries_of;
using testing::ScratchDir;
using testing::write_text;

void save_empty(const std::filesystem::path& root, const std::string& name) {
  save_checkpoint(root, name, "{}", {});
}

TEST(CheckpointRoot, NamesCarryTheStep) {
  EXPECT_EQ(checkpoint_name(0), "step-000000");
  EXPECT_EQ(checkpoint_name(200), "step-000200");
  EXPECT_EQ(checkpoint_name(1234567), "step-1234567");
  EXPECT_EQ(checkpoint_step("step-000200"), 200);
  EXPECT_EQ(checkpoint_step("step-1234567"), 1234567);
  EXPECT_EQ(checkpoint_step("step-"), std::nullopt);
  EXPECT_EQ(checkpoint_step("step-12a"), std::nullopt);
  EXPECT_EQ(checkpoint_step("step--1"), std::nullopt);
  EXPECT_EQ(checkpoint_step("step-000200.tmp-Xa81Qz"), std::nullopt);
  EXPECT_EQ(checkpoint_step("latest"), std::nullopt);
}

// Newest by step number, not by name: "step-1000000" sorts before
// "step-999999" as text.
TEST(CheckpointRoot, FindLatestComparesStepNumbers) {
  ScratchDir root;
  save_empty(root.path(), checkpoint_name(999999));
  save_empty(root.path(), checkpoint_name(1000000));
  save_empty(root.path(), checkpoint_name(5));
  const auto latest = find_latest(root.path());
  ASSERT_TRUE(latest);
  EXPECT_EQ(*latest, root.path() / "step-1000000");
}

// --resume latest with a damaged newest checkpoint names it and the newest
// older one that verifies (issue 12); an intact newest one is picked.
TEST(CheckpointRoot, ADamagedNewestCheckpointNamesTheNewestIntactOne) {
  ScratchDir root;
  const std::vector<std::byte> bytes(10000, std::byte{7});
  const std::vector<BlobSource> blobs = {{.name = "b", .tier = "cpu", .content = std::span<const std::byte>(bytes)}};
  for (int step : {1, 2, 3}) save_checkpoint(root.path(), checkpoint_name(step), "{}", blobs);
  auto intact = find_latest_intact(root.path());
  ASSERT_TRUE(intact);
  EXPECT_EQ(*intact, root.path() / "step-000003");
  testing::flip_bit(root.path() / "step-000003" / "blobs.bin", 100);
  testing::flip_bit(root.path() / "step-000002" / "blobs.bin", 100);
  auto damaged = find_latest_intact(root.path());
  ASSERT_FALSE(damaged);
  const std::string error = core::to_string(damaged.error());
  EXPECT_NE(error.find("corrupt checkpoint"), std::string::npos) << error;
  EXPECT_NE(error.find("the newest intact one is " + (root.path() / "step-000001").string()), std::string::npos)
      << error;
  testing::flip_bit(root.path() / "step-000001" / "blobs.bin", 100);
  auto none = find_latest_intact(root.path());
  ASSERT_FALSE(none);
  EXPECT_NE(core::to_string(none.error()).find("no older checkpoint"), std::string::npos);
}

TEST(CheckpointRoot, MissingRootHasNoCheckpoint) {
  ScratchDir scratch;
  const auto latest = find_latest(scratch.path() / "never-created");
  ASSERT_TRUE(latest);
  EXPECT_EQ(*latest, std::nullopt);
}

// A crash after writing step 300's manifest but before its rename leaves a
// complete-looking temp dir; a step-named dir without manifest is not a
// checkpoint either. Neither counts, and the next save removes the temp
// dir (but not a directory it did not create).
TEST(CheckpointRoot, LeftoversAreIgnoredAndCleanedByTheNextSave) {
  ScratchDir root;
  save_empty(root.path(), "step-000100");
  save_empty(root.path(), "step-000300");
  std::filesystem::rename(root.path() / "step-000300", root.path() / "step-000300.tmp-Xa81Qz");
  std::filesystem::create_directory(root.path() / "step-000200");
  EXPECT_EQ(*find_latest(root.path()), root.path() / "step-000100");

  save_empty(root.path(), "step-000150");
  EXPECT_EQ(entries_of(root.path()), (std::vector<std::string>{"step-000100", "step-000150", "step-000200"}));
  EXPECT_EQ(*find_latest(root.path()), root.path() / "step-000150");
}

// Without RENAME_EXCHANGE, a replace moves the old checkpoint aside first;
// a crash right then leaves only the aside copy, which is put back.
TEST(CheckpointRoot, AsideCopyIsPutBackWhenItsReplacementNeverArrived) {
  ScratchDir root;
  save_empty(root.path(), "step-000100");
  save_empty(root.path(), "step-000200");
  std::filesystem::rename(root.path() / "step-000100", root.path() / "step-000100.old-Xa81Qz");
  std::filesystem::copy(root.path() / "step-000200", root.path() / "step-000200.old-Qz81Xa");
  remove_leftovers(root.path());
  EXPECT_EQ(entries_of(root.path()), (std::vector<std::string>{"step-000100", "step-000200"}));
}

// Issue 12: the clean-up took any *.tmp-* or *.old-* entry for its own. It
// deleted a user's notes.tmp-keep and photos.tmp-2023/ and renamed
// report.old-final to report. Now only NAME.tmp-XXXXXX / NAME.old-XXXXXX
// directories holding nothing but a checkpoint's files are touched, so a
// user's file inside a look-alike keeps it too.
TEST(CheckpointRoot, EntriesStowageDidNotCreateAreLeftAlone) {
  ScratchDir root;
  write_text(root.path() / "notes.tmp-keep", "notes");
  std::filesystem::create_directory(root.path() / "photos.tmp-2023");
  write_text(root.path() / "photos.tmp-2023" / "a.jpg", "jpeg");
  write_text(root.path() / "report.old-final", "report");
  std::filesystem::create_directory(root.path() / "step-000007.tmp-Ab12Cd");
  write_text(root.path() / "step-000007.tmp-Ab12Cd" / "mine.txt", "mine");
  std::filesystem::create_directory(root.path() / "step-000008.old-Ab12Cd");  // no manifest: not put back
  save_empty(root.path(), "step-000100");
  EXPECT_EQ(entries_of(root.path()),
            (std::vector<std::string>{"notes.tmp-keep", "photos.tmp-2023", "report.old-final",
                                      "step-000007.tmp-Ab12Cd", "step-000008.old-Ab12Cd", "step-000100"}));
  EXPECT_EQ(entries_of(root.path() / "photos.tmp-2023"), std::vector<std::string>{"a.jpg"});
  EXPECT_EQ(entries_of(root.path() / "step-000007.tmp-Ab12Cd"), std::vector<std::string>{"mine.txt"});
}

// Issue 12: a step-000001/ without a manifest is not a checkpoint, and a
// save of that name swapped it out and deleted it. Now it is refused and
// the directory keeps what it holds.
TEST(CheckpointRoot, ASaveNeverReplacesADirectoryThatIsNotACheckpoint) {
  ScratchDir root;
  std::filesystem::create_directory(root.path() / "step-000001");
  write_text(root.path() / "step-000001" / "photo.jpg", "jpeg");
  try {
    save_empty(root.path(), "step-000001");
    ADD_FAILURE() << "replaced a directory without a manifest";
  } catch (const CheckpointWriteError& e) {
    EXPECT_NE(std::string(e.what()).find("not a Stowage checkpoint"), std::string::npos) << e.what();
  }
  EXPECT_EQ(entries_of(root.path()), std::vector<std::string>{"step-000001"});
  EXPECT_EQ(entries_of(root.path() / "step-000001"), std::vector<std::string>{"photo.jpg"});
}

}  // namespace
}  // namespace stowage::executor
