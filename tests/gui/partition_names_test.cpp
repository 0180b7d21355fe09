// The Plan table names its rows by partition, as op names do ("layers.0"),
// not 0, 1, 2, ...
#include "gui/partition_names.h"

#include <gtest/gtest.h>

#include "core/policy.h"
#include "gui/plan_table_model.h"
#include "gui_test_data.h"

namespace stowage::gui {
namespace {

core::PlanFile tiny_plan() {
  const core::TrainingSpec training = core::testing::must(core::testing::bundled().training("tiny"));
  const core::Workload w(core::testing::must(core::testing::bundled().model("tiny-gpt")),
                         training.sequence_length);
  return {.machine = "workstation-24gb-1nvme",
          .model = "tiny-gpt",
          .training = "tiny",
          .policy = core::policy_for(core::standard_placement(core::StandardPlacement::kZeroInfinity, 1), w,
                                     training)};
}

TEST(PartitionNames, OnePerPartitionAsOpNamesGiveThem) {
  const core::PlanFile plan = tiny_plan();
  const std::vector<std::string> names = partition_names(plan, core::testing::bundled());
  ASSERT_EQ(names.size(), plan.policy.partitions.size());
  EXPECT_NE(std::ranges::find(names, "layers.0"), names.end());
  PlanTableModel table;
  table.set_plan(plan, names);
  EXPECT_EQ(table.headerData(0, Qt::Vertical, Qt::DisplayRole).toString().toStdString(), names[0]);
}

TEST(PartitionNames, UnknownModelNumbersTheRows) {
  core::PlanFile plan = tiny_plan();
  plan.model = "no-such-model";
  EXPECT_TRUE(partition_names(plan, core::testing::bundled()).empty());
  PlanTableModel table;
  table.set_plan(plan, {});
  EXPECT_EQ(table.headerData(2, Qt::Vertical, Qt::DisplayRole).toString(), "2");
}

}  // namespace
}  // namespace stowage::gui
