// The plan files users and the GPU check open (plans/, bench/gpu/plans/)
// record what Stowage predicts for them (`predicted:`), and the GUI's Plan
// panel shows that record beside the timeline it simulates afresh. Each
// record must be what `stowage simulate` of the plan predicts now: when the
// cost model moves, scripts/refresh-plan-predictions brings them along.
// (On 2026-12-07 plans/tiny-gpt-nvme.yaml recorded 12.27 ms a step, bound
// by nvme.read, where simulating it gave 31.32 ms, bound by nvme.write.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "tests/cli/run_stowage.h"
#include "tests/cli/temp_dir.h"
#include "tests/core/bundled_plan_files.h"

namespace stowage::cli {
namespace {

namespace fs = std::filesystem;

// The plan's `predicted:` block, the last of a plan file (docs/formats/plan.md).
std::string predicted_block(const fs::path& path) {
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("\npredicted:\n");
  return at == std::string::npos ? "" : text.substr(at + 1);
}

TEST(BundledPlans, RecordWhatSimulateNowPredicts) {
  const testing::TempDir dir;
  int checked = 0;
  for (const fs::path& plan : core::testing::bundled_plan_files()) {
    const std::string saved = dir.file(plan.filename().string().c_str());
    const testing::Outcome o = testing::stowage({"simulate", plan.string(), "--save-plan", saved});
    ASSERT_EQ(o.code, kExitOk) << plan << '\n' << o.err;
    const std::string recorded = predicted_block(plan);
    ASSERT_FALSE(recorded.empty()) << plan << " records no prediction";
    ++checked;
    EXPECT_EQ(recorded, predicted_block(saved))
        << plan << ": the recorded prediction (first) is not what simulate predicts now (second); "
        << "scripts/refresh-plan-predictions brings it up to date";
  }
  EXPECT_GE(checked, 11);  // plans/ has 2, bench/gpu/plans/ 9
}

}  // namespace
}  // namespace stowage::cli
