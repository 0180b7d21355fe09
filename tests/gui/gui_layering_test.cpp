// gui/ sits beside cli/ and above core/, sim/ and planner/ (ARCHITECTURE.md):
// it may include those and Qt, never executor/ or cli/. The project's
// layering test has no rule for gui/ yet, so this one checks it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;

TEST(GuiLayering, IncludesOnlyCoreSimPlannerGuiQtAndTheStandardLibrary) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*([<"])([^>"]+)[>"])");
  int scanned = 0;
  for (const auto& entry : fs::directory_iterator(STOWAGE_GUI_SOURCE_DIR)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cpp") continue;
    ++scanned;
    std::ifstream in(entry.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (!std::regex_search(line, m, kInclude)) continue;
      const std::string inc = m[2];
      EXPECT_FALSE(inc.starts_with("executor/") || inc.starts_with("cli/"))
          << entry.path() << " includes " << inc << ": gui/ may use core/, sim/ and planner/ only";
    }
  }
  EXPECT_GT(scanned, 20);
}

}  // namespace
