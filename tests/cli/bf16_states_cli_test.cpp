// `--allow-bf16-states` as a user meets it (issue 16, item 3): the plan says
// it keeps Adam's moments in bf16 and writes the field, and exporting that
// plan to DeepSpeed is refused where the plan file says it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli/exit_codes.h"
#include "tests/cli/run_stowage.h"
#include "tests/cli/temp_dir.h"

namespace stowage::cli {
namespace {

using testing::Outcome;
using testing::stowage;
using testing::TempDir;

TEST(CliBf16States, PlanSaysItAndExportRefusesIt) {
  const TempDir dir;
  const std::string plan = (dir.path / "plan.yaml").string();
  const Outcome o = stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b",
                             "--allow-bf16-states", "-o", plan});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("bf16 optimizer states (allowed by --allow-bf16-states)"), std::string::npos) << o.out;
  std::ifstream in(plan);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(text.find("  optimizer_state_precision: bf16\n"), std::string::npos) << text;
  const Outcome e = stowage({"export", "deepspeed", plan});
  EXPECT_EQ(e.code, kExitBadInput) << e.out;
  EXPECT_NE(e.err.find(plan + ":"), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("policy.optimizer_state_precision: bf16 moments beside fp32 master weights cannot be "
                       "expressed in DeepSpeed"),
            std::string::npos)
      << e.err;
}

}  // namespace
}  // namespace stowage::cli
