// A scratch folder for one CLI test, removed with everything in it when the
// test ends; unique per process (ctest runs each test in its own).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace stowage::cli::testing {

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("stowage-cli-test-" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] std::string file(const char* name) const { return (path / name).string(); }
};

}  // namespace stowage::cli::testing
