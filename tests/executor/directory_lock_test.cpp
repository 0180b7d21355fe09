// DirectoryLock (issue 12): a second run on a directory is refused at once,
// naming the holder's pid; a killed holder leaves no stale claim; a
// `stowage.lock` that is not Stowage's is never overwritten.
#include "executor/directory_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace stowage::executor {
namespace {

namespace fs = std::filesystem;

class DirectoryLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "stowage-lock-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A child process that takes the lock of dir_, says so on a pipe, and
  // then holds it until killed. Returns its pid.
  pid_t holder() const {
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ready[0]);
      auto lock = DirectoryLock::acquire(dir_, "checkpoint directory");
      const char ok = lock ? 'y' : 'n';
      if (::write(ready[1], &ok, 1) != 1) std::_Exit(1);
      for (;;) ::pause();
    }
    ::close(ready[1]);
    char ok = 0;
    EXPECT_EQ(::read(ready[0], &ok, 1), 1);
    EXPECT_EQ(ok, 'y');
    ::close(ready[0]);
    return pid;
  }

  static void kill_and_wait(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }

  fs::path dir_;
};

TEST_F(DirectoryLockTest, ASecondRunIsRefusedAtOnceNamingTheFirst) {
  const pid_t first = holder();
  auto second = DirectoryLock::acquire(dir_, "checkpoint directory");
  kill_and_wait(first);
  ASSERT_FALSE(second);
  const std::string what = second.error().front().to_string();
  EXPECT_NE(what.find("in use by another stowage run (process " + std::to_string(first) + ")"),
            std::string::npos)
      << what;
}

// flock dies with its process: a SIGKILLed run's lock file is taken over.
TEST_F(DirectoryLockTest, AKilledHolderLeavesNoStaleClaim) {
  kill_and_wait(holder());
  EXPECT_TRUE(fs::exists(dir_ / kLockFileName));  // left behind by the kill
  auto lock = DirectoryLock::acquire(dir_, "checkpoint directory");
  ASSERT_TRUE(lock) << core::to_string(lock.error());
}

TEST_F(DirectoryLockTest, ReleasingRemovesTheLockFile) {
  {
    auto lock = DirectoryLock::acquire(dir_ / "new", "NVMe directory");
    ASSERT_TRUE(lock);
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "new"));
}

TEST_F(DirectoryLockTest, AUsersFileOfThatNameIsLeftAlone) {
  std::ofstream(dir_ / kLockFileName) << "my notes\n";
  auto lock = DirectoryLock::acquire(dir_, "checkpoint directory");
  ASSERT_FALSE(lock);
  EXPECT_NE(lock.error().front().what.find("not a Stowage lock file"), std::string::npos);
  std::ostringstream text;
  text << std::ifstream(dir_ / kLockFileName).rdbuf();
  EXPECT_EQ(text.str(), "my notes\n");
}

}  // namespace
}  // namespace stowage::executor
