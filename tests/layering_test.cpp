// Arrows point down (ARCHITECTURE.md): reads compile_commands.json for the
// translation units of each library, scans them and the headers beside them,
// and fails on an include that points up or reaches for Qt or CUDA where
// those must not be.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Rule {
  std::string folder;                  // "core"
  std::vector<std::string> forbidden;  // include prefixes that must not appear
};

const std::vector<std::string> kCuda = {"cuda", "cublas", "curand", "nccl", "thrust/", "cub/"};
const std::vector<std::string> kQtAndCuda = {"Q", "qt", "cuda", "cublas", "curand", "nccl", "thrust/", "cub/"};

std::vector<Rule> rules() {
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  return {
      {"core", with({"sim/", "planner/", "executor/", "gui/", "cli/"}, kQtAndCuda)},
      {"sim", with({"planner/", "executor/", "gui/", "cli/"}, kQtAndCuda)},
      {"planner", with({"executor/", "gui/", "cli/"}, kQtAndCuda)},
      {"executor", {"sim/", "planner/", "gui/", "cli/", "Q"}},
      {"gui", with({"executor/", "cli/"}, kCuda)},
      {"calibration", with({"planner/", "executor/", "probe/", "gui/", "cli/"}, kQtAndCuda)},
      {"probe", with({"sim/", "planner/", "calibration/", "gui/", "cli/"}, kQtAndCuda)},
  };
}

// Files to scan: translation units the build compiles, plus every header in
// the library folders (headers do not appear in compile_commands.json).
std::set<fs::path> files_of(const fs::path& source_root, const std::string& folder) {
  std::set<fs::path> files;
  std::ifstream in(fs::path(STOWAGE_BINARY_DIR) / "compile_commands.json");
  EXPECT_TRUE(in.good()) << "no compile_commands.json in " << STOWAGE_BINARY_DIR;
  if (!in) return files;
  const nlohmann::json commands = nlohmann::json::parse(in);
  const fs::path dir = source_root / folder;
  for (const auto& c : commands) {
    const fs::path file = fs::weakly_canonical(c["file"].get<std::string>());
    if (file.string().starts_with(dir.string() + "/")) files.insert(file);
  }
  if (fs::exists(dir)) {
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      const std::string ext = e.path().extension().string();
      if (ext == ".h" || ext == ".cuh") files.insert(fs::weakly_canonical(e.path()));
    }
  }
  return files;
}

std::vector<std::string> includes_of(const fs::path& file) {
  static const std::regex kInclude(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  std::vector<std::string> out;
  std::ifstream in(file);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, kInclude)) out.push_back(m[1]);
  }
  return out;
}

TEST(Layering, NoLibraryIncludesWhatSitsAboveIt) {
  const fs::path root = fs::weakly_canonical(STOWAGE_SOURCE_DIR);
  int scanned = 0;
  for (const Rule& rule : rules()) {
    for (const fs::path& file : files_of(root, rule.folder)) {
      ++scanned;
      for (const std::string& inc : includes_of(file)) {
        for (const std::string& bad : rule.forbidden) {
          EXPECT_FALSE(inc.starts_with(bad)) << file << " includes <" << inc << ">, forbidden in " << rule.folder << "/";
        }
      }
    }
  }
  EXPECT_GT(scanned, 20) << "too few files found: is compile_commands.json current?";
}

TEST(Layering, TheScannerSeesAForbiddenInclude) {
  // The check above must be able to fail: a line it would flag.
  const fs::path probe = fs::temp_directory_path() / "stowage-layering-probe.cpp";
  std::ofstream(probe) << "#include <QWidget>\n#include \"sim/engine.h\"\n";
  const std::vector<std::string> inc = includes_of(probe);
  fs::remove(probe);
  ASSERT_EQ(inc.size(), 2u);
  EXPECT_TRUE(inc[0].starts_with("Q"));
  EXPECT_TRUE(inc[1].starts_with("sim/"));
}

}  // namespace
