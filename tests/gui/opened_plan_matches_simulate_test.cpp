// A plan file opened in the GUI without a trace is simulated there
// (simulate_plan); `stowage simulate PLAN --trace` simulates it in its own
// process. Both must show the same timeline, op for op, with the same
// warnings (otherData.warnings in the command's trace), and refuse the same
// plans: for every plan file in plans/ and bench/gpu/plans/, one that
// `stowage plan` writes for an offloaded 13B model, one that asks a T4 for
// bf16, and one whose recorded step time is not today's prediction (which
// both say, and only of it).
#include <gtest/gtest.h>

#include <QTemporaryDir>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/plan_file.h"
#include "core/profile_catalog.h"
#include "gui/planner_job.h"
#include "gui/trace_loader.h"
#include "stowage_process.h"
#include "tests/core/bundled_plan_files.h"

namespace stowage::gui {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> plans_to_open(const fs::path& scratch) {
  std::vector<fs::path> out = core::testing::bundled_plan_files();
  const fs::path offloaded = scratch / "llama-2-13b.yaml";
  EXPECT_EQ(testing::run_stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b", "-o",
                                  QString::fromStdString(offloaded.string())})
                .exit_code,
            0);
  out.push_back(offloaded);
  // Planned in fp16 on the T4, then asked for bf16, which it cannot run.
  const fs::path t4 = scratch / "t4-bf16.yaml";
  EXPECT_EQ(testing::run_stowage({"plan", "--machine", "cloud-t4-vm", "--model", "gpt2-medium", "--training",
                                  "fp16-adam", "-o", QString::fromStdString(t4.string())})
                .exit_code,
            0);
  std::ifstream in(t4);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t at = text.find("training: fp16-adam");
  EXPECT_NE(at, std::string::npos) << text;
  if (at != std::string::npos) text.replace(at, 19, "training: default");
  std::ofstream(t4) << text;
  out.push_back(t4);
  // Written by a Stowage that predicted 1 ms a step: both note the change.
  std::ifstream bundled(core::testing::bundled_plan_files().front());
  std::string recorded((std::istreambuf_iterator<char>(bundled)), std::istreambuf_iterator<char>());
  const size_t step = recorded.find("  step_time: ");
  EXPECT_NE(step, std::string::npos) << recorded;
  if (step != std::string::npos)
    recorded.replace(step, recorded.find('\n', step) - step, "  step_time: 0.001 s");
  const fs::path stale = scratch / "stale-record.yaml";
  std::ofstream(stale) << recorded;
  out.push_back(stale);
  return out;
}

TEST(OpenedPlanMatchesSimulate, ForEveryBundledPlan) {
  QTemporaryDir scratch;
  ASSERT_TRUE(scratch.isValid());
  const fs::path dir = scratch.path().toStdString();
  const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
  int compared = 0, refused = 0, warned = 0, noted = 0;
  for (const fs::path& plan_path : plans_to_open(dir)) {
    const std::string where = plan_path.filename().string();
    const fs::path trace = dir / (plan_path.stem().string() + ".trace.json");
    const testing::StowageRun command = testing::run_stowage(
        {"simulate", QString::fromStdString(plan_path.string()), "--trace", QString::fromStdString(trace.string())});
    auto plan = core::load_plan(plan_path, catalog.root());
    ASSERT_TRUE(plan.has_value()) << where << ": " << core::to_string(plan.error());
    const core::Result<TraceModel> opened = simulate_plan(*plan, catalog);
    if (command.exit_code == 65) {  // bad input: docs/cli.md
      ++refused;
      ASSERT_FALSE(opened.has_value()) << where << ": the command refused it:\n" << command.err;
      EXPECT_NE(command.err.find(core::to_string(opened.error())), std::string::npos)
          << where << "\ncommand: " << command.err << "GUI: " << core::to_string(opened.error());
      continue;
    }
    ASSERT_EQ(command.exit_code, 0) << where << '\n' << command.err;
    ASSERT_TRUE(opened.has_value()) << where << ": " << core::to_string(opened.error());
    const core::Result<TraceModel> simulated = load_trace(trace);
    ASSERT_TRUE(simulated.has_value()) << where << ": " << core::to_string(simulated.error());
    ++compared;
    EXPECT_EQ(opened->info.steps, simulated->info.steps) << where;
    EXPECT_EQ(opened->info.steady_step, simulated->info.steady_step) << where;
    EXPECT_EQ(opened->info.warnings, simulated->info.warnings) << where;
    warned += opened->info.warnings.empty() ? 0 : 1;
    const bool notes_the_record = std::ranges::any_of(opened->info.warnings, [](const std::string& w) {
      return w.starts_with("the plan records 1 ms a step (bound by ");
    });
    EXPECT_EQ(notes_the_record, where == "stale-record.yaml") << where;
    noted += notes_the_record ? 1 : 0;
    ASSERT_EQ(opened->ops.size(), simulated->ops.size()) << where;
    int differ = 0;
    for (size_t i = 0; i < opened->ops.size(); ++i) {
      const TraceOp& a = opened->ops[i];
      const TraceOp& b = simulated->ops[i];
      if (a.id != b.id || a.start != b.start || a.end != b.end || a.lane != b.lane) {
        if (++differ <= 3) {
          ADD_FAILURE() << where << ": op " << a.id << " [" << a.start << ", " << a.end << "] in the GUI, op " << b.id
                        << " [" << b.start << ", " << b.end << "] in the command's trace";
        }
      }
    }
    EXPECT_EQ(differ, 0) << where << ": ops that differ";
  }
  EXPECT_GE(compared, 12);  // plans/ has 2, bench/gpu/plans/ 9, and the 13B plan
  EXPECT_EQ(refused, 1);  // the T4 asked for bf16
  EXPECT_GT(warned, 0);   // the 13B plan writes to a drive at an assumed rate
  EXPECT_EQ(noted, 1);
  std::printf("[ same timelines ] %d plans compared op for op (%d with warnings), %d refused by both\n", compared,
              warned, refused);
}

}  // namespace
}  // namespace stowage::gui
