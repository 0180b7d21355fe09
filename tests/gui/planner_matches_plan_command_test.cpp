// The planner panel and `stowage plan` are two front ends of one planner:
// for every bundled machine, a model that fits on the GPU and one that must
// be offloaded, in bf16 and in fp16, the panel's job (run_planner) and the
// command, run as its own process (`stowage plan --json`), choose the same
// plan, predict the same step times for it and every baseline, warn of the
// same things, and refuse the same inputs. Each computed its inputs on its
// own until 2026-12-07, and the panel showed the README's own example at
// half the command's step time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/profile_catalog.h"
#include "gui/planner_job.h"
#include "stowage_process.h"

namespace stowage::gui {
namespace {

using nlohmann::json;

testing::StowageRun plan_command(const std::string& machine, const std::string& model, const std::string& training) {
  return testing::run_stowage({"plan", "--machine", QString::fromStdString(machine), "--model",
                               QString::fromStdString(model), "--training", QString::fromStdString(training),
                               "--json"});
}

// A row of the panel's table and the command's JSON: name, fits, step time.
void expect_same_row(const planner::Evaluation& panel, const json& command, const std::string& where) {
  EXPECT_EQ(panel.candidate.name, command.at("name").get<std::string>()) << where;
  EXPECT_EQ(panel.fits(), command.at("fits").get<bool>()) << where << ' ' << panel.candidate.name;
  EXPECT_EQ(panel.summary.has_value(), command.contains("step_time_s")) << where << ' ' << panel.candidate.name;
  if (panel.summary && command.contains("step_time_s")) {
    EXPECT_DOUBLE_EQ(panel.step_seconds(), command.at("step_time_s").get<double>())
        << where << ' ' << panel.candidate.name;
  }
}

TEST(PlannerMatchesPlanCommand, OnEveryBundledMachine) {
  const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
  const std::vector<std::string> machines = catalog.names(core::ProfileKind::kMachine);
  ASSERT_GE(machines.size(), 6u);
  int refused = 0, planned = 0, warned = 0;
  for (const std::string& machine : machines) {
    for (const std::string model : {"gpt2-medium", "llama-2-13b"}) {
      for (const std::string training : {"default", "fp16-adam"}) {
        const std::string where = machine + " / " + model + " / " + training;
        const testing::StowageRun command = plan_command(machine, model, training);
        std::stop_source never;
        const core::Result<PlannerOutcome> panel =
            run_planner({.machine = machine, .model = model, .training = training, .profiles = STOWAGE_PROFILES_DIR},
                        never.get_token(), [](const PlannerProgressReport&) {});
        if (command.exit_code == 65) {  // bad input: docs/cli.md
          ++refused;
          ASSERT_FALSE(panel.has_value()) << where << ": the command refused it:\n" << command.err;
          EXPECT_NE(command.err.find(core::to_string(panel.error())), std::string::npos)
              << where << "\ncommand: " << command.err << "panel: " << core::to_string(panel.error());
          continue;
        }
        ASSERT_EQ(command.exit_code, 0) << where << '\n' << command.err;
        ASSERT_TRUE(panel.has_value()) << where << ": " << core::to_string(panel.error());
        ++planned;
        const json said = json::parse(command.out);
        const bool chosen = said.contains("chosen") && !said.at("chosen").is_null();
        ASSERT_EQ(panel->result.best.has_value(), chosen) << where;
        if (panel->result.best) expect_same_row(*panel->result.best, said.at("chosen"), where);
        ASSERT_EQ(panel->result.baselines.size(), said.at("baselines").size()) << where;
        for (size_t i = 0; i < panel->result.baselines.size(); ++i) {
          expect_same_row(panel->result.baselines[i], said.at("baselines")[i], where);
        }
        EXPECT_EQ(panel->warnings, said.at("warnings").get<std::vector<std::string>>()) << where;
        warned += panel->warnings.empty() ? 0 : 1;
      }
    }
  }
  // The cases that make the test able to fail: refusals, plans, warnings.
  EXPECT_GT(refused, 0);
  EXPECT_GT(planned, 0);
  EXPECT_GT(warned, 0);
  std::printf("[ same plans ] %d planned (%d with warnings), %d refused by both\n", planned, warned, refused);
}

}  // namespace
}  // namespace stowage::gui
