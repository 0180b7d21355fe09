// Outputs never destroy what Stowage did not create (issue 12): a FIFO, a
// device or a directory at an output path is refused and left as it was, a
// symlink is followed and its target replaced, a 0600 file stays 0600.
#include "cli/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/exit_codes.h"
#include "tests/cli/run_stowage.h"

namespace stowage::cli {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "stowage-output-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  [[nodiscard]] fs::path at(const char* name) const { return dir_ / name; }
  static std::string read(const fs::path& p) {
    std::ostringstream s;
    s << std::ifstream(p).rdbuf();
    return s.str();
  }
  // Only the names given: no temporary file left behind.
  [[nodiscard]] size_t entries() const {
    return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }

  fs::path dir_;
};

TEST_F(OutputFileTest, WritesANewFile) {
  EXPECT_TRUE(write_file_atomically(at("a.json"), "{}\n").empty());
  EXPECT_EQ(read(at("a.json")), "{}\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, ReplacingAPrivateFileKeepsItPrivate) {
  std::ofstream(at("secret.yaml")) << "old";
  ASSERT_EQ(::chmod(at("secret.yaml").c_str(), 0600), 0);
  ASSERT_TRUE(write_file_atomically(at("secret.yaml"), "new").empty());
  struct stat st {};
  ASSERT_EQ(::stat(at("secret.yaml").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);  // before issue 12 it became 0644
  EXPECT_EQ(read(at("secret.yaml")), "new");
}

TEST_F(OutputFileTest, AFifoIsRefusedAndLeftAsItWas) {
  ASSERT_EQ(::mkfifo(at("pipe").c_str(), 0600), 0);
  const core::Diagnostics d = write_file_atomically(at("pipe"), "text");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].what.find("a FIFO, not a regular file"), std::string::npos) << d[0].to_string();
  EXPECT_TRUE(fs::is_fifo(at("pipe")));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, ADeviceIsRefused) {
  auto checked = check_output_path("/dev/null");
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error()[0].what.find("a character device"), std::string::npos);
}

TEST_F(OutputFileTest, ADirectoryIsRefusedAndKeepsItsContents) {
  fs::create_directory(at("photos"));
  std::ofstream(at("photos") / "a.jpg") << "jpeg";
  const core::Diagnostics d = write_file_atomically(at("photos"), "text");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].what.find("a directory"), std::string::npos);
  EXPECT_EQ(read(at("photos") / "a.jpg"), "jpeg");
}

TEST_F(OutputFileTest, ASymlinkIsFollowedAndItsTargetReplaced) {
  fs::create_directory(at("real"));
  std::ofstream(at("real") / "trace.json") << "old";
  fs::create_symlink("real/trace.json", at("link.json"));  // relative, against the link's folder
  ASSERT_TRUE(write_file_atomically(at("link.json"), "new").empty());
  EXPECT_TRUE(fs::is_symlink(at("link.json")));
  EXPECT_EQ(read(at("real") / "trace.json"), "new");
  EXPECT_EQ(entries(), 2u);  // real/ and link.json; no temporary file
}

TEST_F(OutputFileTest, ADanglingSymlinkCreatesItsTarget) {
  fs::create_symlink(at("made.json"), at("link.json"));
  ASSERT_TRUE(write_file_atomically(at("link.json"), "x").empty());
  EXPECT_TRUE(fs::is_symlink(at("link.json")));
  EXPECT_EQ(read(at("made.json")), "x");
}

TEST_F(OutputFileTest, ASymlinkToAFifoIsRefused) {
  ASSERT_EQ(::mkfifo(at("pipe").c_str(), 0600), 0);
  fs::create_symlink(at("pipe"), at("link"));
  const core::Diagnostics d = write_file_atomically(at("link"), "x");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].what.find("a FIFO"), std::string::npos);
  EXPECT_TRUE(fs::is_symlink(at("link")));
}

TEST_F(OutputFileTest, ASymlinkLoopIsAClearError) {
  fs::create_symlink(at("b"), at("a"));
  fs::create_symlink(at("a"), at("b"));
  const core::Diagnostics d = write_file_atomically(at("a"), "x");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].what.find("symbolic links"), std::string::npos);
}

TEST_F(OutputFileTest, AMissingFolderNamesIt) {
  auto checked = check_output_path(at("missing") / "t.json");
  ASSERT_FALSE(checked);
  EXPECT_NE(checked.error()[0].what.find("missing"), std::string::npos);
}

// End to end: `simulate --trace FIFO` exits 73 and the FIFO is still there
// (before issue 12 it was replaced by a regular file).
TEST_F(OutputFileTest, SimulateRefusesAFifoTraceWithCannotWrite) {
  ASSERT_EQ(::mkfifo(at("trace.json").c_str(), 0600), 0);
  const testing::Outcome o =
      testing::stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt",
                        "--placement", "all-gpu", "--trace", at("trace.json").string()});
  EXPECT_EQ(o.code, kExitCannotWrite) << o.err;
  EXPECT_NE(o.err.find("a FIFO"), std::string::npos) << o.err;
  EXPECT_TRUE(fs::is_fifo(at("trace.json")));
}

// A bad --save-plan is found before anything is written: no trace is left
// beside the error.
TEST_F(OutputFileTest, SimulateChecksEveryOutputBeforeWritingAny) {
  const testing::Outcome o = testing::stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model",
                                               "tiny-gpt", "--placement", "all-gpu", "--trace",
                                               at("trace.json").string(), "--save-plan", dir_.string()});
  EXPECT_EQ(o.code, kExitCannotWrite) << o.err;
  EXPECT_NE(o.err.find("a directory"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(at("trace.json")));
}

}  // namespace
}  // namespace stowage::cli
