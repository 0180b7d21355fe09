// `stowage run` as a user runs it: a real process training a small GPT
// under an NVMe-offloading plan, its traces, a failing disk, and a run
// killed with SIGKILL and resumed from its last checkpoint.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
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
#include "executor/checkpoint/checkpoint_root.h"
#include "executor/checkpoint/load_checkpoint.h"
#include "executor/directory_lock.h"
#include "executor/isa.h"
#include "tests/cli/run_stowage.h"
#ifdef STOWAGE_HAVE_CUDA_BACKEND
#include "executor/cuda/cuda_device.h"
#endif

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

// A profile of tests/data/executor copied into `dir`: a plan may name only
// files inside its own folder or the profile folder (issue 12 item 4).
std::string beside(const fs::path& dir, const std::string& name) {
  fs::copy_file(fs::path(STOWAGE_TEST_DATA_DIR) / "executor" / name, dir / name,
                fs::copy_options::overwrite_existing);
  return (dir / name).string();
}

// An NVMe-offloading plan for the two-block GPT of tests/data/executor.
fs::path small_plan(const fs::path& dir) {
  const fs::path plan = dir / "plan.yaml";
  const Outcome o = stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", beside(dir, "small-gpt.yaml"),
                             "--training", beside(dir, "small-training.yaml"), "--placement", "zero-infinity",
                             "--save-plan", plan.string()});
  EXPECT_EQ(o.code, kExitOk) << o.err;
  return plan;
}

std::vector<std::string> run_args(const fs::path& plan, const fs::path& dir, int steps) {
  return {"run", plan.string(), "--steps", std::to_string(steps), "--nvme-dir", (dir / "nvme").string(),
          "--block-size", "64KiB", "--json"};
}

// The measured trace names the device the run was on (the CPU backend
// here), the predicted one the plan's machine (an RTX 4090's): `compare`
// says the two are not one machine, and is silent once the prediction is
// made for a profile of the CPU backend (as `stowage profile` writes one).
void expect_the_traces_say_where_their_times_come_from(const fs::path& dir, const json& run,
                                                       const json& compared) {
  EXPECT_EQ(run["backend"], "cpu");
  EXPECT_EQ(run["device"], "Stowage CPU backend");
  std::ifstream predicted_file(dir / "predicted.json"), measured_file(dir / "measured.json");
  const json predicted = json::parse(predicted_file)["otherData"],
             measured = json::parse(measured_file)["otherData"];
  EXPECT_EQ(measured["backend"], "cpu");
  EXPECT_EQ(measured["device"], "Stowage CPU backend");
  EXPECT_FALSE(measured.contains("machine"));
  EXPECT_EQ(predicted["machine"], "workstation-24gb-1nvme");
  EXPECT_EQ(predicted["device_names"], json::array({"NVIDIA GeForce RTX 4090"}));
  EXPECT_FALSE(predicted.contains("device"));
  EXPECT_EQ(compared["measured_on"], json({{"backend", "cpu"}, {"device", "Stowage CPU backend"}}));
  EXPECT_EQ(compared["predicted_for"]["machine"], "workstation-24gb-1nvme");
  ASSERT_TRUE(compared["machine_difference"].is_string()) << compared["machine_difference"];
  const Outcome text =
      stowage({"compare", (dir / "predicted.json").string(), (dir / "measured.json").string()});
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("\nnote: the run was not on the prediction's GPU (NVIDIA GeForce RTX 4090 24GB)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Measured on Stowage CPU backend (cpu backend).\n"), std::string::npos) << text.out;

  // A profile of this machine for the CPU backend, as `stowage profile` lists its device.
  std::ifstream fidelity(fs::path(STOWAGE_TEST_DATA_DIR) / "fidelity" / "2026-12-06-fid50d" / "machine.yaml");
  std::string yaml((std::istreambuf_iterator<char>(fidelity)), std::istreambuf_iterator<char>());
  const size_t gpu = yaml.find("\ngpu:\n");
  ASSERT_NE(gpu, std::string::npos);
  yaml.insert(gpu + 6, "  device_names: [\"Stowage CPU backend\"]\n");
  std::ofstream(dir / "cpu-backend.yaml") << yaml;
  const Outcome here = stowage({"compare", "--machine", (dir / "cpu-backend.yaml").string(),
                                (dir / "measured.json").string(), "--json"});
  ASSERT_EQ(here.code, kExitOk) << here.err;
  const json same = json::parse(here.out);
  EXPECT_TRUE(same["machine_difference"].is_null()) << same["machine_difference"];
  EXPECT_EQ(same["predicted_for"]["device_names"], json::array({"Stowage CPU backend"}));

  // Calibrated into the profile of the machine it ran on, and not into an RTX 4090's.
  const Outcome into_4090 = stowage({"calibrate", (dir / "measured.json").string(), "--machine",
                                     "workstation-24gb-1nvme", "-o", (dir / "4090.yaml").string()});
  EXPECT_EQ(into_4090.code, 2);
  EXPECT_NE(into_4090.err.find("measured.json ran on Stowage CPU backend (cpu backend), not on the GPU of "
                               "workstation-24gb-1nvme, GPU NVIDIA GeForce RTX 4090 24GB"),
            std::string::npos)
      << into_4090.err;
  EXPECT_FALSE(fs::exists(dir / "4090.yaml"));
  const Outcome into_here =
      stowage({"calibrate", (dir / "measured.json").string(), "--machine",
               (dir / "cpu-backend.yaml").string(), "-o", (dir / "here.yaml").string()});
  EXPECT_EQ(into_here.code, kExitOk) << into_here.err;
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
  // The prediction for the workstation writes to its drive at an assumed
  // rate: said in the JSON and carried by the predicted trace alone.
  ASSERT_EQ(result["warnings"].size(), 1u) << result;
  EXPECT_NE(result["warnings"][0].get<std::string>().find("assumed 1.725 GB/s"), std::string::npos) << result;
  {
    std::ifstream predicted(dir / "predicted.json"), measured(dir / "measured.json");
    EXPECT_EQ(json::parse(predicted)["otherData"]["warnings"], result["warnings"]);
    EXPECT_FALSE(json::parse(measured)["otherData"].contains("warnings"));
  }
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
  // The step the run sets beside its prediction is the one `stowage
  // compare` takes from the measured trace (the median after the first).
  const Outcome compared = stowage({"compare", (dir / "predicted.json").string(), (dir / "measured.json").string(),
                                    "--json"});
  ASSERT_EQ(compared.code, kExitOk) << compared.err;
  const double steady = result["steady_step_seconds"].get<double>();
  EXPECT_GT(steady, 0);
  EXPECT_NEAR(json::parse(compared.out)["measured"]["steady_step_s"].get<double>(), steady, 1e-5 * steady);
  expect_the_traces_say_where_their_times_come_from(dir, result, json::parse(compared.out));
}

// The first line `stowage run` prints, run as its own process under `env`
// (OpenBLAS reads OPENBLAS_CORETYPE only as it loads).
std::string first_line_of_a_run(const fs::path& plan, const fs::path& dir, const std::string& env) {
  const std::string command = "env " + env + " " + STOWAGE_BINARY + " run " + plan.string() +
                              " --steps 1 --block-size 64KiB --nvme-dir " + (dir / "nvme").string() + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string line;
  for (int c = fgetc(pipe); c != EOF && c != '\n'; c = fgetc(pipe)) line += static_cast<char>(c);
  while (fgetc(pipe) != EOF) {
  }
  pclose(pipe);
  return line;
}

TEST(RunCommand, RunsOnTheWidestBlasKernelsTheCpuHasUnlessTheUserNamesOthers) {
  if (!executor::isa_supported(executor::Isa::kAvx2))
    GTEST_SKIP() << "this CPU has no AVX2: OpenBLAS's generic kernels are the widest it runs";
  const fs::path dir = scratch("blas_kernels");
  const fs::path plan = small_plan(dir);
  // Debian 12's OpenBLAS falls back to its SSE3 kernels on a CPU it does
  // not know (Emerald Rapids: 2.7x slower steps); the command asks for wider ones.
  const std::string own = first_line_of_a_run(plan, dir, "-u OPENBLAS_CORETYPE");
  EXPECT_NE(own.find("kernels)"), std::string::npos) << own;
  EXPECT_EQ(own.find("Prescott"), std::string::npos) << own;
  // A user's choice stands.
  const std::string named = first_line_of_a_run(plan, dir, "OPENBLAS_CORETYPE=Haswell");
  EXPECT_NE(named.find("(OpenBLAS's Haswell kernels)"), std::string::npos) << named;
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

// A plan whose parameters and states at rest alone need more memory than
// the host has free is refused before anything is allocated: a Llama-2-13B
// plan on a 24 GiB machine was killed by the kernel's OOM killer instead,
// after 15 s, saying nothing. GPT-1T under zero-infinity rests 2 TB of fp16
// parameters in host RAM, more than any machine this runs on has.
TEST(RunCommand, APlanThatNeedsMoreHostMemoryThanIsFreeIsRefusedAtOnce) {
  const fs::path dir = scratch("host-memory");
  const std::string plan = (dir / "gpt-1t.yaml").string();
  ASSERT_EQ(stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "gpt-1t", "--placement",
                     "zero-infinity", "--steps", "1", "--save-plan", plan})
                .code,
            kExitOk);
  const Outcome o = stowage({"run", plan, "--steps", "1", "--nvme-dir", (dir / "nvme").string()});
  EXPECT_EQ(o.code, kExitIoError) << o.out;
  EXPECT_NE(o.err.find("error: host memory: the plan's parameters and optimizer states where they rest"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("(MemAvailable, /proc/meminfo)"), std::string::npos) << o.err;
  EXPECT_TRUE(!fs::exists(dir / "nvme") || fs::is_empty(dir / "nvme")) << "no block file left behind";
}

// A plan whose micro-batch is far beyond its GPU fails at the first op that
// allocates for it, at once: sizing the micro-batch's activations allocated
// them in host memory first (a million sequences of the small GPT asked for
// 2.2 TB, filled until the kernel killed the run).
TEST(RunCommand, AMicroBatchFarBeyondTheDeviceFailsAtItsFirstAllocation) {
  const fs::path dir = scratch("huge-micro-batch");
  const fs::path plan = small_plan(dir);
  std::ifstream in(plan);
  std::stringstream text;
  text << in.rdbuf();
  std::string huge = text.str();
  const size_t at = huge.find("\n  micro_batch: ");
  ASSERT_NE(at, std::string::npos) << huge;
  huge.replace(at, huge.find('\n', at + 1) - at, "\n  micro_batch: 1000000");
  std::ofstream(plan) << huge;
  std::vector<std::string> args = run_args(plan, dir, 1);
  args.insert(args.end(), {"--device-memory", "64 MiB"});
  const Outcome o = stowage(args);
  EXPECT_EQ(o.code, kExitIoError) << o.out;
  EXPECT_NE(o.err.find("gpu memory exhausted: 'activations fwd embedding s0 m0'"), std::string::npos)
      << o.err;
}

// A run is one schedule, which holds so many steps: more is a usage error
// naming --steps and how to train in parts, given before the model is set
// up (it was the lowering's "the training profile's gradient_accumulation:
// 1 micro-steps per step over 1000000 steps make about 120000000 ops", exit 74).
// A run lowered two steps at a time trains the losses of one schedule; its
// report and traces say they are of the first schedule, and hold its ops.
TEST(RunCommand, ARunInSchedulesTrainsTheLossesOfOneAndSaysWhatItsTracesHold) {
  const fs::path dir = scratch("schedules");
  const fs::path plan = small_plan(dir);
  const Outcome whole = stowage(run_args(plan, dir, 5));
  ASSERT_EQ(whole.code, kExitOk) << whole.err;
  std::vector<std::string> args = run_args(plan, dir, 5);
  args.insert(args.end(), {"--steps-per-schedule", "2", "--trace", (dir / "measured.json").string(),
                           "--predicted-trace", (dir / "predicted.json").string()});
  const Outcome split = stowage(args);
  ASSERT_EQ(split.code, kExitOk) << split.err;
  const json a = json::parse(whole.out), b = json::parse(split.out);
  EXPECT_EQ(a["schedules"], 1);
  EXPECT_EQ(a["steps_per_schedule"], 5);
  EXPECT_EQ(b["schedules"], 3);
  EXPECT_EQ(b["steps_per_schedule"], 2);
  EXPECT_EQ(b["losses"], a["losses"]);
  for (const char* which : {"measured", "predicted"}) {
    std::ifstream in(dir / (std::string(which) + ".json"));
    const json trace = json::parse(in);
    int nvme_reads = 0;
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] == "X" && e["args"]["kind"] == "read_states") ++nvme_reads;
    }
    EXPECT_EQ(nvme_reads, 4 * 2) << which;  // four partitions, the first schedule's two steps
  }
  std::vector<std::string> text_args = run_args(plan, dir, 5);
  text_args.pop_back();  // --json: the text report
  text_args.insert(text_args.end(), {"--steps-per-schedule", "2", "--trace", (dir / "text.json").string()});
  const Outcome text = stowage(text_args);
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_NE(text.out.find("the run was 3 schedules of up to 2 steps (--steps-per-schedule)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("measured trace (steps 1-2, the first schedule): "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("over all 5"), std::string::npos) << text.out;
  // Where it ran, beside the prediction's machine, which is another's.
  EXPECT_NE(
      text.out.find(" Stowage CPU backend (cpu backend); the prediction is for workstation-24gb-1nvme, GPU "
                    "NVIDIA GeForce RTX 4090 24GB\n"),
      std::string::npos)
      << text.out;
  // Each step's line but the last says how long the rest will take.
  std::istringstream lines(text.out);
  int with_eta = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("  step ") != 0) continue;
    const bool eta = line.find(" tokens/s  eta ") != std::string::npos;
    EXPECT_EQ(eta, line.find("step    5/5") == std::string::npos) << line;
    with_eta += eta ? 1 : 0;
  }
  EXPECT_EQ(with_eta, 4) << text.out;
  EXPECT_EQ(stowage({"run", plan.string(), "--steps-per-schedule", "0"}).code, kExitUsage);
  const Outcome too_many = stowage({"run", plan.string(), "--steps-per-schedule", "1000000"});
  EXPECT_EQ(too_many.code, kExitUsage);
  EXPECT_NE(too_many.err.find("error: --steps-per-schedule 1000000: a schedule of this plan holds at most "),
            std::string::npos)
      << too_many.err;
}

TEST(RunCommand, BadArgumentsAreUsageErrors) {
  const fs::path dir = scratch("usage");
  const fs::path plan = small_plan(dir);
  EXPECT_EQ(stowage({"run", plan.string(), "--device-memory", "lots"}).code, kExitUsage);
  EXPECT_EQ(stowage({"run", plan.string(), "--fault", "disk:1"}).code, kExitUsage);
  EXPECT_EQ(stowage({"run", plan.string(), "--resume", "latest"}).code, kExitUsage);
  const Outcome block =
      stowage({"run", plan.string(), "--block-size", "1000", "--nvme-dir", (dir / "nvme").string()});
  EXPECT_EQ(block.code, kExitUsage);  // issue 12: it was 65, as for a bad plan
  // Named by the argument it came from (issue 12 item 7: it said "nvme: block size").
  EXPECT_NE(block.err.find("error: --block-size: block size 1000 bytes"), std::string::npos) << block.err;
  const Outcome folder = stowage({"run", plan.string(), "--nvme-dir", ""});
  EXPECT_EQ(folder.code, kExitUsage);
  EXPECT_NE(folder.err.find("error: --nvme-dir: empty directory name"), std::string::npos) << folder.err;
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

// A real `stowage run` process, sent `signal_number` as soon as `trigger`
// exists (polled every 100 us, so it lands within a fraction of a
// millisecond of the file's creation); returns its wait status. Its stderr
// goes to `stderr_file`.
int signal_when_exists(std::vector<std::string> args, const fs::path& trigger, int signal_number,
                       const fs::path& stderr_file) {
  args.insert(args.begin(), STOWAGE_BINARY);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(), O_WRONLY | O_CREAT, 0644);
  pid_t child = 0;
  const int spawned = posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(spawned, 0);
  if (spawned != 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  std::error_code ignored;
  while (!fs::exists(trigger, ignored) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  kill(child, signal_number);
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// With a checkpoint every 4 steps of a long run, signalled once its
// checkpoint of step 4 exists.
int signal_after_step_4(std::vector<std::string> args, const fs::path& root, int signal_number,
                        const fs::path& stderr_file) {
  args.insert(args.end(), {"--checkpoint-dir", root.string(), "--checkpoint-every", "4"});
  return signal_when_exists(std::move(args), root / "step-000004", signal_number, stderr_file);
}

TEST(RunCommand, AKilledRunResumesWithTheSameLosses) {
  const fs::path dir = scratch("kill");
  const fs::path plan = small_plan(dir);
  const json straight = run_json(run_args(plan, dir, 8));
  ASSERT_EQ(straight["losses"].size(), 8u);

  // A real process, killed with SIGKILL once its checkpoint of step 4 exists.
  const fs::path root = dir / "checkpoints";
  const int status = signal_after_step_4(run_args(plan, dir / "killed", 1000), root, SIGKILL, dir / "stderr");
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before it was killed";
  ASSERT_TRUE(fs::exists(root / "step-000004"));

  std::vector<std::string> resume = run_args(plan, dir / "resumed", 8);
  resume.insert(resume.end(), {"--checkpoint-dir", root.string(), "--resume", (root / "step-000004").string()});
  const json resumed = run_json(resume);
  ASSERT_EQ(resumed["first_step"], 4);
  ASSERT_EQ(resumed["losses"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(resumed["losses"][i].get<double>(), straight["losses"][4 + i].get<double>()) << i;
}

// SIGINT ends a run cleanly (issue 12): the steps under way finish, a final
// checkpoint holds the last whole step, the NVMe block files are gone, the
// exit code is 130, and a resume continues with the uninterrupted losses.
TEST(RunCommand, SigintWritesAFinalCheckpointAndCleansUp) {
  const fs::path dir = scratch("sigint");
  const fs::path plan = small_plan(dir);
  const json straight = run_json(run_args(plan, dir / "straight", 24));
  const fs::path root = dir / "checkpoints";
  const int status = signal_after_step_4(run_args(plan, dir / "stopped", 1000), root, SIGINT, dir / "stderr");
  ASSERT_TRUE(WIFEXITED(status)) << "killed instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  std::ifstream err_file(dir / "stderr");
  const std::string err((std::istreambuf_iterator<char>(err_file)), {});
  EXPECT_NE(err.find("stopped by signal 2 after step"), std::string::npos) << err;
  for (const auto& entry : fs::directory_iterator(dir / "stopped" / "nvme")) {
    EXPECT_NE(entry.path().extension(), ".blocks") << entry.path() << " left behind";
  }
  auto latest = executor::find_latest(root);
  ASSERT_TRUE(latest && *latest);
  const std::string name = (*latest)->filename().string();
  const int at = std::stoi(name.substr(name.find('-') + 1));
  EXPECT_GE(at, 4);
  ASSERT_LT(at, 22) << "the run went on long after SIGINT";
  std::vector<std::string> resume = run_args(plan, dir / "resumed", at + 2);
  resume.insert(resume.end(), {"--checkpoint-dir", root.string(), "--resume", (*latest)->string()});
  const json resumed = run_json(resume);
  ASSERT_EQ(resumed["losses"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(resumed["losses"][i].get<double>(), straight["losses"][static_cast<size_t>(at) + i].get<double>()) << i;
  }
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
  EXPECT_EQ(o.code, kExitBadInput);  // a damaged input, like a bad plan (issue 12: it was 74)
  EXPECT_NE(o.err.find("truncated checkpoint"), std::string::npos) << o.err;
}

// A hang is never silent: a backend call that never returns (injected)
// stops the run after --watchdog seconds with each lane's state, exit 74.
TEST(RunCommand, TheWatchdogStopsAHungRunAndSaysWhere) {
  const fs::path dir = scratch("watchdog");
  std::vector<std::string> args = run_args(small_plan(dir), dir, 3);
  args.insert(args.end(), {"--fault", "compute:4:hang", "--watchdog", "0.5"});
  const auto started = std::chrono::steady_clock::now();
  const Outcome o = stowage(args);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  EXPECT_EQ(o.code, kExitIoError) << o.err;
  EXPECT_NE(o.err.find("(watchdog)"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("gpu.compute: runs '"), std::string::npos) << o.err;
}

// Issue 12: a --resume directory that does not exist exited 74, "a run that
// failed"; it is bad input, named.
// SIGTERM (what a job scheduler sends) ends the run as SIGINT does, with 143.
TEST(RunCommand, SigtermWritesAFinalCheckpointAndExits143) {
  const fs::path dir = scratch("sigterm");
  const fs::path root = dir / "checkpoints";
  const int status =
      signal_after_step_4(run_args(small_plan(dir), dir / "stopped", 1000), root, SIGTERM, dir / "stderr");
  ASSERT_TRUE(WIFEXITED(status)) << "killed instead of stopping";
  EXPECT_EQ(WEXITSTATUS(status), 143);
  std::ifstream err_file(dir / "stderr");
  const std::string err((std::istreambuf_iterator<char>(err_file)), {});
  EXPECT_NE(err.find("stopped by signal 15 after step"), std::string::npos) << err;
  for (const auto& entry : fs::directory_iterator(dir / "stopped" / "nvme")) {
    EXPECT_NE(entry.path().extension(), ".blocks") << entry.path() << " left behind";
  }
  auto latest = executor::find_latest(root);
  ASSERT_TRUE(latest && *latest);
  EXPECT_TRUE(executor::load_checkpoint(**latest)) << "the final checkpoint does not load";
}

// A signal while the run is still being set up, the moment its NVMe block
// file exists: the run stops before training and removes the file. The
// handlers used to be installed only just before training, so a SIGTERM
// then ended the process at once and left the block file (and its lock)
// for the next run to refuse as "not created by this run".
TEST(RunCommand, ASignalDuringSetupLeavesNoBlockFileBehind) {
  const fs::path dir = scratch("sigterm-setup");
  const fs::path plan = small_plan(dir);
  for (int attempt = 0; attempt < 3; ++attempt) {
    SCOPED_TRACE(attempt);
    const fs::path out = dir / ("run" + std::to_string(attempt));
    fs::create_directories(out);
    const int status =
        signal_when_exists(run_args(plan, out, 1000), out / "nvme" / "stowage-0.blocks", SIGTERM, out / "stderr");
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                                   << " instead of stopping";
    EXPECT_EQ(WEXITSTATUS(status), 143);
    std::ifstream err_file(out / "stderr");
    const std::string err((std::istreambuf_iterator<char>(err_file)), {});
    EXPECT_NE(err.find("stopped by signal 15"), std::string::npos) << err;
    for (const auto& entry : fs::directory_iterator(out / "nvme")) {
      EXPECT_NE(entry.path().extension(), ".blocks") << entry.path() << " left behind";
    }
    // And the next run in the same folder starts as if none had been.
    const Outcome again = stowage(run_args(plan, out, 1));
    EXPECT_EQ(again.code, kExitOk) << again.err;
  }
}

TEST(RunCommand, AMissingResumeCheckpointIsBadInput) {
  const fs::path dir = scratch("no-resume");
  std::vector<std::string> args = run_args(small_plan(dir), dir, 2);
  args.insert(args.end(), {"--resume", (dir / "step-000009").string()});
  const Outcome o = stowage(args);
  EXPECT_EQ(o.code, kExitBadInput);
  EXPECT_NE(o.err.find((dir / "step-000009").string()), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir / "nvme")) << "set up before the checkpoint was looked at";
}

// Each key of a `run --json` object is named in docs/json.md's section for it.
void expect_documented_run_json(const json& printed) {
  std::ifstream docs(STOWAGE_TEST_DATA_DIR "/../../docs/json.md");
  std::stringstream text;
  text << docs.rdbuf();
  const std::string all = text.str();
  const size_t start = all.find("## `stowage run --json`");
  ASSERT_NE(start, std::string::npos);
  const std::string section = all.substr(start, all.find("\n## ", start + 1) - start);
  ASSERT_TRUE(printed.is_object()) << printed;
  for (const auto& [key, value] : printed.items())
    EXPECT_NE(section.find("`" + key + "`"), std::string::npos) << key << " is not in docs/json.md";
}

// Issue 12 item 7: a --data corpus too small for the sequence length, and a
// checkpoint made with another seed, exited 74 ("a run that failed"). Both
// are bad input (65, README), each named.
TEST(RunCommand, ATooSmallCorpusOrAnotherRunsCheckpointIsBadInput) {
  const fs::path dir = scratch("inputs");
  const fs::path plan = small_plan(dir);
  const fs::path corpus = dir / "tiny.txt";
  std::ofstream(corpus) << "too short";
  std::vector<std::string> small = run_args(plan, dir, 1);
  small.insert(small.end(), {"--data", corpus.string()});
  const Outcome o = stowage(small);
  EXPECT_EQ(o.code, kExitBadInput) << o.err;
  EXPECT_NE(o.err.find(corpus.string() + ": corpus of 9 bytes is too small"), std::string::npos) << o.err;

  const fs::path root = dir / "checkpoints";
  std::vector<std::string> first = run_args(plan, dir, 1);
  first.insert(first.end(), {"--checkpoint-dir", root.string(), "--seed", "3"});
  const Outcome trained = stowage(first);
  ASSERT_EQ(trained.code, kExitOk) << trained.err;
  // Every key `run --json` prints is documented (issue 12: some were not).
  expect_documented_run_json(json::parse(trained.out));
  std::vector<std::string> other = run_args(plan, dir, 2);
  other.insert(other.end(), {"--resume", (root / "step-000001").string(), "--seed", "4"});
  const Outcome resumed = stowage(other);
  EXPECT_EQ(resumed.code, kExitBadInput) << resumed.err;
  EXPECT_NE(resumed.err.find((root / "step-000001" / "manifest.json").string() +
                             ": the checkpoint was made for another plan, model or seed"),
            std::string::npos)
      << resumed.err;
}

// Issue 12: output paths were checked only after training, so a bad one
// lost every trained step. Now the run stops before it starts: not even
// the NVMe directory is created.
TEST(RunCommand, BadOutputPathsAreRefusedBeforeTraining) {
  const fs::path dir = scratch("outputs");
  const fs::path plan = small_plan(dir);
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  std::ofstream(dir / "a-file") << "not a folder";
  const std::vector<std::vector<std::string>> bad{
      {"--trace", (dir / "missing" / "t.json").string()},
      {"--predicted-trace", (dir / "fifo.json").string()},
      {"--checkpoint-dir", (dir / "a-file").string()},
      {"--export-weights", (dir / "missing" / "w.safetensors").string()},  // was found after training
      {"--export-weights", (dir / "fifo.json").string()},
  };
  for (const std::vector<std::string>& extra : bad) {
    std::vector<std::string> args = run_args(plan, dir, 2);
    args.insert(args.end(), extra.begin(), extra.end());
    const Outcome o = stowage(args);
    EXPECT_EQ(o.code, kExitCannotWrite) << extra[0] << ": " << o.err;
    EXPECT_NE(o.err.find(extra[1]), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(dir / "nvme")) << extra[0] << ": training had started";
  }
  EXPECT_TRUE(fs::is_fifo(dir / "fifo.json"));
}

// Issue 12: a user's step-000001/ (no manifest) in the checkpoint root was
// kept but the run failed at its first checkpoint, after training. It is
// refused before training, named, and left as it was; so is a file of that
// name. A step past --steps is no obstacle.
TEST(RunCommand, AUsersStepNamedEntryInTheCheckpointRootIsRefusedBeforeTraining) {
  const fs::path dir = scratch("foreign-step");
  const fs::path plan = small_plan(dir);
  const fs::path root = dir / "checkpoints";
  fs::create_directories(root / "step-000001");
  std::ofstream(root / "step-000001" / "notes.txt") << "mine";
  std::ofstream(root / "step-000002") << "also mine";
  fs::create_directories(root / "step-000009");
  std::vector<std::string> args = run_args(plan, dir, 2);
  args.insert(args.end(), {"--checkpoint-dir", root.string(), "--checkpoint-every", "1"});
  const Outcome o = stowage(args);
  EXPECT_EQ(o.code, kExitCannotWrite) << o.err;
  EXPECT_NE(o.err.find((root / "step-000001").string() + ": not a Stowage checkpoint"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("and 1 more"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir / "nvme")) << "training had started";
  EXPECT_TRUE(fs::exists(root / "step-000001" / "notes.txt"));
  EXPECT_TRUE(fs::is_regular_file(root / "step-000002"));
  fs::remove_all(root / "step-000001");
  fs::remove(root / "step-000002");
  const Outcome ok = stowage(args);
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_TRUE(fs::is_directory(root / "step-000009"));
}

// Issue 12: two runs on one checkpoint root destroyed each other's
// checkpoints. The second is refused at once, naming the first's process.
TEST(RunCommand, ALockedCheckpointRootIsRefusedNamingTheHolder) {
  const fs::path dir = scratch("locked");
  const fs::path plan = small_plan(dir);
  auto held = executor::DirectoryLock::acquire(dir / "checkpoints", "checkpoint directory");
  ASSERT_TRUE(held);
  std::vector<std::string> args = run_args(plan, dir, 2);
  args.insert(args.end(), {"--checkpoint-dir", (dir / "checkpoints").string()});
  const Outcome o = stowage(args);
  EXPECT_EQ(o.code, kExitCannotWrite);
  EXPECT_NE(o.err.find("in use by another stowage run (process " + std::to_string(::getpid()) + ")"),
            std::string::npos)
      << o.err;
}

// The same for an --nvme-dir (two runs in one folder share the default
// ./stowage-nvme), and for a block file there that this run did not make.
TEST(RunCommand, ALockedNvmeDirectoryOrAForeignBlockFileIsRefused) {
  const fs::path dir = scratch("nvme-locked");
  const fs::path plan = small_plan(dir);
  {
    auto held = executor::DirectoryLock::acquire(dir / "nvme", "NVMe directory");
    ASSERT_TRUE(held);
    const Outcome o = stowage(run_args(plan, dir, 2));
    EXPECT_EQ(o.code, kExitCannotWrite);
    EXPECT_NE(
        o.err.find("NVMe directory is in use by another stowage run (process " + std::to_string(::getpid())),
        std::string::npos)
        << o.err;
  }
  std::ofstream(dir / "nvme" / "stowage-0.blocks") << "mine";
  const Outcome o = stowage(run_args(plan, dir, 2));
  EXPECT_EQ(o.code, kExitCannotWrite);
  EXPECT_NE(o.err.find("already exists and this run did not create it"), std::string::npos) << o.err;
  std::ifstream in(dir / "nvme" / "stowage-0.blocks");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "mine");
}

// --backend cuda where it cannot run says why, before anything is set up:
// no NVMe files are made. (On a GPU machine the backend's own tests train.)
TEST(RunCommand, TheCudaBackendWhereItCannotRunSaysWhyAndMakesNothing) {
  const fs::path dir = scratch("cuda-backend");
  std::vector<std::string> args = run_args(small_plan(dir), dir, 2);
  args.insert(args.end(), {"--backend", "cuda"});
  const Outcome o = stowage(args);
#ifdef STOWAGE_HAVE_CUDA_BACKEND
  const executor::cuda::CudaPresence presence = executor::cuda::cuda_presence();
  if (presence.present()) GTEST_SKIP() << "a CUDA device is present";
  EXPECT_EQ(o.code, kExitIoError) << o.err;
  EXPECT_NE(o.err.find("cuda backend: no CUDA device: " + presence.absent_because), std::string::npos) << o.err;
#else
  EXPECT_EQ(o.code, kExitUsage) << o.err;
  EXPECT_NE(o.err.find("this stowage was built without CUDA"), std::string::npos) << o.err;
#endif
  EXPECT_FALSE(fs::exists(dir / "nvme" / "stowage-0.blocks"));
}

// A cuda-only option given with the cpu backend: a usage error naming it,
// before any NVMe block file exists. Returns the arguments, for more tries.
std::vector<std::string> expect_cuda_only(const std::string& tag, const std::vector<std::string>& option,
                                          const std::string& said) {
  const fs::path dir = scratch(tag);
  std::vector<std::string> args = run_args(small_plan(dir), dir, 2);
  args.insert(args.end(), option.begin(), option.end());
  const Outcome o = stowage(args);
  EXPECT_EQ(o.code, kExitUsage) << o.err;
  EXPECT_NE(o.err.find(said), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir / "nvme" / "stowage-0.blocks"));
  return args;
}

// --layers chooses where the cuda backend runs the layers; the cpu backend
// has no choice, and saying otherwise is a usage error, not ignored.
TEST(RunCommand, LayersOffTheDeviceAreTheCudaBackendsChoiceOnly) {
  std::vector<std::string> args =
      expect_cuda_only("layers-host", {"--layers", "host"}, "--layers host: only the cuda backend");
  args.back() = "elsewhere";
  EXPECT_EQ(stowage(args).code, kExitUsage);
}

TEST(RunCommand, HalfPrecisionProductsAreTheCudaBackendsChoiceOnly) {
  expect_cuda_only("fp16-products", {"--products", "fp16"},
                   "--products fp16: only the cuda backend's device layers");
  std::vector<std::string> args = expect_cuda_only("bf16-products", {"--products", "bf16"},
                                                   "--products bf16: only the cuda backend's device layers");
  args.back() = "fp8";  // not a precision the GPU's products have
  const Outcome o = stowage(args);
  EXPECT_EQ(o.code, kExitUsage);
  EXPECT_NE(o.err.find("fp8"), std::string::npos) << o.err;
}

TEST(RunCommand, EnqueuingOnlyIsTheCudaBackendsChoiceOnly) {
  expect_cuda_only("enqueue-only", {"--enqueue-only"}, "--enqueue-only: only the cuda backend");
}

// Issue 12: re-running a finished job with --resume latest segfaulted.
TEST(RunCommand, ResumingAtOrAfterTheLastStepHasNothingToDo) {
  const fs::path dir = scratch("finished");
  const fs::path plan = small_plan(dir);
  const fs::path root = dir / "checkpoints";
  std::vector<std::string> args = run_args(plan, dir, 2);
  args.insert(args.end(), {"--checkpoint-dir", root.string()});
  run_json(args);
  for (const char* steps : {"2", "1"}) {
    const Outcome o =
        stowage({"run", plan.string(), "--steps", steps, "--nvme-dir", (dir / "nvme").string(),
                 "--block-size", "64KiB", "--checkpoint-dir", root.string(), "--resume", "latest"});
    EXPECT_EQ(o.code, kExitOk) << o.err;
    EXPECT_NE(
        o.out.find("nothing to do: the checkpoint " + (root / "step-000002").string() + " is at step 2"),
        std::string::npos)
        << o.out;
  }
  // The same with --json: the short object, its keys documented too.
  const Outcome j = stowage({"run", plan.string(), "--steps", "2", "--nvme-dir", (dir / "nvme").string(),
                             "--block-size", "64KiB", "--checkpoint-dir", root.string(), "--resume", "latest",
                             "--json"});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  const json nothing = json::parse(j.out);
  EXPECT_TRUE(nothing["nothing_to_do"].get<bool>());
  EXPECT_EQ(nothing["first_step"], 2);
  expect_documented_run_json(nothing);
}

// Issue 12: --data /dev/zero grew without bound; a FIFO blocked forever.
// (The corpus loader refuses them too: tests/core/text_file_test.cpp.)
TEST(RunCommand, DataThatIsNotARegularFileIsRefused) {
  const fs::path dir = scratch("data");
  const fs::path plan = small_plan(dir);
  ASSERT_EQ(::mkfifo((dir / "corpus").c_str(), 0600), 0);
  for (const std::string& data : {std::string("/dev/zero"), (dir / "corpus").string()}) {
    std::vector<std::string> args = run_args(plan, dir, 1);
    args.insert(args.end(), {"--data", data});
    const Outcome o = stowage(args);
    EXPECT_EQ(o.code, kExitUsage);
    EXPECT_NE(o.err.find("--data: '" + data + "' is not a regular file"), std::string::npos) << o.err;
  }
}

// Issue 12: both were accepted silently; a fault that never fires lets a
// fault test pass without testing anything.
TEST(RunCommand, ANegativeSeedOrAZerothFaultIsRefusedNamingTheArgument) {
  const fs::path dir = scratch("args");
  const fs::path plan = small_plan(dir);
  const Outcome seed = stowage({"run", plan.string(), "--seed", "-1"});
  EXPECT_EQ(seed.code, kExitUsage);
  EXPECT_NE(seed.err.find("--seed"), std::string::npos) << seed.err;
  for (const char* fault : {"block-write:0", "block-write:-3", "block-write:2x"}) {
    const Outcome o = stowage({"run", plan.string(), "--fault", fault});
    EXPECT_EQ(o.code, kExitUsage) << fault;  // an argument (README's table); it was 65
    EXPECT_NE(o.err.find("--fault '" + std::string(fault) + "' is not KIND:N"), std::string::npos) << o.err;
  }
}

// The two-block Llama of tests/data/executor under an NVMe-offloading plan:
// it trains, its weights go out as safetensors and start a second run, and
// a weights file of another model is bad input before anything runs.
TEST(RunCommand, ALlamaTrainsAndItsWeightsGoOutAndComeBackIn) {
  const fs::path dir = scratch("llama");
  const std::string data = STOWAGE_TEST_DATA_DIR "/executor/";
  const fs::path plan = dir / "llama.yaml";
  ASSERT_EQ(stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", beside(dir, "small-llama.yaml"),
                     "--training", beside(dir, "small-training.yaml"), "--placement", "zero-infinity",
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

namespace stowage::cli {
namespace {

// `args` run by a real stowage process with stdout to `out_file`; its wait status.
int run_process(std::vector<std::string> args, const fs::path& out_file) {
  args.insert(args.begin(), STOWAGE_BINARY);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t child = 0;
  const int spawned = posix_spawn(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  waitpid(child, &status, 0);
  return status;
}

// Issue 17's check on the bundled plan: the tiny Llama with its optimizer
// states on NVMe and the device capped below what all-device needs learns,
// and its loss curve is the all-device plan's, bit for bit, the two run in
// different processes.
TEST(RunCommand, TheBundledLlamaPlanLearnsTheAllDeviceLossCurveInAnotherProcess) {
  const fs::path dir = scratch("llama-bundled");
  const fs::path bundled = fs::path(STOWAGE_TEST_DATA_DIR) / ".." / ".." / "plans" / "tiny-llama-nvme.yaml";
  std::ifstream in(bundled);
  std::stringstream text;
  text << in.rdbuf();
  std::string all_device = text.str();
  const std::string offloaded = "{param16: cpu, optimizer_states: nvme, optimizer: cpu, gradients: cpu}";
  for (size_t at; (at = all_device.find(offloaded)) != std::string::npos;)
    all_device.replace(at, offloaded.size(), "{param16: gpu, optimizer_states: gpu, optimizer: gpu, gradients: gpu}");
  all_device = all_device.substr(0, all_device.find("predicted:"));
  std::ofstream(dir / "all-device.yaml") << all_device;

  const int steps = 24;
  const int status = run_process({"run", bundled.string(), "--steps", std::to_string(steps), "--device-memory",
                                  "72MiB", "--nvme-dir", (dir / "nvme").string(), "--checkpoint-dir",
                                  (dir / "checkpoints").string(), "--json"},
                                 dir / "offloaded.json");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kExitOk) << status;
  std::ifstream offloaded_out(dir / "offloaded.json");
  const json nvme = json::parse(offloaded_out);
  const json device = run_json({"run", (dir / "all-device.yaml").string(), "--steps", std::to_string(steps),
                                "--checkpoint-dir", (dir / "checkpoints-device").string(), "--json"});
  ASSERT_EQ(nvme["losses"].size(), static_cast<size_t>(steps));
  EXPECT_EQ(nvme["losses"], device["losses"]);
  // It learns more than the bytes' frequencies: held-out 2.69 nats/byte at step 24 against 2.98.
  EXPECT_LT(nvme["held_out_loss"].get<double>(), nvme["unigram_entropy"].get<double>());
  // The cap is real: all-device does not fit under it.
  const Outcome capped = stowage({"run", (dir / "all-device.yaml").string(), "--steps", "1", "--device-memory",
                                  "72MiB", "--checkpoint-dir", (dir / "checkpoints-capped").string()});
  EXPECT_NE(capped.code, kExitOk);
  EXPECT_NE(capped.err.find("gpu memory exhausted"), std::string::npos) << capped.err;
}

}  // namespace
}  // namespace stowage::cli
