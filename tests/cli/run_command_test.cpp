// `stowage run` as a user runs it: a real process training a small GPT
// under an NVMe-offloading plan, its traces, a failing disk, and a run
// killed with SIGKILL and resumed from its last checkpoint.
#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/app.h"
#include "cli/exit_codes.h"
#include "tests/cli/run_stowage.h"

extern char** environ;

namespace stowage::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::Outcome;
using testing::stowage;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::current_path() / ("run_command_test_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// An NVMe-offloading plan for the two-block GPT of tests/data/executor.
fs::path small_plan(const fs::path& dir) {
  const std::string data = STOWAGE_TEST_DATA_DIR "/executor/";
  const fs::path plan = dir / "plan.yaml";
  const Outcome o = stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", data + "small-gpt.yaml",
                             "--training", data + "small-training.yaml", "--placement", "zero-infinity",
                             "--save-plan", plan.string()});
  EXPECT_EQ(o.code, kExitOk) << o.err;
  return plan;
}

std::vector<std::string> run_args(const fs::path& plan, const fs::path& dir, int steps) {
  return {"run", plan.string(), "--steps", std::to_string(steps), "--nvme-dir", (dir / "nvme").string(),
          "--block-size", "64KiB", "--json"};
}

TEST(RunCommand, TrainsAndWritesTheMeasuredAndPredictedTraces) {
  const fs::path dir = scratch("traces");
  std::vector<std::string> args = run_args(small_plan(dir), dir, 4);
  args.insert(args.end(), {"--trace", (dir / "measured.json").string(), "--predicted-trace",
                           (dir / "predicted.json").string()});
  const Outcome o = stowage(args);
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const json result = json::parse(o.out);
  ASSERT_EQ(result["losses"].size(), 4u);
  EXPECT_LT(result["losses"][3].get<double>(), result["losses"][0].get<double>());
  // Both traces hold the same ops, the measured one with real NVMe traffic.
  std::map<std::string, std::vector<std::string>> names;
  for (const char* which : {"measured", "predicted"}) {
    std::ifstream in(dir / (std::string(which) + ".json"));
    const json trace = json::parse(in);
    EXPECT_EQ(trace["otherData"]["source"], which);
    int nvme_reads = 0;
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] != "X") continue;
      names[which].push_back(e["name"]);
      if (e["args"]["kind"] == "read_states") ++nvme_reads;
    }
    EXPECT_EQ(nvme_reads, 4 * 4) << which;  // four partitions, four steps
  }
  std::sort(names["measured"].begin(), names["measured"].end());
  std::sort(names["predicted"].begin(), names["predicted"].end());
  EXPECT_EQ(names["measured"], names["predicted"]);
}

TEST(RunCommand, AFailingDiskStopsTheRunWithTheOpAndExitCode) {
  const fs::path dir = scratch("fault");
  std::vector<std::string> args = run_args(small_plan(dir), dir, 3);
  args.insert(args.end(), {"--fault", "block-write:6"});
  const Outcome o = stowage(args);
  EXPECT_EQ(o.code, kExitIoError);
  EXPECT_NE(o.err.find("op 'write states"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("injected fault (block-write call 6"), std::string::npos) << o.err;
}

TEST(RunCommand, BadArgumentsAreUsageErrors) {
  const fs::path dir = scratch("usage");
  const fs::path plan = small_plan(dir);
  EXPECT_EQ(stowage({"run", plan.string(), "--device-memory", "lots"}).code, kExitUsage);
  EXPECT_EQ(stowage({"run", plan.string(), "--fault", "disk:1"}).code, kExitBadInput);
  EXPECT_EQ(stowage({"run", plan.string(), "--resume", "latest"}).code, kExitUsage);
  const Outcome missing = stowage({"run", (dir / "nope.yaml").string()});
  EXPECT_EQ(missing.code, kExitUsage);
}

TEST(RunCommand, APlanTheExecutorCannotRunIsBadInput) {
  const fs::path dir = scratch("unrunnable");
  const fs::path plan = dir / "opt.yaml";
  ASSERT_EQ(stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "opt-1.3b", "--training",
                     "tiny", "--placement", "zero-offload", "--save-plan", plan.string()})
                .code,
            kExitOk);
  const Outcome o = stowage({"run", plan.string(), "--steps", "1"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("opt.yaml: model 'opt-1.3b': mlp relu is not supported"), std::string::npos) << o.err;
}

json run_json(const std::vector<std::string>& args) {
  const Outcome o = stowage(args);
  EXPECT_EQ(o.code, kExitOk) << o.err;
  return o.code == kExitOk ? json::parse(o.out) : json{};
}

TEST(RunCommand, AKilledRunResumesWithTheSameLosses) {
  const fs::path dir = scratch("kill");
  const fs::path plan = small_plan(dir);
  const json straight = run_json(run_args(plan, dir, 8));
  ASSERT_EQ(straight["losses"].size(), 8u);

  // A real process, killed with SIGKILL once its checkpoint of step 4 exists.
  const fs::path root = dir / "checkpoints";
  std::vector<std::string> args = run_args(plan, dir / "killed", 1000);
  args.insert(args.begin(), STOWAGE_BINARY);
  args.insert(args.end(), {"--checkpoint-dir", root.string(), "--checkpoint-every", "4"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t child = 0;
  ASSERT_EQ(posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(root / "step-000004") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it was killed";
  ASSERT_TRUE(fs::exists(root / "step-000004"));

  std::vector<std::string> resume = run_args(plan, dir / "resumed", 8);
  resume.insert(resume.end(), {"--checkpoint-dir", root.string(), "--resume", (root / "step-000004").string()});
  const json resumed = run_json(resume);
  ASSERT_EQ(resumed["first_step"], 4);
  ASSERT_EQ(resumed["losses"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(resumed["losses"][i].get<double>(), straight["losses"][4 + i].get<double>()) << i;
}

TEST(RunCommand, ACorruptCheckpointIsRefused) {
  const fs::path dir = scratch("corrupt");
  const fs::path plan = small_plan(dir);
  const fs::path root = dir / "checkpoints";
  std::vector<std::string> args = run_args(plan, dir, 2);
  args.insert(args.end(), {"--checkpoint-dir", root.string()});
  run_json(args);
  const fs::path blobs = root / "step-000002" / "blobs.bin";
  ASSERT_TRUE(fs::exists(blobs));
  fs::resize_file(blobs, fs::file_size(blobs) - 1);
  std::vector<std::string> resume = run_args(plan, dir, 4);
  resume.insert(resume.end(), {"--checkpoint-dir", root.string(), "--resume", "latest"});
  const Outcome o = stowage(resume);
  EXPECT_NE(o.code, kExitOk);
  EXPECT_NE(o.err.find("truncated checkpoint"), std::string::npos) << o.err;
}

// The two-block Llama of tests/data/executor under an NVMe-offloading plan:
// it trains, its weights go out as safetensors and start a second run, and
// a weights file of another model is bad input before anything runs.
TEST(RunCommand, ALlamaTrainsAndItsWeightsGoOutAndComeBackIn) {
  const fs::path dir = scratch("llama");
  const std::string data = STOWAGE_TEST_DATA_DIR "/executor/";
  const fs::path plan = dir / "llama.yaml";
  ASSERT_EQ(stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", data + "small-llama.yaml",
                     "--training", data + "small-training.yaml", "--placement", "zero-infinity",
                     "--save-plan", plan.string()})
                .code,
            kExitOk);
  std::vector<std::string> args = run_args(plan, dir, 3);
  args.insert(args.end(), {"--export-weights", (dir / "out.safetensors").string()});
  const json first = run_json(args);
  ASSERT_EQ(first["losses"].size(), 3u);
  ASSERT_TRUE(fs::exists(dir / "out.safetensors"));
  std::vector<std::string> again = run_args(plan, dir, 1);
  again.insert(again.end(), {"--init-from", (dir / "out.safetensors").string()});
  const json second = run_json(again);
  ASSERT_EQ(second["losses"].size(), 1u);
  EXPECT_LT(second["losses"][0].get<double>(), first["losses"][0].get<double>());
  std::vector<std::string> wrong = run_args(plan, dir, 1);
  wrong.insert(wrong.end(), {"--init-from", data + "small-llama.safetensors"});
  const Outcome o = stowage(wrong);
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("tensor 'model.embed_tokens.weight' has shape [32, 16] ([256, 64]"), std::string::npos)
      << o.err;
}

}  // namespace
}  // namespace stowage::cli
