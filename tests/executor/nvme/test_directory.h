// A fresh directory per test under the test's working directory (the build
// tree: a real disk, where /tmp may be tmpfs), removed afterwards. Named
// after the test and the process, because ctest runs each test as its own
// process, possibly in parallel.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

#include "executor/nvme/direct_file.h"
#include "executor/nvme/io_error.h"

namespace stowage::executor {

class TestDirectory {
 public:
  TestDirectory() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::current_path() / "nvme_test_data" /
            (std::string(info->test_suite_name()) + "." + info->name() + "." + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TestDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TestDirectory(const TestDirectory&) = delete;
  TestDirectory& operator=(const TestDirectory&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  // Why this directory's filesystem cannot run the O_DIRECT tests, or
  // nothing when it can.
  [[nodiscard]] std::optional<std::string> direct_io_refused() const { return direct_io_refused_in(path_); }

  static std::optional<std::string> direct_io_refused_in(const std::filesystem::path& dir) {
    try {
      const DirectFile probe(dir / "probe", DirectIo::kRequired);
    } catch (const IoError& e) {
      if (e.kind() == IoErrorKind::kDirectIoUnsupported) return e.what();
      throw;
    }
    std::filesystem::remove(dir / "probe");
    return std::nullopt;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace stowage::executor
