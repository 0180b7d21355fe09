// Opening a plan in the GUI goes through core::load_plan with the catalog's
// profile folder, the one rule every command that reads a plan follows
// (issue 12 item 4): a reference outside the plan's folder and the profile
// folder is refused at its line, unread.
#include "gui/file_loader.h"

#include <gtest/gtest.h>

#include <QTemporaryDir>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace stowage::gui {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPlan =
    "format: stowage/plan/v1\n"
    "machine: workstation-24gb-1nvme\n"
    "model: MODEL\n"
    "training: tiny\n"
    "policy:\n"
    "  zero_stage: 0\n"
    "  sub_group_params: 0\n"
    "  nvme_prefetch_depth: 1\n"
    "  h2d_prefetch_depth: 1\n"
    "  staging_buffers: 2\n"
    "  staging_buffer_size: 0 B\n"
    "  pinned_memory: true\n"
    "  nvme_block_size: 1 MiB\n"
    "  nvme_queue_depth: 8\n"
    "  delayed_update: false\n"
    "  activation_checkpointing: false\n"
    "  micro_batch: 0\n"
    "  gradient_accumulation: 0\n"
    "  partitions: []\n";

std::string plan_naming(const std::string& model) {
  std::string text = kPlan;
  return text.replace(text.find("MODEL"), 5, model);
}

TEST(FileLoader, APlanNamingAFileOutsideItsFolderIsRefusedAtItsLine) {
  ::unsetenv("STOWAGE_ALLOW_PROFILE_PATHS");
  QTemporaryDir dir;
  const fs::path root = dir.path().toStdString();
  fs::create_directories(root / "sent");
  std::ofstream(root / "secret.yaml") << "root:$6$hash-of-a-password:19000:0:99999:7:::\n";
  const fs::path plan = root / "sent" / "p.yaml";
  std::ofstream(plan) << plan_naming("../secret.yaml");
  const core::ProfileCatalog catalog(STOWAGE_PROFILES_DIR);
  auto r = load_file(plan, catalog);
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 1u) << core::to_string(r.error());
  EXPECT_EQ(r.error()[0].where.file, plan.string());
  EXPECT_EQ(r.error()[0].where.line, 3);
  EXPECT_EQ(r.error()[0].where.column, 8);  // after "model: "
  EXPECT_TRUE(r.error()[0].what.starts_with("model: the reference '../secret.yaml' lies outside")) << r.error()[0].what;
  EXPECT_EQ(core::to_string(r.error()).find("hash-of-a-password"), std::string::npos);

  std::ofstream(plan) << plan_naming("tiny-gpt");  // a bundled name opens
  auto named = load_file(plan, catalog);
  ASSERT_TRUE(named) << core::to_string(named.error());
  EXPECT_EQ(named->plan->model, "tiny-gpt");
}

}  // namespace
}  // namespace stowage::gui
