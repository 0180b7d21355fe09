// read_text_file refuses what is not a regular file, and what is larger
// than its limit, before reading (issue 12: `--data /dev/zero` grew without
// bound, a FIFO blocked forever).
#include "core/text_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/units.h"

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

constexpr InputKind kAllKinds[] = {InputKind::kProfile, InputKind::kTrace, InputKind::kManifest,
                                   InputKind::kCorpus, InputKind::kWeights};

// Sets an environment variable for the scope, and unsets it after.
struct ScopedVariable {
  ScopedVariable(const std::string& name, const char* value) : name_(name) { ::setenv(name.c_str(), value, 1); }
  ~ScopedVariable() { ::unsetenv(name_.c_str()); }
  std::string name_;
};

// Issue 12 item 4: the limits were fixed. Each kind's variable moves its
// limit both ways, and a file over it is refused naming the variable.
TEST_F(TextFileTest, EachKindsLimitIsSetByItsVariable) {
  std::ofstream(dir_ / "input") << std::string(2000, 'x');
  for (const InputKind kind : kAllKinds) {
    const InputLimit& limit = input_limit_of(kind);
    const std::string variable(limit.variable);
    EXPECT_EQ(input_limit(kind).value(), limit.default_max) << variable;
    EXPECT_TRUE(read_input_file(dir_ / "input", kind)) << variable;
    {
      const ScopedVariable lower(variable, "1000 B");
      EXPECT_EQ(input_limit(kind).value(), Bytes(1000));
      auto refused = read_input_file(dir_ / "input", kind);
      ASSERT_FALSE(refused) << variable;
      const std::string why = to_string(refused.error());
      EXPECT_NE(why.find("it has 2000 bytes, more than the 1000"), std::string::npos) << why;
      EXPECT_NE(why.find("set " + variable + " to allow more"), std::string::npos) << why;
      EXPECT_NE(why.find(std::string(limit.what)), std::string::npos) << why;
    }
    const ScopedVariable raise(variable, "2 KiB");
    EXPECT_TRUE(read_input_file(dir_ / "input", kind)) << variable;
  }
}

TEST_F(TextFileTest, AVariableThatIsNotASizeIsRefusedNamingIt) {
  std::ofstream(dir_ / "input") << "x";
  const ScopedVariable wrong("STOWAGE_MAX_TRACE_BYTES", "lots");
  auto refused = read_input_file(dir_ / "input", InputKind::kTrace);
  ASSERT_FALSE(refused);
  EXPECT_NE(to_string(refused.error()).find("environment variable STOWAGE_MAX_TRACE_BYTES='lots' is not a size"),
            std::string::npos)
      << to_string(refused.error());
}

// The README's table of limits names every variable with its default.
TEST_F(TextFileTest, TheReadmeListsEveryLimit) {
  std::ifstream in(STOWAGE_TEST_DATA_DIR "/../../README.md");
  std::stringstream text;
  text << in.rdbuf();
  for (const InputKind kind : kAllKinds) {
    const InputLimit& limit = input_limit_of(kind);
    const std::string row =
        " | " + format_bytes(limit.default_max, Prefix::kBinary) + " | `" + std::string(limit.variable) + "` |";
    EXPECT_NE(text.str().find(row), std::string::npos) << row;
  }
}

}  // namespace
}  // namespace stowage::core
