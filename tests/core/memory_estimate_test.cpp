#include "core/memory_estimate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

// DeepSpeed's published estimators, transcribed from DeepSpeed 0.19.8's
// deepspeed/runtime/zero/stage_1_and_2.py (estimate_zero2_model_states_mem_needs)
// and deepspeed/runtime/zero/stage3.py (estimate_zero3_model_states_mem_needs),
// one node, additional_buffer_factor 1.5. Returns {cpu, gpu} bytes.
// (EveryBundledMachineModelAndPlacementMatchesDeepSpeedItself below holds
// Stowage to the installed DeepSpeed's own output instead.)
struct DeepSpeedFigures {
  int64_t cpu;
  int64_t gpu;
};

DeepSpeedFigures deepspeed_zero2(double total_params, int gpus, bool cpu_offload) {
  if (cpu_offload) {
    return {static_cast<int64_t>(total_params * std::max(4.0 * gpus, 16.0) * 1.5),
            static_cast<int64_t>(2 * total_params)};
  }
  // 2 = params_16bit, 18 = (2 grads16 + 4 grads32 + 4 params32 + 8 states) / gpus
  return {static_cast<int64_t>(total_params * 4 * gpus * 1.5),
          static_cast<int64_t>(2 * total_params + static_cast<double>(static_cast<int64_t>(18 * total_params / gpus)))};
}

DeepSpeedFigures deepspeed_zero3(double total_params, double largest_layer_params, int gpus, bool cpu_offload,
                                 bool cpu_offload_params, bool zero_init) {
  const double largest_layer_memory = 4 * largest_layer_params;
  double cpu = 0, gpu = 0;
  if (cpu_offload) {
    if (cpu_offload_params) {
      gpu = largest_layer_memory;
      cpu = zero_init ? total_params * 18 * 1.5 : total_params * std::max(4.0 * gpus, 18.0) * 1.5;
    } else {
      gpu = largest_layer_memory + static_cast<double>(static_cast<int64_t>(2 * total_params / gpus));
      cpu = zero_init ? total_params * 16 * 1.5 : total_params * std::max(4.0 * gpus, 16.0) * 1.5;
    }
  } else {
    gpu = largest_layer_memory + static_cast<double>(static_cast<int64_t>(18 * total_params / gpus));
    cpu = zero_init ? largest_layer_params * 4 * gpus * 1.5 : total_params * 4 * gpus * 1.5;
  }
  return {static_cast<int64_t>(cpu), static_cast<int64_t>(gpu)};
}

MachineSpec machine_with(int gpus) {
  MachineSpec m = must(bundled().machine("dgx-a100"));
  m.gpu_count = gpus;
  return m;
}

// Our per-class shares are floored one class at a time where DeepSpeed
// floors the sum; with N not a multiple of the rank count they can differ by
// a byte per class per rank, so allow 8 bytes.
constexpr int64_t kFloorSlack = 8;

class DeepSpeedAgreement : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(DeepSpeedAgreement, Zero2ModelStatesMatchTheEstimator) {
  const auto& [model_name, gpus] = GetParam();
  const Workload w(must(bundled().model(model_name)), 2048);
  const TrainingSpec t;
  const MemoryOptions ds{.convention = Convention::kDeepSpeedEstimator, .scope = Scope::kModelStates};
  const double n = static_cast<double>(w.total_params());
  for (bool offload : {false, true}) {
    const Placement p{.name = "z2", .stage = ZeroStage::k2, .param16 = Tier::kGpu,
                      .optimizer_states = offload ? Tier::kCpu : Tier::kGpu};
    const MemoryEstimate e = estimate_memory(w, machine_with(gpus), t, p, ds);
    const DeepSpeedFigures want = deepspeed_zero2(n, gpus, offload);
    EXPECT_LE(std::llabs(e.tier(Tier::kGpu).used.count() - want.gpu), kFloorSlack) << "offload " << offload;
    EXPECT_LE(std::llabs(e.tier(Tier::kCpu).used.count() - want.cpu), kFloorSlack) << "offload " << offload;
  }
}

TEST_P(DeepSpeedAgreement, Zero3ModelStatesMatchTheEstimator) {
  const auto& [model_name, gpus] = GetParam();
  const Workload w(must(bundled().model(model_name)), 2048);
  const TrainingSpec t;
  const double n = static_cast<double>(w.total_params());
  const double largest = static_cast<double>(w.largest_module_params());
  struct Case { bool offload, offload_params; };
  for (const Case c : {Case{false, false}, Case{true, false}, Case{true, true}}) {
    for (bool zero_init : {true, false}) {
      const MemoryOptions ds{.convention = Convention::kDeepSpeedEstimator, .scope = Scope::kModelStates,
                             .zero_init = zero_init};
      const Placement p{.name = "z3", .stage = ZeroStage::k3,
                        .param16 = c.offload_params ? Tier::kCpu : Tier::kGpu,
                        .optimizer_states = c.offload ? Tier::kCpu : Tier::kGpu};
      const MemoryEstimate e = estimate_memory(w, machine_with(gpus), t, p, ds);
      const DeepSpeedFigures want = deepspeed_zero3(n, largest, gpus, c.offload, c.offload_params, zero_init);
      SCOPED_TRACE(::testing::Message() << "offload " << c.offload << " params " << c.offload_params
                                        << " zero_init " << zero_init);
      EXPECT_LE(std::llabs(e.tier(Tier::kGpu).used.count() - want.gpu), kFloorSlack);
      EXPECT_LE(std::llabs(e.tier(Tier::kCpu).used.count() - want.cpu), kFloorSlack);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, DeepSpeedAgreement,
                         ::testing::Combine(::testing::Values("llama-2-13b", "opt-66b", "gpt2-xl", "mixtral-8x7b"),
                                            ::testing::Values(1, 8)));

// --convention deepspeed for every DeepSpeed placement its estimator has a
// formula for (stage 1 shares the ZeRO-2 estimator, stage_1_and_2.py)
// gives that formula; the rest are exactly the ones it has none for.
TEST(DeepSpeedAgreement, EveryCoveredDeepSpeedPlacementMatchesItsFormula) {
  const Workload w(must(bundled().model("llama-2-13b")), 2048);
  const double n = static_cast<double>(w.total_params());
  const double largest = static_cast<double>(w.largest_module_params());
  const MemoryOptions ds{.convention = Convention::kDeepSpeedEstimator, .scope = Scope::kModelStates};
  std::set<std::string> uncovered;
  for (int gpus : {1, 8}) {
    for (const Placement& p : deepspeed_placements()) {
      if (!deepspeed_estimator_covers(p)) {
        uncovered.insert(p.name);
        continue;
      }
      const bool offload = p.optimizer_states == Tier::kCpu;
      const DeepSpeedFigures want = p.stage == ZeroStage::k3
                                        ? deepspeed_zero3(n, largest, gpus, offload, p.param16 == Tier::kCpu, true)
                                        : deepspeed_zero2(n, gpus, offload);
      const MemoryEstimate e = estimate_memory(w, machine_with(gpus), TrainingSpec{}, p, ds);
      EXPECT_LE(std::llabs(e.tier(Tier::kGpu).used.count() - want.gpu), kFloorSlack) << p.name << " x" << gpus;
      EXPECT_LE(std::llabs(e.tier(Tier::kCpu).used.count() - want.cpu), kFloorSlack) << p.name << " x" << gpus;
    }
  }
  EXPECT_EQ(uncovered, (std::set<std::string>{"zero-0", "zero-3-params-cpu", "zero-3-params-nvme",
                                              "zero-3-optimizer-cpu-params-nvme", "zero-3-optimizer-nvme",
                                              "zero-3-optimizer-nvme-params-cpu", "zero-3-optimizer-nvme-params-nvme"}));
  EXPECT_FALSE(deepspeed_estimator_covers(*placement_named("zero-3-optimizer-cpu-ratio-0.5", 1)));
}

// What DeepSpeed's own estimator (estimate_zero2/zero3_model_states_mem_needs
// of the installed DeepSpeed, not a transcription) said for every bundled
// machine x model x DeepSpeed placement name, as bench/peers/
// deepspeed_estimator_check recorded it: one tagged JSON line per case with
// the inputs it was given (Stowage's parameter counts, the machine's GPUs on
// one node, zero.Init) and, where the estimator covers the placement, its
// `deepspeed_gpu` (per GPU) and `deepspeed_cpu` (per node) bytes; and one
// line per model (`kind: model`) with the parameters of the model built by
// Hugging Face transformers from the profile's shape (`hf_params`) and
// DeepSpeed's largest_layer_params of it (model_to_params).
std::vector<nlohmann::json> recorded_deepspeed_estimates() {
  std::ifstream in(std::string(STOWAGE_TEST_DATA_DIR) + "/../bench/deepspeed_estimator_check_sample.txt");
  EXPECT_TRUE(in) << "tests/bench/deepspeed_estimator_check_sample.txt is missing";
  const std::string tag = "DEEPSPEED_ESTIMATE ";
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    const size_t at = line.find(tag);
    if (at != std::string::npos) out.push_back(nlohmann::json::parse(line.substr(at + tag.size())));
  }
  return out;
}

// --convention deepspeed gives the real DeepSpeed's figures for every case
// it covers, and says it covers exactly the placements DeepSpeed's estimator
// can pose; the recording spans every bundled machine and model, so a new
// profile fails here until the peer check is run again.
TEST(DeepSpeedAgreement, EveryBundledMachineModelAndPlacementMatchesDeepSpeedItself) {
  const ProfileCatalog catalog = bundled();
  const MemoryOptions ds{.convention = Convention::kDeepSpeedEstimator, .scope = Scope::kModelStates};
  std::map<std::string, Workload> workloads;  // by model: expanding the 1T models takes a while
  std::map<std::string, MachineSpec> machines;
  std::set<std::pair<std::string, std::string>> pairs;
  std::set<std::string> covered;
  size_t compared = 0;
  std::set<std::string> models_counted;
  for (const nlohmann::json& c : recorded_deepspeed_estimates()) {
    if (c.value("kind", "") == "model") {
      const std::string model = c.at("model");
      if (!workloads.contains(model)) workloads.emplace(model, Workload(must(catalog.model(model)), 2048));
      const Workload& w = workloads.at(model);
      EXPECT_EQ(w.total_params(), c.at("hf_params").get<int64_t>()) << model;
      EXPECT_EQ(w.largest_module_params(), c.at("deepspeed_largest_layer_params").get<int64_t>())
          << model << ": DeepSpeed's largest layer is " << c.at("largest_module").get<std::string>();
      models_counted.insert(model);
      continue;
    }
    const std::string machine = c.at("machine"), model = c.at("model"), name = c.at("placement");
    pairs.insert({machine, model});
    if (!machines.contains(machine)) machines.emplace(machine, must(catalog.machine(machine)));
    if (!workloads.contains(model)) workloads.emplace(model, Workload(must(catalog.model(model)), 2048));
    const MachineSpec& m = machines.at(machine);
    const Workload& w = workloads.at(model);
    SCOPED_TRACE(machine + " / " + model + " / " + name);
    ASSERT_EQ(c.at("gpus").get<int>(), m.gpu_count);
    const std::optional<Placement> p = placement_named(name, m.gpu_count);
    ASSERT_TRUE(p.has_value());
    const bool deepspeed_covers = !c.at("call").is_null();
    EXPECT_EQ(deepspeed_estimator_covers(*p), deepspeed_covers);
    if (!deepspeed_covers) continue;
    covered.insert(name);
    ++compared;
    EXPECT_EQ(c.at("params").get<int64_t>(), w.total_params());
    EXPECT_EQ(c.at("largest_module_params").get<int64_t>(), w.largest_module_params());
    // To the byte: the recorded models' per-class floors add up to
    // DeepSpeed's one floor (the recording's largest difference is 0 B).
    const MemoryEstimate e = estimate_memory(w, m, TrainingSpec{}, *p, ds);
    EXPECT_EQ(e.tier(Tier::kGpu).used.count(), c.at("deepspeed_gpu").get<int64_t>());
    EXPECT_EQ(e.tier(Tier::kCpu).used.count(), c.at("deepspeed_cpu").get<int64_t>());
  }
  for (const std::string& machine : catalog.names(ProfileKind::kMachine)) {
    for (const std::string& model : catalog.names(ProfileKind::kModel)) {
      EXPECT_TRUE(pairs.contains({machine, model})) << machine << " / " << model << " not in the recording";
    }
  }
  EXPECT_EQ(covered, (std::set<std::string>{"zero-1", "zero-1-optimizer-cpu", "zero-2", "zero-2-optimizer-cpu",
                                            "zero-3", "zero-3-optimizer-cpu", "zero-3-optimizer-cpu-params-cpu"}));
  EXPECT_EQ(compared, pairs.size() * covered.size());
  const std::vector<std::string> bundled_models = catalog.names(ProfileKind::kModel);
  EXPECT_EQ(models_counted, std::set<std::string>(bundled_models.begin(), bundled_models.end()));
}

// Worked numbers for Llama-2-13B, N = 13,015,864,320, on one GPU:
// ZeRO-2 + CPU offload: GPU 2N = 26,031,728,640 B; CPU 16N x 1.5 = 312,380,743,680 B.
TEST(DeepSpeedWorkedNumbers, Llama2_13bZero2OffloadOneGpu) {
  const Workload w(must(bundled().model("llama-2-13b")), 2048);
  const Placement p{.name = "z2", .stage = ZeroStage::k2, .param16 = Tier::kGpu, .optimizer_states = Tier::kCpu};
  const MemoryEstimate e = estimate_memory(w, machine_with(1), TrainingSpec{}, p,
                                           {.convention = Convention::kDeepSpeedEstimator, .scope = Scope::kModelStates});
  EXPECT_EQ(e.tier(Tier::kGpu).used, Bytes(26'031'728'640));
  EXPECT_EQ(e.tier(Tier::kCpu).used, Bytes(312'380'743'680));
}

// ZeRO-3, no offload, 8 GPUs, zero.Init: GPU 4 x largest module (the
// 32000 x 5120 embedding, 163,840,000 params) + 18N/8 = 655,360,000 +
// 29,285,694,720 = 29,941,054,720 B; CPU 4 x 163,840,000 x 8 x 1.5 = 7,864,320,000 B.
TEST(DeepSpeedWorkedNumbers, Llama2_13bZero3EightGpus) {
  const Workload w(must(bundled().model("llama-2-13b")), 2048);
  const Placement p{.name = "z3", .stage = ZeroStage::k3, .param16 = Tier::kGpu, .optimizer_states = Tier::kGpu};
  const MemoryEstimate e = estimate_memory(w, machine_with(8), TrainingSpec{}, p,
                                           {.convention = Convention::kDeepSpeedEstimator, .scope = Scope::kModelStates});
  EXPECT_EQ(e.tier(Tier::kGpu).used, Bytes(29'941'054'720));
  EXPECT_EQ(e.tier(Tier::kCpu).used, Bytes(7'864'320'000));
}

class StandardPlacements : public ::testing::Test {
 protected:
  MachineSpec machine = must(bundled().machine("workstation-24gb-1nvme"));
  Workload workload{must(bundled().model("llama-2-13b")), 2048};
  TrainingSpec training = must(bundled().training("default"));
  static constexpr int64_t kN = 13'015'864'320;

  MemoryEstimate estimate(StandardPlacement which, Scope scope = Scope::kEverything) {
    return estimate_memory(workload, machine, training, standard_placement(which, 1), {.scope = scope});
  }
};

// All on one GPU: 2 + 2 + 4 + 4 + 4 = 16 B/param = 208,253,829,120 B of
// model states, far over 24 GiB.
TEST_F(StandardPlacements, AllGpuModelStatesAre16BytesPerParam) {
  const MemoryEstimate e = estimate(StandardPlacement::kAllGpu, Scope::kModelStates);
  EXPECT_EQ(e.tier(Tier::kGpu).used, Bytes(16 * kN));
  EXPECT_FALSE(e.fits());
  EXPECT_EQ(e.first_overflow(), Tier::kGpu);
  EXPECT_EQ(e.tier(Tier::kGpu).overflow(), Bytes(16 * kN) - Bytes(int64_t{24} << 30));
}

// ZeRO-Offload puts master32, adam_m and adam_v (12 B/param,
// 156,190,371,840 B) on the CPU, and its fp16 params (2N = 26.03 GB) still
// need the GPU, which a 24 GiB card does not have.
TEST_F(StandardPlacements, ZeroOffloadPutsTwelveBytesPerParamOnCpu) {
  const MemoryEstimate e = estimate(StandardPlacement::kZeroOffload);
  const Bytes optimizer = e.bytes_of(Tier::kCpu, TensorClass::kMaster32) + e.bytes_of(Tier::kCpu, TensorClass::kAdamM) +
                          e.bytes_of(Tier::kCpu, TensorClass::kAdamV);
  EXPECT_EQ(optimizer, Bytes(12 * kN));
  EXPECT_EQ(e.bytes_of(Tier::kGpu, TensorClass::kParam16), Bytes(2 * kN));
  EXPECT_EQ(e.bytes_of(Tier::kGpu, TensorClass::kMaster32), Bytes(0));
  EXPECT_FALSE(e.tier(Tier::kGpu).fits());
}

// ZeRO-Infinity: states on NVMe (12N = 156 GB on a 2 TB drive), params on
// CPU, the GPU holds one gathered layer and its gradients (4 x 317,204,480
// B), activations and the runtime reserve.
TEST_F(StandardPlacements, ZeroInfinityFitsTheWorkstation) {
  const MemoryEstimate e = estimate(StandardPlacement::kZeroInfinity);
  EXPECT_EQ(e.tier(Tier::kNvme).used, Bytes(12 * kN));
  EXPECT_EQ(e.bytes_of(Tier::kCpu, TensorClass::kParam16), Bytes(2 * kN));
  EXPECT_EQ(e.bytes_of(Tier::kGpu, TensorClass::kParam16), Bytes(2 * 317'204'480));
  EXPECT_TRUE(e.fits()) << "gpu " << format_bytes(e.tier(Tier::kGpu).used) << " cpu "
                        << format_bytes(e.tier(Tier::kCpu).used);
}

TEST_F(StandardPlacements, NvmePlacementWithoutDrivesDoesNotFit) {
  machine.nvme_count = 0;
  const MemoryEstimate e = estimate(StandardPlacement::kZeroInfinity);
  EXPECT_FALSE(e.fits());
  EXPECT_EQ(e.first_overflow(), Tier::kNvme);
}

TEST_F(StandardPlacements, EveryLineIsCountedInItsTier) {
  for (StandardPlacement which : {StandardPlacement::kAllGpu, StandardPlacement::kZeroOffload,
                                  StandardPlacement::kZeroInfinity}) {
    const MemoryEstimate e = estimate(which);
    for (Tier t : kAllTiers) {
      Bytes sum;
      for (const MemoryLine& l : e.lines) {
        if (l.tier == t) sum += l.bytes;
      }
      EXPECT_EQ(sum, e.tier(t).used);
    }
  }
}

TEST_F(StandardPlacements, LargerMicroBatchNeedsMoreGpuMemory) {
  const Bytes one = estimate(StandardPlacement::kZeroInfinity).tier(Tier::kGpu).used;
  training.micro_batch = 4;
  const Bytes four = estimate(StandardPlacement::kZeroInfinity).tier(Tier::kGpu).used;
  // Only activations grow, and they grow 4x.
  const Bytes act1 = workload.activation_bytes(2048, true);
  EXPECT_EQ(four - one, act1 * 3);
}

}  // namespace
}  // namespace stowage::core
