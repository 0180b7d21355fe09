// The calibration commands from the command line: compare of a trace with
// itself and with a copy whose one lane is slowed, profile's refusal to
// replace a file it did not write, calibrate writing a profile that loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/cli/run_stowage.h"

namespace stowage::cli {
namespace {

namespace fs = std::filesystem;
using testing::stowage;

class CalibrationCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path("calibration_commands_test_") /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A predicted trace of tiny-gpt under ZeRO-Infinity's placement, 3 steps.
  std::string trace() {
    const std::string t = path("predicted.json");
    const auto r =
        stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt", "--training",
                 "tiny", "--placement", "zero-infinity", "--steps", "3", "--trace", t});
    EXPECT_EQ(r.code, 0) << r.err;
    return t;
  }

  // A copy of the trace at `predicted` labelled as measured (otherData.source),
  // beside it: the simulator's own timeline as a run that went exactly as predicted.
  std::string as_measured(const std::string& predicted) {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(predicted));
    j["otherData"]["source"] = "measured";
    const std::string measured = path("as-measured.json");
    std::ofstream(measured) << j.dump();
    return measured;
  }

  // Stowage's prediction of what the committed PyTorch profiler trace ran:
  // tiny-llama under ZeRO-Offload's placement.
  std::string tiny_llama_zero_offload() {
    const std::string t = path("tiny-llama-predicted.json");
    const auto r = stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-llama",
                            "--training", "tiny", "--placement", "zero-offload", "--trace", t});
    EXPECT_EQ(r.code, 0) << r.err;
    return t;
  }

  fs::path dir_;
};

TEST_F(CalibrationCommands, ATraceAgainstItselfHasNoError) {
  const std::string t = trace();
  const auto r = stowage({"compare", t, t, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["step_error"].get<double>(), 0);
  for (const auto& [lane, e] : j["busy_error"].items()) EXPECT_EQ(e.get<double>(), 0) << lane;
  EXPECT_TRUE(j["most_wrong_lane"].is_null());
  const auto text = stowage({"compare", t, t});
  EXPECT_NE(text.out.find("error +0.0%"), std::string::npos) << text.out;
}

// The trace's own ops simulated again on the machine it was predicted for
// give the same timeline: what --machine predicts is what `simulate` did.
TEST_F(CalibrationCommands, PredictingATraceAgainOnItsMachineHasNoError) {
  const std::string t = trace();
  const auto r = stowage({"compare", "--machine", "workstation-24gb-1nvme", t, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["step_error"].get<double>(), 0) << r.out;
}

// What a prediction rests on comes with the comparison: the warnings a
// predicted trace carries, or the re-simulation's own on a machine whose
// drive gives no post-cache write rate, where the ops write to NVMe; none
// for ops that write nothing.
TEST_F(CalibrationCommands, SaysWhatThePredictionRestsOn) {
  const std::string infinity = path("infinity.json");
  ASSERT_EQ(stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt", "--training", "tiny",
                     "--placement", "zero-infinity", "--trace", infinity})
                .code,
            0);
  const auto warnings_of = [](const std::vector<std::string>& args) {
    const auto r = stowage(args);
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["warnings"];
  };
  const nlohmann::json carried = warnings_of({"compare", infinity, infinity, "--json"});
  ASSERT_EQ(carried.size(), 1u) << carried;
  EXPECT_NE(carried[0].get<std::string>().find("assumed 1.725 GB/s"), std::string::npos) << carried;
  const std::string again = path("again.json");
  EXPECT_EQ(warnings_of({"compare", "--machine", "workstation-24gb-1nvme", infinity, "--json", "--predicted-trace",
                         again}),
            carried);
  std::ifstream written(again);
  EXPECT_EQ(nlohmann::json::parse(written)["otherData"]["warnings"], carried);
  const std::string offload = tiny_llama_zero_offload();
  EXPECT_TRUE(warnings_of({"compare", "--machine", "workstation-24gb-1nvme", offload, "--json"}).empty());
  const auto text = stowage({"compare", infinity, infinity});
  EXPECT_EQ(text.out.rfind("warning: Samsung 990 PRO 2 TB", 0), 0u) << text.out;
}

// Every cpu.optim op twice as long in the "measured" file: compare names
// that lane as the most wrong.
TEST_F(CalibrationCommands, ALaneSlowedTwiceIsNamed) {
  const std::string t = trace();
  std::ifstream in(t);
  nlohmann::json j = nlohmann::json::parse(in);
  for (auto& e : j["traceEvents"]) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == "cpu.optim") e["dur"] = e["dur"].get<double>() * 2;
  }
  const std::string slowed = path("slowed.json");
  std::ofstream(slowed) << j.dump();
  const auto r = stowage({"compare", t, slowed});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("most wrong lane: cpu.optim"), std::string::npos) << r.out;
}

// The measured trace given first and the predicted one second is refused
// with the order to give them in (it printed every error with its sign
// turned); two runs, or two predictions, compare in either order.
TEST_F(CalibrationCommands, AMeasuredTraceGivenAsThePredictionIsRefused) {
  const std::string predicted = trace(), measured = as_measured(predicted);
  const auto swapped = stowage({"compare", measured, predicted});
  EXPECT_EQ(swapped.code, 2);
  EXPECT_NE(
      swapped.err.find("error: " + measured + " is a measured trace and " + predicted +
                       " a predicted one (otherData.source); give the prediction first: stowage compare " +
                       predicted + " " + measured),
      std::string::npos)
      << swapped.err;
  EXPECT_EQ(stowage({"compare", predicted, measured}).code, 0);
  EXPECT_EQ(stowage({"compare", measured, measured}).code, 0);
  EXPECT_EQ(stowage({"compare", predicted, predicted}).code, 0);
}

TEST_F(CalibrationCommands, TracesOfDifferentSchedulesAreBadInput) {
  const std::string t = trace();
  const std::string other = path("other.json");
  ASSERT_EQ(stowage({"simulate", "--machine", "workstation-24gb-1nvme", "--model", "tiny-gpt", "--training",
                     "tiny", "--placement", "zero-offload", "--trace", other})
                .code,
            0);
  EXPECT_EQ(stowage({"compare", t, other}).code, 65);
}

// Two bad traces are both reported at once, whichever kind the measured
// one looked like, in the order given (it reported the measured one alone).
TEST_F(CalibrationCommands, TwoBadTracesAreBothReported) {
  const std::string truncated = path("truncated.json"), other = path("other.json");
  std::ofstream(truncated) << "{";
  std::ofstream(other) << R"({"events": []})";
  const auto r = stowage({"compare", truncated, other});
  EXPECT_EQ(r.code, 65);
  const size_t first = r.err.find("error: " + truncated + ":1:1: not JSON");
  const size_t second = r.err.find("error: " + other + ": no 'traceEvents' array");
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_NE(second, std::string::npos) << r.err;
  EXPECT_LT(first, second) << r.err;
  const std::string kineto = STOWAGE_TEST_DATA_DIR "/kineto/deepspeed-zero-offload-cpu.json";
  const auto lanes = stowage({"compare", truncated, kineto});
  EXPECT_EQ(lanes.code, 65);
  EXPECT_NE(lanes.err.find("error: " + truncated + ":1:1: not JSON"), std::string::npos) << lanes.err;
}

// A PyTorch profiler trace of a real DeepSpeed ZeRO-Offload run
// (tests/data/kineto) as the measured side: compared lane by lane against
// Stowage's prediction of the same model and placement, in text and JSON;
// --machine cannot simulate it and says why.
TEST_F(CalibrationCommands, APytorchProfilerTraceIsComparedLaneByLane) {
  const std::string predicted = tiny_llama_zero_offload();
  const std::string kineto = STOWAGE_TEST_DATA_DIR "/kineto/deepspeed-zero-offload-cpu.json";
  const auto text = stowage({"compare", predicted, kineto});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("Compared lane by lane"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("measured 1.077 s"), std::string::npos) << text.out;
  const auto r = stowage({"compare", predicted, kineto, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "stowage/compare-lanes/v1");
  EXPECT_EQ(j["measured_kind"], "pytorch-profiler-cpu-accelerator");
  EXPECT_EQ(j["lanes"]["cpu.optim"]["measured_events"], 2);
  EXPECT_GT(j["lanes"]["gpu.compute"]["busy_per_step_measured_s"].get<double>(), 0.8);
  // What no lane covers: the CPU accelerator's compute is its outermost
  // operators, so only the gaps between them (50 ms of the 1.077 s step).
  EXPECT_GT(j["no_lane_per_step_measured_s"].get<double>(), 0.0);
  EXPECT_LT(j["no_lane_per_step_measured_s"].get<double>(), 0.15);
  EXPECT_NE(text.out.find("in no lane, per step: predicted "), std::string::npos) << text.out;
  const auto simulated = stowage({"compare", "--machine", "workstation-24gb-1nvme", kineto});
  EXPECT_EQ(simulated.code, 2);
  EXPECT_NE(simulated.err.find("has no Stowage schedule to simulate"), std::string::npos) << simulated.err;
}

// A PyTorch profiler trace of a GPU run names its GPU (deviceProperties):
// set beside a prediction for another GPU, compare says the errors are the
// machines' difference, as for a Stowage run, and calibrate refuses to fit
// that profile to it; beside a prediction for its own GPU, nothing is said.
// A CPU accelerator's trace names no device, and nothing is claimed.
TEST_F(CalibrationCommands, APytorchProfilerTraceSaysWhichGpuItRanOn) {
  const std::string h200_run = STOWAGE_TEST_DATA_DIR "/kineto/deepspeed-zero-offload-h200.json";
  const std::string cpu_run = STOWAGE_TEST_DATA_DIR "/kineto/deepspeed-zero-offload-cpu.json";
  const std::string for_4090 = tiny_llama_zero_offload(), for_h200 = path("h200-predicted.json");
  const std::string h200_vm = STOWAGE_SOURCE_DIR "/bench/gpu/plans/h200-vm.yaml";
  ASSERT_EQ(stowage({"simulate", "--machine", h200_vm, "--model", "tiny-gpt", "--training", "tiny",
                     "--placement", "zero-offload", "--trace", for_h200})
                .code,
            0);

  const auto other = stowage({"compare", for_4090, h200_run});
  ASSERT_EQ(other.code, 0) << other.err;
  EXPECT_NE(other.out.find("note: the run was not on the prediction's GPU (NVIDIA GeForce RTX 4090 24GB)"),
            std::string::npos)
      << other.out;
  EXPECT_NE(other.out.find("stowage simulate --machine M --model X --placement P --trace PREDICTED.json"),
            std::string::npos)
      << other.out;
  EXPECT_NE(other.out.find("\nPredicted for workstation-24gb-1nvme, GPU NVIDIA GeForce RTX 4090 24GB.\n"
                           "Measured on NVIDIA H200 (PyTorch profiler).\nCompared lane by lane"),
            std::string::npos)
      << other.out;
  const auto other_json = stowage({"compare", for_4090, h200_run, "--json"});
  ASSERT_EQ(other_json.code, 0) << other_json.err;
  const nlohmann::json j = nlohmann::json::parse(other_json.out);
  EXPECT_EQ(j["measured_on"], (nlohmann::json{{"backend", "PyTorch profiler"}, {"device", "NVIDIA H200"}}));
  EXPECT_EQ(j["predicted_for"]["machine"], "workstation-24gb-1nvme");
  EXPECT_TRUE(j["machine_difference"].is_string());

  const auto same = stowage({"compare", for_h200, h200_run});
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.out.find("note:"), std::string::npos) << same.out;
  EXPECT_TRUE(
      same.out.starts_with("Predicted for h200-vm, GPU NVIDIA H200 SXM 141GB.\n"
                           "Measured on NVIDIA H200 (PyTorch profiler).\n"))
      << same.out;
  const auto same_json = stowage({"compare", for_h200, h200_run, "--json"});
  ASSERT_EQ(same_json.code, 0) << same_json.err;
  EXPECT_TRUE(nlohmann::json::parse(same_json.out)["machine_difference"].is_null());

  const auto cpu = stowage({"compare", for_4090, cpu_run, "--json"});
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  const nlohmann::json c = nlohmann::json::parse(cpu.out);
  EXPECT_TRUE(c["measured_on"].is_null());
  EXPECT_TRUE(c["machine_difference"].is_null());

  const std::string out = path("h200-into-4090.yaml");
  const auto refused = stowage(
      {"calibrate", h200_run, "--schedule", for_4090, "--machine", "workstation-24gb-1nvme", "-o", out});
  EXPECT_EQ(refused.code, 2);
  EXPECT_NE(refused.err.find("deepspeed-zero-offload-h200.json ran on NVIDIA H200 (PyTorch profiler), not on "
                             "the GPU of workstation-24gb-1nvme, GPU NVIDIA GeForce RTX 4090 24GB"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(fs::exists(out));
  const auto fitted =
      stowage({"calibrate", h200_run, "--schedule", for_h200, "--machine", h200_vm, "-o", out});
  EXPECT_EQ(fitted.code, 0) << fitted.err;
}

// --side-by-side writes both timelines into one trace: every op twice, the
// processes labelled and renumbered so no thread or flow id repeats.
TEST_F(CalibrationCommands, SideBySideHoldsBothTimelinesApart) {
  const std::string t = trace();
  const std::string pair = path("pair.json");
  ASSERT_EQ(stowage({"compare", t, t, "--side-by-side", pair}).code, 0);
  std::ifstream one_in(t), pair_in(pair);
  const nlohmann::json one = nlohmann::json::parse(one_in), both = nlohmann::json::parse(pair_in);
  EXPECT_EQ(both["otherData"]["format"], "stowage/trace-pair/v1");
  auto count = [](const nlohmann::json& j, const std::string& ph) {
    int n = 0;
    for (const auto& e : j["traceEvents"]) n += e.value("ph", "") == ph;
    return n;
  };
  EXPECT_EQ(count(both, "X"), 2 * count(one, "X"));
  std::set<std::string> names;
  std::map<int, std::set<int>> pids_of_tid;
  std::set<std::pair<int64_t, std::string>> flows;
  int repeated_flows = 0;
  for (const auto& e : both["traceEvents"]) {
    if (e.value("name", "") == "process_name") names.insert(e["args"]["name"].get<std::string>());
    if (e.contains("tid")) pids_of_tid[e["tid"].get<int>()].insert(e["pid"].get<int>());
    if (e.value("cat", "") == "flow")
      repeated_flows += !flows.insert({e["id"].get<int64_t>(), e["ph"]}).second;
  }
  EXPECT_TRUE(names.contains("predicted: rank 0") && names.contains("measured: rank 0"))
      << both.dump().substr(0, 400);
  for (const auto& [tid, pids] : pids_of_tid) EXPECT_EQ(pids.size(), 1u) << "tid " << tid;
  EXPECT_EQ(repeated_flows, 0);
  const auto kineto = stowage({"compare", t, STOWAGE_TEST_DATA_DIR "/kineto/deepspeed-zero-offload-cpu.json",
                               "--side-by-side", pair});
  EXPECT_EQ(kineto.code, 2);
  EXPECT_NE(kineto.err.find("--side-by-side needs two Stowage traces"), std::string::npos) << kineto.err;
}

// calibrate on a PyTorch profiler trace, lane by lane, with the ops of a
// Stowage trace of the same plan: the calibrated machine predicts the
// DeepSpeed run's step within a few percent where the uncalibrated one was
// off several-fold; without --schedule it says what to give.
TEST_F(CalibrationCommands, CalibrateFitsAPytorchProfilerTraceLaneByLane) {
  const std::string predicted = tiny_llama_zero_offload();
  const std::string kineto = STOWAGE_TEST_DATA_DIR "/kineto/deepspeed-zero-offload-cpu.json";
  const std::string out = path("calibrated.yaml");
  const auto missing = stowage({"calibrate", kineto, "--machine", "workstation-24gb-1nvme", "-o", out});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("give --schedule PREDICTED.json"), std::string::npos) << missing.err;
  const auto r = stowage(
      {"calibrate", kineto, "--schedule", predicted, "--machine", "workstation-24gb-1nvme", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("cpu.optim: cpu_core_rate, dram_efficiency"), std::string::npos) << r.out;
  auto error_with = [&](const std::string& machine) {
    const std::string again = path("again-" + std::to_string(machine.size()) + ".json");
    EXPECT_EQ(stowage({"simulate", "--machine", machine, "--model", "tiny-llama", "--training", "tiny",
                       "--placement", "zero-offload", "--trace", again})
                  .code,
              0);
    const auto c = stowage({"compare", again, kineto, "--json"});
    EXPECT_EQ(c.code, 0) << c.err;
    return nlohmann::json::parse(c.out)["step_error"].get<double>();
  };
  EXPECT_GT(std::abs(error_with("workstation-24gb-1nvme")), 1.0);
  EXPECT_LT(std::abs(error_with(out)), 0.05);
}

TEST_F(CalibrationCommands, ProfileNeverReplacesAFileItDidNotWrite) {
  const std::string mine = path("notes.yaml");
  std::ofstream(mine) << "my notes\n";
  const auto r = stowage({"profile", "--quick", "-o", mine});
  EXPECT_EQ(r.code, 73) << r.err;
  std::ifstream in(mine);
  std::stringstream kept;
  kept << in.rdbuf();
  EXPECT_EQ(kept.str(), "my notes\n");
}

// --gpu NAME: the profile's device is that bundled GPU (the host and disk
// measured as always), and the file loads and simulates; a name that is
// not bundled, a --device-memory beside it, and auto where no driver can
// name a GPU (here: no device, or no CUDA in the build) are refused before
// anything is measured, saying what to give instead.
TEST_F(CalibrationCommands, ProfileOfAGpuNamesItsBundledProfile) {
  const std::string written = path("h200-here.yaml");
  const auto made = stowage({"profile", "--quick", "--gpu", "h200", "-o", written});
  ASSERT_EQ(made.code, 0) << made.err;
  std::ifstream in(written);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\ngpu: h200\n"), std::string::npos) << text.str();
  const auto simulated = stowage({"simulate", "--machine", written, "--model", "tiny-gpt", "--training",
                                  "tiny", "--placement", "zero-offload", "--json"});
  ASSERT_EQ(simulated.code, 0) << simulated.err;
  EXPECT_GT(nlohmann::json::parse(simulated.out)["step_time_s"].get<double>(), 0);

  const std::string untouched = path("untouched.yaml");
  const auto unknown = stowage({"profile", "--gpu", "h100", "-o", untouched});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("--gpu 'h100' is not a bundled GPU profile (did you mean one of 'h100-pcie', "
                             "'h100-sxm'? expected auto or one of: a10, "),
            std::string::npos)
      << unknown.err;
  EXPECT_NE(unknown.err.find("h100-sxm"), std::string::npos) << unknown.err;
  const auto capped = stowage({"profile", "--gpu", "h200", "--device-memory", "4 GiB"});
  EXPECT_EQ(capped.code, 2);
  EXPECT_NE(capped.err.find("--device-memory caps the CPU backend's device"), std::string::npos)
      << capped.err;
  const auto automatic = stowage({"profile", "--gpu", "auto", "-o", untouched});
  EXPECT_EQ(automatic.code, 2);
  EXPECT_TRUE(automatic.err.starts_with("error: --gpu auto: ")) << automatic.err;
  EXPECT_NE(automatic.err.find("; name the GPU's profile with --gpu NAME (stowage profiles gpu)"),
            std::string::npos)
      << automatic.err;
  EXPECT_FALSE(fs::exists(untouched));
}

// Calibrating on a trace the simulator made for the same machine changes
// little, and the written profile loads with its calibration. The trace
// writes to the workstation's drive, whose post-cache rate is assumed:
// said before the fit, once.
TEST_F(CalibrationCommands, CalibrateWritesAProfileThatLoads) {
  const std::string predicted = trace();
  const std::string out = path("calibrated.yaml");
  // A prediction is not a run to fit: refused, fitted or held out.
  for (const std::vector<std::string>& traces :
       {std::vector<std::string>{predicted},
        std::vector<std::string>{as_measured(predicted), "--hold-out", predicted}}) {
    std::vector<std::string> args{"calibrate"};
    args.insert(args.end(), traces.begin(), traces.end());
    args.insert(args.end(), {"--machine", "workstation-24gb-1nvme", "-o", out});
    const auto refused = stowage(args);
    EXPECT_EQ(refused.code, 2);
    EXPECT_NE(refused.err.find("error: " + predicted + " is a predicted trace (otherData.source)"),
              std::string::npos)
        << refused.err;
    EXPECT_FALSE(fs::exists(out));
  }
  // The simulator's own timeline, as if measured: the fit finds what it simulated.
  const std::string t = as_measured(predicted);
  const auto r = stowage({"calibrate", t, "--hold-out", t, "--machine", "workstation-24gb-1nvme", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("hold-out"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind("warning: Samsung 990 PRO 2 TB (samsung-990-pro-2tb) gives no write rate", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("warning:", 1), std::string::npos) << r.out;
  const auto sim = stowage({"compare", "--machine", out, t, "--json"});
  ASSERT_EQ(sim.code, 0) << sim.err;
  const double e = nlohmann::json::parse(sim.out)["step_error"].get<double>();
  EXPECT_LT(std::abs(e), 0.05) << sim.out;
  // A second calibrate may replace what the first wrote.
  EXPECT_EQ(stowage({"calibrate", t, "--machine", out, "-o", out}).code, 0);
}

}  // namespace
}  // namespace stowage::cli
