// `stowage plan`, `fit` and `whatif` as a user meets them: what they write,
// which profiles folder they work with, and what they say when nothing fits.
// Each test holds a defect of issue 11 or 12 that a user ran into.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "cli/exit_codes.h"
#include "tests/cli/run_stowage.h"
#include "tests/cli/temp_dir.h"

namespace stowage::cli {
namespace {

namespace fs = std::filesystem;

using testing::Outcome;
using testing::stowage;

using testing::TempDir;

// Runs in `dir` while in scope: the command's relative paths land there.
struct InFolder {
  fs::path before = fs::current_path();
  explicit InFolder(const fs::path& dir) { fs::current_path(dir); }
  ~InFolder() { fs::current_path(before); }
};

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

const fs::path kProfiles = STOWAGE_PROFILES_DIR;

// A host like the bundled desktop with only 4 GiB of RAM: less than the
// fixed 8 GiB host reserve, so nothing can fit.
void write_small_host(const TempDir& dir) {
  write(dir.path / "small-host.yaml",
        "format: stowage/host/v1\nlabel: 4 GiB host\nsource: test\ncpu_cores: 16\nsockets: 1\ndram: 4 GiB\n"
        "dram_bandwidth: 76.8 GB/s\npcie_lanes: 24\npcie_generation: 5\n");
}

// Issue 11: `plan` wrote ./plan.yaml when no -o was given, overwriting a
// user's file of that name.
TEST(CliPlan, WritesNoFileWithoutOutput) {
  const TempDir dir;
  write(dir.path / "plan.yaml", "mine\n");
  const InFolder in(dir.path);
  const Outcome o = stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "gpt2"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_EQ(o.out.find("plan written"), std::string::npos) << o.out;
  std::ifstream kept(dir.path / "plan.yaml");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "mine\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()), 1);
}

// Issue 11: `plan` and `fit` failed with --profiles DIR unless DIR held the
// one drive the advice suggests. A folder with only the machine's own parts
// and one model plans, fits and re-plans with an added drive.
TEST(CliPlan, WorksWithAProfilesFolderWithoutTheSpareDrive) {
  const TempDir dir;
  for (const char* part :
       {"gpus/rtx-4090.yaml", "hosts/desktop-ddr5-128gb.yaml", "nvme/samsung-990-pro-2tb.yaml",
        "machines/workstation-24gb-1nvme.yaml", "models/gpt2.yaml", "training/default.yaml"}) {
    fs::create_directories((dir.path / part).parent_path());
    fs::copy_file(kProfiles / part, dir.path / part);
  }
  const std::string root = dir.path.string(), plan = dir.file("plan.yaml");
  const Outcome p = stowage(
      {"--profiles", root, "plan", "--machine", "workstation-24gb-1nvme", "--model", "gpt2", "-o", plan});
  ASSERT_EQ(p.code, kExitOk) << p.err;
  EXPECT_NE(p.out.find("chosen: "), std::string::npos) << p.out;
  const Outcome f =
      stowage({"--profiles", root, "fit", "--machine", "workstation-24gb-1nvme", "--family", "gpt"});
  ASSERT_EQ(f.code, kExitOk) << f.err;
  EXPECT_NE(f.out.find(": gpt2"), std::string::npos) << f.out;
  const Outcome w = stowage({"--profiles", root, "whatif", plan, "--add-nvme", "1", "--json"});
  ASSERT_EQ(w.code, kExitOk) << w.err;
  EXPECT_FALSE(nlohmann::json::parse(w.out)["after"]["chosen"].is_null());
}

// Issue 12: with host RAM below the 8 GiB host reserve, plan and whatif said
// all-gpu fits: nothing allocates on the host in all-gpu, so no op crossed
// its capacity, though the reserve alone was over it from the start.
TEST(CliPlan, HostRamBelowTheReserveFitsNothing) {
  const TempDir dir;
  write_small_host(dir);
  write(dir.path / "small.yaml",
        "format: stowage/machine/v1\nlabel: small\nsource: test\ngpu: rtx-4090\ngpu_count: 1\n"
        "host: " +
            dir.file("small-host.yaml") + "\nnvme: samsung-990-pro-2tb\nnvme_count: 1\n");
  const Outcome o = stowage({"plan", "--machine", dir.file("small.yaml"), "--model", "gpt2", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_TRUE(j["chosen"].is_null()) << j["chosen"];
  ASSERT_EQ(j["baselines"][0]["name"], "all-gpu");
  EXPECT_FALSE(j["baselines"][0]["fits"].get<bool>());
  EXPECT_EQ(j["baselines"][0]["reason"], "cpu needs 8.59 GB of 4.295 GB");
  const Outcome text = stowage({"plan", "--machine", dir.file("small.yaml"), "--model", "gpt2"});
  EXPECT_NE(text.out.find("exceeded before any op runs"), std::string::npos) << text.out;

  const std::string plan = dir.file("plan.yaml");
  ASSERT_EQ(stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "gpt2", "-o", plan}).code,
            kExitOk);
  const Outcome w = stowage({"whatif", plan, "--ram", "4GiB", "--json"});
  ASSERT_EQ(w.code, kExitOk) << w.err;
  const nlohmann::json after = nlohmann::json::parse(w.out)["after"];
  EXPECT_TRUE(after["chosen"].is_null()) << after["chosen"];
  EXPECT_FALSE(after["baselines"][0]["fits"].get<bool>());
}

// Issue 11: the nothing-fits advice listed "add ... : still does not fit"
// under "Changes that would make it fit". On a machine with 4 GiB of RAM and
// no drive, more RAM makes GPT-2 fit and a drive alone does not: each is
// listed under its own heading.
TEST(CliPlan, AdviceThatDoesNotFitIsListedApart) {
  const TempDir dir;
  write_small_host(dir);
  write(dir.path / "no-drive.yaml",
        "format: stowage/machine/v1\nlabel: no drive\nsource: test\ngpu: rtx-4090\ngpu_count: 1\n"
        "host: " +
            dir.file("small-host.yaml") + "\nnvme_count: 0\n");
  const Outcome o = stowage({"plan", "--machine", dir.file("no-drive.yaml"), "--model", "gpt2"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const size_t fit = o.out.find("Changes that would make it fit (re-planned):\n");
  const size_t ram = o.out.find("  - add 12 GiB of CPU RAM (to 16 GiB): fits, step time");
  const size_t apart = o.out.find("Changes tried that are not enough on their own:\n");
  const size_t drive = o.out.find("  - add one Samsung 990 PRO 4 TB (4 TB): still does not fit (cpu needs");
  ASSERT_NE(fit, std::string::npos) << o.out;
  ASSERT_NE(apart, std::string::npos) << o.out;
  EXPECT_LT(fit, ram);
  EXPECT_LT(ram, apart);
  EXPECT_LT(apart, drive);
  EXPECT_NE(drive, std::string::npos) << o.out;
}

// Issue 11: bf16 training was accepted on GPUs without bf16 (V100, T4),
// costed at the fp16 rate and exported as bf16. It is refused where the
// training profile says bf16, naming the bundled fp16 profile as the fix.
TEST(CliPlan, Bf16OnAGpuWithoutBf16IsRefusedWithTheFix) {
  const Outcome o = stowage({"plan", "--machine", "cloud-t4-vm", "--model", "gpt2"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("default.yaml:8:12: precision: training 'default' is bf16, which NVIDIA T4 16GB (in "
                       "cloud-t4-vm) cannot run (fp16 training: --training fp16-adam)"),
            std::string::npos)
      << o.err;
  EXPECT_TRUE(o.out.empty());
  const Outcome fixed =
      stowage({"plan", "--machine", "cloud-t4-vm", "--model", "gpt2", "--training", "fp16-adam"});
  EXPECT_EQ(fixed.code, kExitOk) << fixed.err;
  for (const char* command : {"fit", "memory"}) {
    const Outcome other = command == std::string("fit")
                              ? stowage({"fit", "--machine", "dgx-2", "--family", "gpt"})
                              : stowage({"memory", "--machine", "dgx-2", "--model", "gpt2"});
    EXPECT_EQ(other.code, kExitBadInput) << command;
    EXPECT_NE(other.err.find("--training fp16-adam"), std::string::npos) << command << ": " << other.err;
  }
}

// Issue 11: a drive without a post-cache write rate was simulated at its
// burst rate. The workstation's 990 PRO is assumed at a quarter of it, and
// the plan says so in its text and in its JSON.
TEST(CliPlan, AnAssumedWriteRateIsAWarningInTextAndJson) {
  const Outcome text = stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "gpt2"});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_NE(
      text.out.find("\nwarning: Samsung 990 PRO 2 TB (samsung-990-pro-2tb) gives no write rate for after its "
                    "write cache fills; assumed 1.725 GB/s, 25% of its 6.9 GB/s burst rate"),
      std::string::npos)
      << text.out;
  const Outcome json = stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "gpt2", "--json"});
  ASSERT_EQ(json.code, kExitOk) << json.err;
  const nlohmann::json warnings = nlohmann::json::parse(json.out)["warnings"];
  ASSERT_EQ(warnings.size(), 1u) << warnings;
  EXPECT_NE(warnings[0].get<std::string>().find("assumed 1.725 GB/s"), std::string::npos) << warnings;
}

}  // namespace
}  // namespace stowage::cli
