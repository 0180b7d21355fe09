// read_text_file refuses what is not a regular file, and what is larger
// than its limit, before reading (issue 12: `--data /dev/zero` grew without
// bound, a FIFO blocked forever).
#include "core/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace stowage::core {
namespace {

namespace fs = std::filesystem;

class TextFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "stowage-text-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The message of the one diagnostic read_text_file gave, "" on success.
  static std::string refusal(const fs::path& path, Bytes max = kMaxTextFileBytes) {
    auto text = read_text_file(path, max);
    if (text) return "";
    EXPECT_EQ(text.error().size(), 1u);
    return text.error().front().to_string();
  }

  fs::path dir_;
};

TEST_F(TextFileTest, ReadsARegularFile) {
  std::ofstream(dir_ / "a.yaml") << "format: x\n";
  auto text = read_text_file(dir_ / "a.yaml");
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "format: x\n");
}

// Without O_NONBLOCK and the check, this test would hang: no writer comes.
TEST_F(TextFileTest, AFifoIsRefusedWithoutWaitingForAWriter) {
  ASSERT_EQ(::mkfifo((dir_ / "pipe").c_str(), 0600), 0);
  EXPECT_NE(refusal(dir_ / "pipe").find("it is a FIFO"), std::string::npos);
}

TEST_F(TextFileTest, DevZeroIsRefusedBeforeReading) {
  EXPECT_NE(refusal("/dev/zero").find("it is a character device"), std::string::npos);
}

TEST_F(TextFileTest, ADirectoryIsRefused) {
  EXPECT_NE(refusal(dir_).find("it is a directory"), std::string::npos);
}

TEST_F(TextFileTest, AFileOverTheLimitIsRefusedWithBothSizes) {
  std::ofstream(dir_ / "big") << std::string(2000, 'x');
  const std::string why = refusal(dir_ / "big", Bytes(1000));
  EXPECT_NE(why.find("it has 2000 bytes, more than the 1000"), std::string::npos) << why;
}

TEST_F(TextFileTest, AMissingFileSaysSo) {
  EXPECT_NE(refusal(dir_ / "missing").find("No such file"), std::string::npos);
}

}  // namespace
}  // namespace stowage::core
