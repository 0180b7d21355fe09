// `stowage simulate PLAN.yaml` on plans a user writes by hand: the edge
// values the plan format allows, references to profiles beside the plan, and
// what it refuses. Each test holds a defect of issue 11.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// The tiny GPT's ZeRO-Infinity plan (states on NVMe, parameters in RAM), as
// `simulate --save-plan` writes it: the text the tests edit.
std::string tiny_infinity_plan(const TempDir& dir) {
  const std::string path = dir.file("infinity.yaml");
  const Outcome o = stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt",
                             "--training", "tiny", "--placement", "zero-infinity", "--save-plan", path});
  EXPECT_EQ(o.code, kExitOk) << o.err;
  return read(path);
}

// Issue 11: a prefetch depth of 0, which the plan format allows, crashed
// lowering (an index one past the ops lowered so far).
TEST(CliSimulate, PrefetchDepthZeroSimulates) {
  const TempDir dir;
  const std::string plan = tiny_infinity_plan(dir);
  for (const char* key : {"h2d_prefetch_depth", "nvme_prefetch_depth"}) {
    const std::string path = dir.file("depth0.yaml");
    std::ofstream(path) << replaced(plan, std::string(key) + ": 2", std::string(key) + ": 0");
    const Outcome o = stowage({"simulate", path, "--json"});
    ASSERT_EQ(o.code, kExitOk) << key << ": " << o.err;
    EXPECT_GT(nlohmann::json::parse(o.out)["step_time_s"].get<double>(), 0) << key;
  }
}

// Issue 11: `gradients: nvme` was accepted and the gradients then sat in CPU
// RAM, never freed. It is refused at the line that says it.
TEST(CliSimulate, GradientsOnNvmeAreRefusedWithTheirLocation) {
  const TempDir dir;
  const std::string path = dir.file("grads.yaml");
  std::ofstream(path) << replaced(tiny_infinity_plan(dir), "gradients: cpu}", "gradients: nvme}");
  const Outcome o = stowage({"simulate", path});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(path + ":"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("policy.partitions[0].gradients: gradients on nvme are not supported"),
            std::string::npos)
      << o.err;
}

// The 1-based line of text on which `needle` first appears, and its column.
std::pair<int, int> line_and_column(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  const std::string before = text.substr(0, at);
  const size_t newline = before.rfind('\n');
  return {static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1,
          static_cast<int>(newline == std::string::npos ? at + 1 : at - newline)};
}

// Issue 12 item 7: "the policy has 6 partitions but ... splits into 42"
// named no file. It names the plan, the line and column of its partitions
// list, and the field.
TEST(CliSimulate, APartitionCountMismatchNamesThePlansPartitionsList) {
  const TempDir dir;
  std::string plan = tiny_infinity_plan(dir);
  const size_t last = plan.rfind("    - {");
  ASSERT_NE(last, std::string::npos);
  const size_t count = static_cast<size_t>(std::count(plan.begin(), plan.end(), '{'));
  plan.erase(last, plan.find('\n', last) + 1 - last);
  const std::string path = dir.file("short.yaml");
  std::ofstream(path) << plan;
  const auto [line, column] = line_and_column(plan, "- {");
  const Outcome o = stowage({"simulate", path});
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  EXPECT_NE(o.err.find(path + ":" + std::to_string(line) + ":" + std::to_string(column) +
                       ": policy.partitions: the policy has " + std::to_string(count - 1) +
                       " partitions but tiny-gpt splits into " + std::to_string(count)),
            std::string::npos)
      << o.err;
}

// Issue 12: gradient_accumulation: 1000000, which the plan format allows,
// ended in "internal error: std::bad_alloc" (exit 70). Lowering refuses it
// before allocating, at the plan's line.
TEST(CliSimulate, TooManyMicroStepsAreRefusedAtTheirLine) {
  const TempDir dir;
  std::string plan = tiny_infinity_plan(dir);
  const size_t at = plan.find("gradient_accumulation: ");
  ASSERT_NE(at, std::string::npos);
  plan.replace(at, plan.find('\n', at) - at, "gradient_accumulation: 1000000");
  const std::string path = dir.file("huge.yaml");
  std::ofstream(path) << plan;
  const auto [line, column] = line_and_column(plan, "gradient_accumulation: 1000000");
  const Outcome o = stowage({"simulate", path});
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  EXPECT_NE(o.err.find(path + ":" + std::to_string(line) + ":" + std::to_string(column + 23) +
                       ": policy.gradient_accumulation: 1000000 micro-steps per step (at most 4096"),
            std::string::npos)
      << o.err;
}

// Issue 12 item 7: "a GPU optimizer needs its states and gradients on the
// GPU" named no partition. It names the partition's optimizer field.
TEST(CliSimulate, AGpuOptimizerOnOffloadedStatesNamesThePartition) {
  const TempDir dir;
  const std::string plan = replaced(tiny_infinity_plan(dir), "optimizer: cpu", "optimizer: gpu");
  const std::string path = dir.file("gpu-optimizer.yaml");
  std::ofstream(path) << plan;
  const auto [line, column] = line_and_column(plan, "optimizer: gpu");
  const Outcome o = stowage({"simulate", path});
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  EXPECT_NE(o.err.find(path + ":" + std::to_string(line) + ":" + std::to_string(column + 11) +
                       ": policy.partitions[0].optimizer: a GPU optimizer needs its states and gradients on the GPU"),
            std::string::npos)
      << o.err;
}

// Issue 11: a plan's `training: ./t.yaml` was looked up in the working
// directory. It names the file beside the plan, from wherever the command
// runs; and a plan saved elsewhere names it so that it is found again. Issue
// 12 item 4: a plan saved in a folder below (saved/) names `../t.yaml`,
// outside its own folder, which reading refuses unless
// STOWAGE_ALLOW_PROFILE_PATHS=1; the save says so.
TEST(CliSimulate, ProfilesBesideThePlanAreFoundFromAnyFolder) {
  const TempDir dir;
  fs::create_directories(dir.path / "plans" / "saved");
  fs::copy_file(fs::path(STOWAGE_PROFILES_DIR) / "training" / "tiny.yaml", dir.path / "plans" / "t.yaml");
  const std::string plan = (dir.path / "plans" / "p.yaml").string();
  std::ofstream(plan) << replaced(tiny_infinity_plan(dir), "training: tiny", "training: ./t.yaml");
  const Outcome o = stowage({"simulate", plan, "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;

  const std::string saved = (dir.path / "plans" / "saved" / "again.yaml").string();
  const Outcome save = stowage({"simulate", plan, "--save-plan", saved});
  ASSERT_EQ(save.code, kExitOk) << save.err;
  EXPECT_NE(read(saved).find("training: ../t.yaml\n"), std::string::npos) << read(saved);
  EXPECT_NE(save.out.find("warning: training: '../t.yaml' lies outside the folder of " + saved +
                          " and the profile folder, so reading that plan back needs the file copied beside it "
                          "or STOWAGE_ALLOW_PROFILE_PATHS=1"),
            std::string::npos)
      << save.out;
  const Outcome refused = stowage({"simulate", saved, "--json"});
  EXPECT_EQ(refused.code, kExitBadInput);
  EXPECT_TRUE(refused.err.starts_with("error: " + saved + ":4:11: training: the reference '../t.yaml' lies outside"))
      << refused.err;
  ::setenv("STOWAGE_ALLOW_PROFILE_PATHS", "1", 1);
  const Outcome again = stowage({"simulate", saved, "--json"});
  ::unsetenv("STOWAGE_ALLOW_PROFILE_PATHS");
  ASSERT_EQ(again.code, kExitOk) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["step_time_s"], nlohmann::json::parse(o.out)["step_time_s"]);
}

// Issue 12 item 4: a plan's `machine:`, `model:` and `training:` were
// followed anywhere. Every command that reads a plan (simulate, run, export,
// whatif) goes through core::load_plan, so each refuses a reference outside
// the plan's folder and the profile folder at the plan's line, reading
// nothing of the file named.
TEST(CliSimulate, EveryCommandThatReadsAPlanRefusesAReferenceOutsideItsFolder) {
  const TempDir dir;
  fs::create_directories(dir.path / "sent");
  std::ofstream(dir.path / "secret.yaml") << "root:$6$hash-of-a-password:19000:0:99999:7:::\n";
  const std::string plan = (dir.path / "sent" / "p.yaml").string();
  std::ofstream(plan) << replaced(tiny_infinity_plan(dir), "model: tiny-gpt", "model: ../secret.yaml");
  const std::string at = plan + ":3:8: model: the reference '../secret.yaml' lies outside the profile folder";
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"simulate", plan}, {"run", plan, "--steps", "1"},
        {"export", "deepspeed", plan, "-o", dir.file("ds.json")}, {"whatif", plan, "--ram", "256GiB"}}) {
    const Outcome o = stowage(command);
    EXPECT_EQ(o.code, kExitBadInput) << command[0] << ": " << o.err;
    EXPECT_NE(o.err.find(at), std::string::npos) << command[0] << ": " << o.err;
    EXPECT_EQ(o.err.find("hash-of-a-password"), std::string::npos) << o.err;
  }
  EXPECT_FALSE(fs::exists(dir.file("ds.json")));
}

// A plan saved beside its own profile files reads back without the variable:
// what the sweep and the run tests do with the profiles of tests/data.
TEST(CliSimulate, APlanSavedBesideItsProfilesReadsBackWithoutAWarning) {
  const TempDir dir;
  fs::copy_file(fs::path(STOWAGE_PROFILES_DIR) / "training" / "tiny.yaml", dir.path / "t.yaml");
  const std::string saved = dir.file("p.yaml");
  const Outcome save = stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt",
                                "--training", dir.file("t.yaml"), "--placement", "zero-infinity",
                                "--save-plan", saved});
  ASSERT_EQ(save.code, kExitOk) << save.err;
  EXPECT_EQ(save.out.find("warning: training"), std::string::npos) << save.out;
  EXPECT_NE(read(saved).find("training: t.yaml\n"), std::string::npos) << read(saved);
  const Outcome again = stowage({"simulate", saved});
  EXPECT_EQ(again.code, kExitOk) << again.err;
}

// A plan written by a Stowage whose cost model has since changed records a
// step time other than the one simulated now: the text says so, naming
// both, the JSON gives the recorded one and the trace carries the note. A
// plan that agrees says nothing (tests/cli/bundled_plans_test.cpp keeps the
// bundled ones so).
TEST(CliSimulate, SaysWhenThePlansRecordedStepIsNotTodaysPrediction) {
  const TempDir dir;
  const std::string plan = tiny_infinity_plan(dir);
  const std::string current = dir.file("current.yaml");
  std::ofstream(current) << plan;
  const Outcome agrees = stowage({"simulate", current});
  ASSERT_EQ(agrees.code, kExitOk) << agrees.err;
  EXPECT_EQ(agrees.out.find("note: the plan records"), std::string::npos) << agrees.out;

  const size_t at = plan.find("  step_time: ");
  ASSERT_NE(at, std::string::npos) << plan;
  const std::string old = dir.file("old.yaml");
  std::ofstream(old) << replaced(plan, plan.substr(at, plan.find('\n', at) - at), "  step_time: 0.001 s");
  const Outcome differs = stowage({"simulate", old});
  ASSERT_EQ(differs.code, kExitOk) << differs.err;
  EXPECT_NE(differs.out.find("note: the plan records 1 ms a step (bound by nvme.write); this Stowage predicts 31.32 ms"),
            std::string::npos)
      << differs.out;
  // The trace carries the note (otherData.warnings), for the GUI and for
  // whoever reads the trace without the plan.
  const std::string trace = dir.file("old.json");
  ASSERT_EQ(stowage({"simulate", old, "--trace", trace}).code, kExitOk);
  const nlohmann::json warnings = nlohmann::json::parse(read(trace))["otherData"]["warnings"];
  ASSERT_EQ(warnings.size(), 2u) << warnings.dump();  // the assumed write rate, then the note
  EXPECT_TRUE(
      warnings[1].get<std::string>().starts_with("the plan records 1 ms a step (bound by nvme.write)"))
      << warnings.dump();
  const Outcome as_json = stowage({"simulate", old, "--json"});
  ASSERT_EQ(as_json.code, kExitOk) << as_json.err;
  EXPECT_EQ(nlohmann::json::parse(as_json.out)["recorded_step_time_s"].get<double>(), 0.001);
  const Outcome placement = stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt",
                                     "--training", "tiny", "--placement", "zero-offload", "--json"});
  EXPECT_TRUE(nlohmann::json::parse(placement.out)["recorded_step_time_s"].is_null());
}

// Issue 11: the assumed write rate is stated where a figure depends on it:
// ZeRO-Infinity writes its states to NVMe, ZeRO-Offload writes nothing. The
// predicted trace carries the same warnings (otherData.warnings, for the
// GUI), and no key where there are none.
TEST(CliSimulate, WarnsOfAnAssumedWriteRateOnlyWhenItWrites) {
  TempDir dir;
  auto warnings_of = [&](const std::string& placement) {
    const std::string trace = dir.file((placement + ".json").c_str());
    const Outcome o = stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt",
                               "--training", "tiny", "--placement", placement, "--json", "--trace", trace});
    EXPECT_EQ(o.code, kExitOk) << o.err;
    const nlohmann::json other = nlohmann::json::parse(read(trace))["otherData"];
    const nlohmann::json said = nlohmann::json::parse(o.out)["warnings"];
    EXPECT_EQ(other.value("warnings", nlohmann::json::array()), said) << placement;
    EXPECT_EQ(other.contains("warnings"), !said.empty()) << placement;
    return said;
  };
  const nlohmann::json infinity = warnings_of("zero-infinity");
  ASSERT_EQ(infinity.size(), 1u) << infinity;
  EXPECT_NE(infinity[0].get<std::string>().find("assumed 1.725 GB/s"), std::string::npos) << infinity;
  EXPECT_TRUE(warnings_of("zero-offload").empty());
}

// The tiny GPT's ZeRO-Infinity plan writes its states slower than its
// steps come: the last two steps measure 30.9 ms, the writes need 31.3 ms a
// step. The step reported is the writes', both figures are in the JSON,
// and the text says which lane falls behind; ZeRO-Offload keeps up.
TEST(CliSimulate, SaysWhichLaneFallsBehindAndReportsItsWorkAsTheStep) {
  auto simulate = [](const char* placement, bool json) {
    std::vector<std::string> args = {"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt",
                                     "--training", "tiny", "--placement", placement};
    if (json) args.emplace_back("--json");
    const Outcome o = stowage(args);
    EXPECT_EQ(o.code, kExitOk) << o.err;
    return o.out;
  };
  const nlohmann::json infinity = nlohmann::json::parse(simulate("zero-infinity", true));
  EXPECT_EQ(infinity["falls_behind"], "nvme.write");
  EXPECT_EQ(infinity["bounding_lane"], "nvme.write");
  EXPECT_GT(infinity["step_time_s"].get<double>(), infinity["window_step_time_s"].get<double>());
  EXPECT_NE(simulate("zero-infinity", false).find("nvme.write falls further behind each step"),
            std::string::npos);
  const nlohmann::json offload = nlohmann::json::parse(simulate("zero-offload", true));
  EXPECT_TRUE(offload["falls_behind"].is_null());
  EXPECT_EQ(offload["step_time_s"], offload["window_step_time_s"]);
}

// Issue 11: plans pinned nearly all host RAM without a word. ZeRO-Offload
// of Llama-2-7B pins 96.36 GB of host memory (less the 8 GiB host reserve;
// the updated param16 buffers waiting for their upload included): on a
// host of 105 GB it fits and pins 92 %.
TEST(CliSimulate, PinningMostOfHostRamIsAWarning) {
  const TempDir dir;
  std::ofstream(dir.path / "host.yaml")
      << "format: stowage/host/v1\nlabel: 105 GB host\nsource: test\ncpu_cores: 16\nsockets: 1\n"
         "dram: 105 GB\ndram_bandwidth: 76.8 GB/s\npcie_lanes: 24\npcie_generation: 5\n";
  std::ofstream(dir.path / "machine.yaml") << "format: stowage/machine/v1\nlabel: tight\nsource: test\n"
                                              "gpu: rtx-4090\ngpu_count: 1\nhost: "
                                           << dir.file("host.yaml") << "\nnvme_count: 0\n";
  const Outcome o = stowage({"simulate", "--machine", dir.file("machine.yaml"), "--model", "llama-2-7b",
                             "--placement", "zero-offload", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_TRUE(j["overflow"].is_null());
  ASSERT_EQ(j["warnings"].size(), 1u) << j["warnings"];
  EXPECT_NE(j["warnings"][0].get<std::string>().find("pins 96.36 GB of 105 GB of host RAM (92%, above 90%)"),
            std::string::npos)
      << j["warnings"];
  const Outcome text = stowage({"simulate", "--machine", dir.file("machine.yaml"), "--model", "llama-2-7b",
                                "--placement", "zero-offload"});
  EXPECT_NE(text.out.find("\nwarning: the plan pins "), std::string::npos) << text.out;
}

}  // namespace
}  // namespace stowage::cli
