// The stowage command end to end, with captured output: what a user sees.
#include "cli/app.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "core/units.h"
#include "tests/cli/run_stowage.h"
#include "tests/cli/temp_dir.h"

namespace stowage::cli {
namespace {

namespace fs = std::filesystem;

using testing::Outcome;
using testing::stowage;

TEST(Cli, HelpListsTheSubcommandsAndExitsZero) {
  const Outcome o = stowage({"--help"});
  EXPECT_EQ(o.code, kExitOk);
  EXPECT_NE(o.out.find("profiles"), std::string::npos);
  EXPECT_NE(o.out.find("memory"), std::string::npos);
}

TEST(Cli, UnknownSubcommandIsAUsageError) {
  const Outcome o = stowage({"frobnicate"});
  EXPECT_EQ(o.code, kExitUsage);
  EXPECT_FALSE(o.err.empty());
}

// Issue 12: this said "A subcommand is required".
TEST(Cli, AnUnknownOptionIsNamed) {
  const Outcome o = stowage({"--bogus"});
  EXPECT_EQ(o.code, kExitUsage);
  EXPECT_NE(o.err.find("unknown option '--bogus'"), std::string::npos) << o.err;
}

TEST(Cli, MemoryWithoutModelIsAUsageError) {
  const Outcome o = stowage({"memory", "--machine", "dgx-2"});
  EXPECT_EQ(o.code, kExitUsage);
  EXPECT_NE(o.err.find("--model"), std::string::npos);
}

TEST(Cli, ProfilesListsEveryKind) {
  const Outcome o = stowage({"profiles"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  for (const char* name : {"rtx-4090", "samsung-990-pro-2tb", "dgx2-host", "dgx-2", "llama-2-13b", "default"}) {
    EXPECT_NE(o.out.find(name), std::string::npos) << name;
  }
}

// Model sizes in the unit they are spoken of: GPT-1T said "1.01e+03 B".
TEST(Cli, ProfilesGiveModelSizesInMillionsBillionsAndTrillions) {
  const Outcome o = stowage({"profiles", "model"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  for (const char* size : {"3.29 M params", "13 B params", "1.01 T params"}) {
    EXPECT_NE(o.out.find(size), std::string::npos) << size << "\n" << o.out;
  }
  EXPECT_EQ(o.out.find("e+"), std::string::npos) << o.out;
}

TEST(Cli, ProfilesOfOneKindAsJson) {
  const Outcome o = stowage({"profiles", "gpu", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j.size(), 13u);
  for (const auto& e : j) {
    EXPECT_EQ(e["kind"], "gpu");
    EXPECT_GT(e["figures"]["memory_bytes"].get<int64_t>(), int64_t{1} << 30);
  }
}

// The check: Llama-2-13B on the 24 GB workstation. All-GPU, the
// GPU holds at its peak (the end of a backward) the 12 B x 13,015,864,320
// of optimizer states, the 2 B x N of param16 and at least a full set of
// grad16 (2 B x N, plus the micro-step's layer being added in): over
// 208.3 GB, so it does not fit; ZeRO-Offload's master32 + adam_m + adam_v
// on the CPU are 12 B x N = 156.2 GB.
TEST(Cli, MemoryShowsAllGpuOverflowAndZeroOffloadCpuNeeds) {
  const Outcome o = stowage({"memory", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  ASSERT_EQ(j["placements"].size(), 3u);
  const nlohmann::json& all_gpu = j["placements"][0];
  EXPECT_EQ(all_gpu["name"], "all-gpu");
  EXPECT_FALSE(all_gpu["fits"].get<bool>());
  EXPECT_EQ(all_gpu["first_overflow"], "gpu");
  std::map<std::string, int64_t> on_gpu;
  for (const auto& l : all_gpu["lines"]) {
    if (l["tier"] == "gpu" && l["tensor_class"].is_string()) on_gpu[l["tensor_class"]] += l["bytes"].get<int64_t>();
  }
  constexpr int64_t kParams = 13'015'864'320;
  EXPECT_EQ(on_gpu["master32"] + on_gpu["adam_m"] + on_gpu["adam_v"], 12 * kParams);
  EXPECT_EQ(on_gpu["param16"], 2 * kParams);
  EXPECT_GE(on_gpu["grad16"], 2 * kParams);
  const nlohmann::json& offload = j["placements"][1];
  int64_t optimizer_on_cpu = 0;
  for (const auto& l : offload["lines"]) {
    const bool state = l["item"] == "master32" || l["item"] == "adam_m" || l["item"] == "adam_v";
    if (state && l["tier"] == "cpu") optimizer_on_cpu += l["bytes"].get<int64_t>();
  }
  EXPECT_EQ(optimizer_on_cpu, 12 * int64_t{13'015'864'320});
  EXPECT_TRUE(j["placements"][2]["fits"].get<bool>());
}

TEST(Cli, MemoryTableNamesTheOverflowingTier) {
  const Outcome o = stowage({"memory", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("all-gpu: everything on the GPU"), std::string::npos);
  EXPECT_NE(o.out.find("=> does not fit: gpu OVERFLOWS by"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("156.2 GB"), std::string::npos) << o.out;  // 3 x 52.06 GB shown per class; total in JSON
}

TEST(Cli, BatchAndSequenceOverrideTheTrainingProfile) {
  const Outcome o = stowage({"memory", "--machine", "dgx-a100", "--model", "gpt2", "--batch", "4", "--seq", "512",
                             "--placement", "all-gpu", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["micro_batch"], 4);
  EXPECT_EQ(j["sequence_length"], 512);
  EXPECT_EQ(j["placements"].size(), 1u);
}

TEST(Cli, UnknownModelSuggestsTheNearestAndExitsWithBadInput) {
  const Outcome o = stowage({"memory", "--machine", "dgx-2", "--model", "llama-2-13"});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find("unknown model profile 'llama-2-13'"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("did you mean"), std::string::npos) << o.err;
}

// Issue 12: a profile of a million bad keys printed 207 MB of errors. The
// first 50 are printed, then the count of the rest.
TEST(Cli, ManyProblemsArePrintedFiftyAndACount) {
  const fs::path model =
      fs::temp_directory_path() / ("stowage-cli-many-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream text(model);
  text << "format: stowage/model/v1\n";
  for (int i = 0; i < 300; ++i) text << "unknown_key_" << i << ": 1\n";
  text.close();
  const Outcome o = stowage({"memory", "--machine", "dgx-2", "--model", model.string()});
  fs::remove(model);
  EXPECT_EQ(o.code, kExitBadInput);
  const auto lines = std::count(o.err.begin(), o.err.end(), '\n');
  EXPECT_EQ(lines, 51) << o.err.substr(0, 2000);
  EXPECT_NE(o.err.find("more problems like these"), std::string::npos);
}

// The check: a broken profile prints the file, line and field.
TEST(Cli, BrokenProfilePrintsFileLineAndField) {
  const fs::path dir = fs::temp_directory_path() / ("stowage-cli-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path model = dir / "broken.yaml";
  std::ofstream(model) << "format: stowage/model/v1\nlabel: b\nsource: b\nd_model: 4096\nlayers: -2\nheads: 32\n"
                          "ffn: 11008\nvocab: 32000\nmax_positions: 4096\nposition: rope\nnorm: rmsnorm\n"
                          "mlp: swiglu\nbiases: false\ntied_embeddings: false\nhidden_act: silu\n";
  const Outcome o = stowage({"memory", "--machine", "dgx-2", "--model", model.string()});
  fs::remove_all(dir);
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(model.string() + ":5:9: layers: -2 is out of range"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(model.string() + ":15:1: unknown key 'hidden_act'"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty());
}

TEST(Cli, DeepSpeedConventionReportsItsBufferFactor) {
  const Outcome o = stowage({"memory", "--machine", "dgx-a100", "--model", "llama-2-13b", "--convention", "deepspeed",
                             "--model-states-only", "--placement", "zero-offload", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  // ZeRO-2 offload, 8 GPUs: N x max(4 x 8, 16) x 1.5 = 48N on the host.
  EXPECT_EQ(j["placements"][0]["tiers"]["cpu"]["used_bytes"].get<int64_t>(), 48 * int64_t{13'015'864'320});
}

}  // namespace
}  // namespace stowage::cli

namespace stowage::cli {
namespace {

// The check: zero-offload for Llama-2-13B on the workstation prints
// a step time, the bounding lane and peak memory per tier, and writes a
// trace with one track per lane and memory counters, the same bytes twice.
TEST(CliSimulate, PrintsTheSummaryAndWritesADeterministicTrace) {
  const fs::path dir = fs::temp_directory_path() / ("stowage-sim-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
  const std::vector<std::string> args = {"simulate", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b",
                                         "--placement", "zero-offload", "--trace"};
  std::vector<std::string> first = args, second = args;
  first.push_back(a);
  second.push_back(b);
  const Outcome o = stowage(first);
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("step time"), std::string::npos);
  EXPECT_NE(o.out.find("bounding lane"), std::string::npos);
  for (const char* tier : {"peak gpu", "peak cpu", "peak nvme"}) EXPECT_NE(o.out.find(tier), std::string::npos) << tier;
  ASSERT_EQ(stowage(second).code, kExitOk);
  std::ifstream fa(a), fb(b);
  std::stringstream ta, tb;
  ta << fa.rdbuf();
  tb << fb.rdbuf();
  EXPECT_TRUE(ta.str() == tb.str());
  const nlohmann::json trace = nlohmann::json::parse(ta.str());
  std::set<std::string> tracks, counters;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") tracks.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "C") counters.insert(e["name"].get<std::string>());
  }
  EXPECT_EQ(tracks, (std::set<std::string>{"gpu.compute", "pcie.h2d", "pcie.d2h", "cpu.optim"}));
  // Each tier's bytes, and the tiers that hold anything by class (docs/formats/trace.md).
  EXPECT_EQ(counters, (std::set<std::string>{"gpu memory", "cpu memory", "nvme memory", "classes in gpu memory",
                                             "classes in cpu memory"}));
  fs::remove_all(dir);
}

TEST(CliSimulate, SavedPlanSimulatesTheSame) {
  const fs::path dir = fs::temp_directory_path() / ("stowage-plan-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string plan = (dir / "plan.yaml").string();
  const Outcome inline_run =
      stowage({"simulate", "--machine", "cloud-t4-vm", "--model", "gpt2-xl", "--training", "fp16-adam",
               "--placement", "zero-infinity", "--save-plan", plan, "--json"});
  ASSERT_EQ(inline_run.code, kExitOk) << inline_run.err;
  const Outcome from_plan = stowage({"simulate", plan, "--json"});
  ASSERT_EQ(from_plan.code, kExitOk) << from_plan.err;
  EXPECT_EQ(nlohmann::json::parse(inline_run.out)["step_time_s"], nlohmann::json::parse(from_plan.out)["step_time_s"]);
  fs::remove_all(dir);
}

TEST(CliSimulate, NeedsAPlanOrAPlacement) {
  EXPECT_EQ(stowage({"simulate", "--machine", "dgx-2", "--model", "gpt2"}).code, kExitUsage);
}

TEST(CliSimulate, BrokenPlanNamesFileLineAndField) {
  const fs::path dir = fs::temp_directory_path() / ("stowage-badplan-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string plan = (dir / "plan.yaml").string();
  std::ofstream(plan) << "format: stowage/plan/v1\nmachine: dgx-2\nmodel: gpt2\ntraining: default\npolicy:\n"
                         "  zero_stage: 5\n";
  const Outcome o = stowage({"simulate", plan});
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find(plan + ":6:15: policy.zero_stage"), std::string::npos) << o.err;
  fs::remove_all(dir);
}

// Issue 12: a plan that is a FIFO must be refused, not block the read.
TEST(CliSimulate, APlanThatIsAFifoIsRefusedWithoutBlocking) {
  const fs::path fifo = fs::temp_directory_path() / ("stowage-plan-fifo-" + std::to_string(::getpid()));
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const Outcome o = stowage({"simulate", fifo.string()});
  fs::remove(fifo);
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  EXPECT_NE(o.err.find("cannot read file: it is a FIFO"), std::string::npos) << o.err;
}

TEST(CliSimulate, TraceToAnUnwritablePlaceFailsCleanly) {
  const Outcome o = stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt", "--placement",
                             "all-gpu", "--trace", "/nonexistent-dir/t.json"});
  EXPECT_EQ(o.code, kExitCannotWrite);
  EXPECT_NE(o.err.find("/nonexistent-dir/t.json"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace stowage::cli

namespace stowage::cli {
namespace {

using testing::TempDir;

// The check: on the 24 GB workstation Llama-2-13B gets a plan that
// fits, a predicted step time, and a baseline table where all-GPU does not fit.
TEST(CliPlan, Llama13bOnTheWorkstation) {
  const TempDir dir;
  const std::string plan = dir.file("plan.yaml"), trace = dir.file("trace.json");
  const Outcome o = stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b", "-o", plan,
                             "--trace", trace});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("chosen: "), std::string::npos);
  EXPECT_NE(o.out.find("step time"), std::string::npos);
  EXPECT_NE(o.out.find("all-gpu                        NO"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("why: "), std::string::npos);
  EXPECT_TRUE(fs::exists(plan));
  EXPECT_TRUE(fs::exists(trace));
  // The written plan simulates to the predicted step time.
  const Outcome sim = stowage({"simulate", plan, "--json"});
  ASSERT_EQ(sim.code, kExitOk) << sim.err;
  const Outcome json = stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b", "-o", "",
                                "--json"});
  const nlohmann::json planned = nlohmann::json::parse(json.out);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(sim.out)["step_time_s"].get<double>(),
                   planned["chosen"]["step_time_s"].get<double>());
  EXPECT_FALSE(planned["baselines"][0]["fits"].get<bool>());
}

// The check: a 1T-parameter GPT on the DGX-2 either fits or says
// exactly why not.
TEST(CliPlan, OneTrillionOnTheDgx2SaysWhy) {
  const Outcome o =
      stowage({"plan", "--machine", "dgx-2", "--model", "gpt-1t", "--training", "fp16-adam", "-o", ""});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const bool fits = o.out.find("chosen: ") != std::string::npos;
  const bool why = o.out.find("NOTHING FITS. The closest candidate") != std::string::npos &&
                   (o.out.find("Changes that would make it fit") != std::string::npos ||
                    o.out.find("No single change tried makes it fit") != std::string::npos);
  EXPECT_TRUE(fits || why) << o.out;
}

// The exported DeepSpeed config of a plan made for DeepSpeed parses as JSON,
// carries the plan's choices and is exported as planned (exit 0).
TEST(CliExport, DeepSpeedJsonParsesAndCarriesThePlan) {
  const TempDir dir;
  const std::string plan = dir.file("plan.yaml");
  ASSERT_EQ(stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b", "--target",
                     "deepspeed", "-o", plan})
                .code,
            kExitOk);
  const Outcome o = stowage({"export", "deepspeed", plan});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.err.find("DeepSpeed runs this plan as planned"), std::string::npos) << o.err;
  // Its figures rest on the workstation drive's assumed write rate.
  EXPECT_NE(o.err.find("\nwarning: Samsung 990 PRO 2 TB (samsung-990-pro-2tb) gives no write rate"), std::string::npos)
      << o.err;
  // The buffers' heading counts the pinned ones only (it said "DeepSpeed pins
  // X", then listed an unpinned gradient buffer and a GPU bucket under it).
  const std::string pools = dir.file("pools.json");
  ASSERT_EQ(stowage({"export", "deepspeed", plan, "-o", dir.file("ds.json"), "--pools-json", pools}).code,
            kExitOk);
  std::ifstream pools_in(pools);
  const nlohmann::json report = nlohmann::json::parse(pools_in);
  int64_t pinned = 0, all = 0;
  for (const nlohmann::json& pool : report["pools"]) {
    all += pool["bytes"].get<int64_t>();
    if (pool["pinned"].get<bool>()) pinned += pool["bytes"].get<int64_t>();
  }
  ASSERT_LT(pinned, all) << "the case no longer has a buffer that is not pinned";
  EXPECT_EQ(report["pinned_bytes"].get<int64_t>(), pinned);
  EXPECT_NE(
      o.err.find("DeepSpeed allocates these buffers for this configuration, " +
                 core::format_bytes(core::Bytes(pinned)) + " of them pinned host memory (all ranks):\n"),
      std::string::npos)
      << o.err;
  const nlohmann::json ds = nlohmann::json::parse(o.out);
  EXPECT_EQ(ds["zero_optimization"]["stage"], 3);
  EXPECT_TRUE(ds.contains("aio"));
  EXPECT_FALSE(ds["aio"].contains("thread_count"));
  const Outcome acc = stowage({"export", "accelerate", plan});
  ASSERT_EQ(acc.code, kExitOk) << acc.err;
  EXPECT_NE(acc.out.find("distributed_type: DEEPSPEED"), std::string::npos);
  EXPECT_NE(acc.out.find("deepspeed_config_file: deepspeed.json"), std::string::npos) << acc.out;
}

// The check: the default plan (made for Stowage's executor) is one
// DeepSpeed cannot run as planned, so export refuses it (exit 65), writes
// nothing, lists the differences and prints what DeepSpeed would run;
// --lossy exports it and prints both step times.
TEST(CliExport, PlanDeepSpeedCannotRunIsRefusedWithItsPredictedTime) {
  const TempDir dir;
  const std::string plan = dir.file("plan.yaml");
  const std::string json = dir.file("ds.json");
  ASSERT_EQ(stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b", "-o", plan}).code,
            kExitOk);
  const Outcome refused = stowage({"export", "deepspeed", plan, "-o", json});
  EXPECT_EQ(refused.code, kExitBadInput) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(json));
  EXPECT_NE(refused.err.find("cannot run this plan as planned"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("  - "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("exported (what deepspeed runs): "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find(" s per step; peak gpu"), std::string::npos) << refused.err;
  // What both figures rest on, said once.
  const size_t assumed = refused.err.find("warning: Samsung 990 PRO 2 TB (samsung-990-pro-2tb) gives no write rate");
  EXPECT_NE(assumed, std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("gives no write rate", refused.err.find('\n', assumed)), std::string::npos)
      << refused.err;
  const Outcome lossy = stowage({"export", "deepspeed", plan, "-o", json, "--lossy"});
  ASSERT_EQ(lossy.code, kExitOk) << lossy.err;
  EXPECT_TRUE(std::filesystem::exists(json));
  EXPECT_NE(lossy.err.find("planned (Stowage's executor):  "), std::string::npos) << lossy.err;
  EXPECT_NE(lossy.err.find("exported (what deepspeed runs): "), std::string::npos) << lossy.err;
}

// --convention deepspeed lists the buffers DeepSpeed's runtime allocates
// beside its estimator, from the rules the exporter uses.
TEST(CliMemory, DeepSpeedConventionListsRuntimePools) {
  const Outcome o = stowage({"memory", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b", "--placement",
                             "zero-infinity", "--convention", "deepspeed", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  const nlohmann::json& pools = j["placements"][0]["deepspeed_runtime_pools"];
  ASSERT_TRUE(pools.is_array());
  EXPECT_TRUE(std::ranges::any_of(pools, [](const nlohmann::json& p) { return p["name"] == "optimizer swap buffers"; }))
      << pools.dump();
  const Outcome own = stowage({"memory", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b",
                               "--placement", "zero-infinity", "--json"});
  EXPECT_FALSE(nlohmann::json::parse(own.out)["placements"][0].contains("deepspeed_runtime_pools"));
}

// Accelerate with -o writes the YAML and, beside it, the DeepSpeed JSON the
// YAML names, so no DeepSpeed key (the NVMe path included) is lost.
TEST(CliExport, AccelerateWritesTheJsonItPointsAt) {
  const TempDir dir;
  const std::string plan = dir.file("plan.yaml");
  ASSERT_EQ(stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b", "--target",
                     "accelerate", "-o", plan})
                .code,
            kExitOk);
  const std::string yaml = dir.file("acc.yaml");
  const Outcome o = stowage({"export", "accelerate", plan, "-o", yaml, "--nvme-path", "/mnt/nvme0"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const std::string json = dir.file("acc.deepspeed.json");
  ASSERT_TRUE(std::filesystem::exists(json));
  std::ifstream yaml_in(yaml);
  const std::string text((std::istreambuf_iterator<char>(yaml_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("deepspeed_config_file: " + json), std::string::npos) << text;
  std::ifstream json_in(json);
  const nlohmann::json ds = nlohmann::json::parse(json_in);
  EXPECT_EQ(ds["zero_optimization"]["offload_optimizer"]["nvme_path"], "/mnt/nvme0");
}

TEST(CliWhatif, AddingDrivesShowsBothSides) {
  const TempDir dir;
  const std::string plan = dir.file("plan.yaml");
  ASSERT_EQ(stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-7b", "-o", plan}).code, kExitOk);
  const Outcome o = stowage({"whatif", plan, "--add-nvme", "3", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const nlohmann::json j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["change"], "add 3 NVMe drives");
  EXPECT_LE(j["after"]["chosen"]["step_time_s"].get<double>(), j["before"]["chosen"]["step_time_s"].get<double>() * 1.005);
}

TEST(CliWhatif, BadRamIsAUsageError) {
  const TempDir dir;
  const std::string plan = dir.file("plan.yaml");
  ASSERT_EQ(stowage({"plan", "--machine", "workstation-24gb-1nvme", "--model", "gpt2", "-o", plan}).code, kExitOk);
  const Outcome o = stowage({"whatif", plan, "--ram", "lots"});
  EXPECT_EQ(o.code, kExitUsage);
  EXPECT_NE(o.err.find("--ram"), std::string::npos);
}

TEST(CliFit, LargestLlamaOnTheWorkstation) {
  const Outcome o = stowage({"fit", "--machine", "workstation-24gb-1nvme", "--family", "llama"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  // Llama-3.1-405B and the 70Bs do not fit in 128 GiB of RAM (their 16-bit
  // gradients alone exceed it); 13B is the largest Llama that trains here
  // (Llama-3-8B and 13B both fit; 13B has more parameters).
  EXPECT_NE(o.out.find("largest llama model that trains on"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(": llama-2-13b"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace stowage::cli
