// The DeepSpeed JSON and Accelerate YAML exporters: plans built by hand
// (ZeRO-Offload-like, ZeRO-Infinity-like, mixed) come out as configs that
// parse, carry the plan's stage, devices and buffers under today's key
// names, and say in plain sentences what they cannot express.
#include "planner/accelerate_export.h"
#include "planner/deepspeed_export.h"
#include "planner/deepspeed_rules.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "core/policy.h"
#include "tests/core/test_profiles.h"

namespace stowage::planner {
namespace {

using core::OptimizerDevice;
using core::PartitionPolicy;
using core::PlanFile;
using core::Tier;
using core::ZeroStage;
using core::testing::bundled;
using core::testing::must;
using nlohmann::json;

// Llama 2 7B by hand (d_model 4096, ffn 11008, vocab 32000, untied):
//   embedding  32000 x 4096                               = 131'072'000
//   block      4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096   = 202'383'360
//   final      4096 + 32000 x 4096                        = 131'076'096
//   total      131'072'000 + 32 x 202'383'360 + 131'076'096 = 6'738'415'616
constexpr int64_t kBlockParams = 202'383'360;
constexpr int64_t kTotalParams = 6'738'415'616;

constexpr PartitionPolicy kAllGpu{};
constexpr PartitionPolicy kZeroOffload{.param16 = Tier::kGpu,
                                       .optimizer_states = Tier::kCpu,
                                       .optimizer = OptimizerDevice::kCpu,
                                       .gradients = Tier::kCpu};
constexpr PartitionPolicy kZeroInfinity{.param16 = Tier::kCpu,
                                        .optimizer_states = Tier::kNvme,
                                        .optimizer = OptimizerDevice::kCpu,
                                        .gradients = Tier::kCpu};

struct Profiles {
  core::MachineSpec machine;
  core::TrainingSpec training;
  core::Workload workload;
};

Profiles profiles(const std::string& machine, const std::string& training = "default") {
  core::TrainingSpec t = must(bundled().training(training));
  core::Workload w(must(bundled().model("llama-2-7b")), t.sequence_length);
  return {must(bundled().machine(machine)), std::move(t), std::move(w)};
}

PlanFile uniform_plan(const Profiles& s, ZeroStage stage, PartitionPolicy each,
                      int64_t sub_group_params = 0) {
  PlanFile plan{.machine = s.machine.name, .model = "llama-2-7b", .training = s.training.name};
  plan.policy.stage = stage;
  plan.policy.sub_group_params = sub_group_params;
  plan.policy.partitions.assign(core::partitions_of(s.workload, sub_group_params).size(), each);
  return plan;
}

ExportResult deepspeed(const Profiles& s, const PlanFile& plan) {
  core::Result<ExportResult> r = export_deepspeed(plan, s.machine, s.workload, s.training, {});
  if (!r) ADD_FAILURE() << core::to_string(r.error());
  return r ? *r : ExportResult{};
}

ExportResult accelerate(const Profiles& s, const PlanFile& plan) {
  core::Result<ExportResult> r = export_accelerate(plan, s.machine, s.workload, s.training, {});
  if (!r) ADD_FAILURE() << core::to_string(r.error());
  return r ? *r : ExportResult{};
}

bool mentions(const std::vector<std::string>& notes, const std::string& word) {
  return std::ranges::any_of(notes, [&](const std::string& n) { return n.find(word) != std::string::npos; });
}

std::string joined(const std::vector<std::string>& notes) {
  std::string all;
  for (const std::string& n : notes) all += n + "\n";
  return all;
}

// The policy checkpoints activations by default, which only the training
// script can switch on; the tests look at the other sentences.
std::vector<std::string> besides_checkpointing(std::vector<std::string> notes) {
  std::erase_if(notes,
                [](const std::string& n) { return n.starts_with("The plan checkpoints activations"); });
  return notes;
}

// ZeRO-Offload on one RTX 4090: stage 2, every partition's fp32 states in
// pinned CPU memory. Batch 1 x 8 accumulation x 1 GPU = 8.
TEST(DeepSpeedExport, ZeroOffloadPlanIsStage2WithCpuOptimizer) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  const ExportResult r = deepspeed(s, uniform_plan(s, ZeroStage::k2, kZeroOffload));
  const json j = json::parse(r.text);
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 1);
  EXPECT_EQ(j["gradient_accumulation_steps"], 8);
  EXPECT_EQ(j["train_batch_size"], 8);
  EXPECT_EQ(j["bf16"]["enabled"], true);
  EXPECT_FALSE(j.contains("fp16"));
  EXPECT_EQ(j["optimizer"]["type"], "AdamW");
  EXPECT_EQ(j["optimizer"]["params"]["lr"], 1e-4);
  EXPECT_EQ(j["optimizer"]["params"]["betas"], json::array({0.9, 0.95}));
  EXPECT_EQ(j["optimizer"]["params"]["weight_decay"], 0.1);
  const json& z = j["zero_optimization"];
  EXPECT_EQ(z["stage"], 2);
  EXPECT_EQ(z["overlap_comm"], true);
  EXPECT_EQ(z["contiguous_gradients"], true);
  EXPECT_EQ(z["sub_group_size"], 1'000'000'000);  // DeepSpeed's default for whole layers
  EXPECT_EQ(z["offload_optimizer"]["device"], "cpu");
  EXPECT_FALSE(z["offload_optimizer"].contains("nvme_path"));
  EXPECT_EQ(z["offload_optimizer"]["pin_memory"], true);
  EXPECT_EQ(z["offload_optimizer"]["buffer_count"], 4);
  EXPECT_EQ(z["offload_optimizer"]["fast_init"], false);
  EXPECT_FALSE(z["offload_optimizer"].contains("ratio"));  // everything offloaded: DeepSpeed's 1.0
  EXPECT_FALSE(z.contains("offload_param"));               // stage 2 has none
  EXPECT_FALSE(z.contains("stage3_prefetch_bucket_size"));
  EXPECT_FALSE(j.contains("aio"));  // nothing on NVMe
  EXPECT_TRUE(besides_checkpointing(r.not_expressible).empty()) << joined(r.not_expressible);
}

TEST(DeepSpeedExport, PageableHostMemoryTurnsPinningOff) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  PlanFile plan = uniform_plan(s, ZeroStage::k2, kZeroOffload);
  plan.policy.pinned_memory = false;
  const json j = json::parse(deepspeed(s, plan).text);
  EXPECT_EQ(j["zero_optimization"]["offload_optimizer"]["pin_memory"], false);
}

// ZeRO-Infinity on one GPU with one drive: stage 3, states on NVMe, weights
// in CPU memory. NVMe reads one partition ahead: pipeline_read and
// pipeline_write, 4 swap buffers each for the current, next and last
// sub-group = 12. Prefetch: 2 partitions x the largest layer (a block).
// Sub-groups of one block, not DeepSpeed's 1e9: DeepSpeed pins the 12
// buffers at the largest sub-group's size, so 1e9-element ones would pin
// at least 12 x 4 GB = 48 GB (issue 13); block-sized ones pin less than
// 12 x 4 B x (block + the largest tensor) = 15.9 GB.
TEST(DeepSpeedExport, ZeroInfinityPlanIsStage3WithNvmeStatesAndCpuParams) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  PlanFile plan = uniform_plan(s, ZeroStage::k3, kZeroInfinity);
  plan.policy.nvme_prefetch_depth = 1;
  plan.policy.h2d_prefetch_depth = 2;
  const ExportResult r = deepspeed(s, plan);
  const json j = json::parse(r.text);
  const json& z = j["zero_optimization"];
  EXPECT_EQ(z["stage"], 3);
  EXPECT_EQ(z["sub_group_size"], kBlockParams);
  const DeepSpeedSettings settings = *deepspeed_settings(plan, s.machine, s.workload, s.training);
  core::Bytes swap_pool;
  for (const deepspeed::RuntimePool& p : deepspeed::runtime_pools(settings, s.workload)) {
    if (p.name == "optimizer swap buffers") swap_pool = p.bytes;
  }
  EXPECT_GT(swap_pool, core::Bytes(12 * 4 * kBlockParams));
  EXPECT_LT(swap_pool, core::Bytes(12 * 4 * (kBlockParams + 131'072'000)));
  EXPECT_EQ(z["stage3_prefetch_bucket_size"], 2 * kBlockParams);
  const json& opt = z["offload_optimizer"];
  EXPECT_EQ(opt["device"], "nvme");
  EXPECT_EQ(opt["nvme_path"], "/local_nvme");
  EXPECT_EQ(opt["pin_memory"], true);
  EXPECT_EQ(opt["buffer_count"], 12);
  EXPECT_EQ(opt["pipeline_read"], true);
  EXPECT_EQ(opt["pipeline_write"], true);
  const json& param = z["offload_param"];
  EXPECT_EQ(param["device"], "cpu");
  EXPECT_EQ(param["pin_memory"], true);
  EXPECT_FALSE(param.contains("nvme_path"));
  EXPECT_FALSE(param.contains("buffer_size"));  // NVMe-only settings
  ASSERT_TRUE(j.contains("aio"));
  const json& aio = j["aio"];
  EXPECT_EQ(aio["block_size"], 1'048'576);
  EXPECT_EQ(aio["queue_depth"], 8);  // the plan's nvme_queue_depth
  EXPECT_EQ(aio["intra_op_parallelism"], 1);
  EXPECT_FALSE(aio.contains("thread_count"));  // removed in DeepSpeed 0.16.4, silently ignored
  EXPECT_EQ(aio["single_submit"], false);
  EXPECT_EQ(aio["overlap_events"], true);
  EXPECT_EQ(r.text.find("thread_count"), std::string::npos);
  EXPECT_TRUE(besides_checkpointing(r.not_expressible).empty()) << joined(r.not_expressible);
}

TEST(DeepSpeedExport, NvmePathComesFromOptions) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  const PlanFile plan = uniform_plan(s, ZeroStage::k3, kZeroInfinity);
  const ExportResult r =
      must(export_deepspeed(plan, s.machine, s.workload, s.training, {.nvme_path = "/mnt/raid0"}));
  EXPECT_EQ(json::parse(r.text)["zero_optimization"]["offload_optimizer"]["nvme_path"], "/mnt/raid0");
}

// Weights on NVMe too: 5 swap buffers (DeepSpeed's default, above the plan's
// 4). DeepSpeed swaps one parameter per buffer, so each holds the largest
// parameter, the 32000 x 4096 embedding = 131'072'000 elements, already a
// whole number of 1 MiB aio blocks of 16-bit elements (250 x 524'288);
// nothing kept in CPU memory; and parameter reuse off, the workaround for
// "Not enough buffers 0 for swapping 1" (DeepSpeed issue #3062).
TEST(DeepSpeedExport, NvmeParamsGetSwapBuffersSizedToTheLargestParameter) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  PlanFile plan = uniform_plan(s, ZeroStage::k3,
                               {.param16 = Tier::kNvme,
                                .optimizer_states = Tier::kNvme,
                                .optimizer = OptimizerDevice::kCpu,
                                .gradients = Tier::kCpu});
  plan.policy.staging_buffers = 4;
  plan.policy.nvme_prefetch_depth = 3;
  plan.policy.nvme_queue_depth = 12;
  plan.policy.nvme_block_size = core::Bytes(512 << 10);
  const ExportResult r = deepspeed(s, plan);
  const json j = json::parse(r.text);
  const json& param = j["zero_optimization"]["offload_param"];
  EXPECT_EQ(param["device"], "nvme");
  EXPECT_EQ(param["nvme_path"], "/local_nvme");
  EXPECT_EQ(param["buffer_count"], 5);
  EXPECT_EQ(param["buffer_size"], 131'072'000);
  EXPECT_EQ(param["max_in_cpu"], 0);
  EXPECT_EQ(j["zero_optimization"]["stage3_max_reuse_distance"], 0);
  EXPECT_EQ(j["aio"]["queue_depth"], 12);  // the plan's choices carry over
  EXPECT_EQ(j["aio"]["block_size"], 512 << 10);
  EXPECT_TRUE(mentions(r.not_expressible, "one sub-group ahead")) << joined(r.not_expressible);
}

// A DGX A100: 8 ranks, so batch 1 x 8 x 8 = 64, and DeepSpeed's
// sub_group_size counts one rank's elements: 200'000'000 / 8 = 25'000'000.
// Eight drives behind one nvme_path must be striped.
TEST(DeepSpeedExport, MultiGpuMachineScalesBatchAndSubGroups) {
  const Profiles s = profiles("dgx-a100");
  const ExportResult r = deepspeed(s, uniform_plan(s, ZeroStage::k3, kZeroInfinity, 200'000'000));
  const json j = json::parse(r.text);
  EXPECT_EQ(j["train_batch_size"], 64);
  EXPECT_EQ(j["zero_optimization"]["sub_group_size"], 25'000'000);
  EXPECT_TRUE(mentions(r.instructions, "RAID 0")) << joined(r.instructions);
}

// The plan's own batch shape overrides the profile's: 2 x 4 x 8 GPUs = 64.
TEST(DeepSpeedExport, PlanBatchShapeOverridesTheTrainingProfile) {
  const Profiles s = profiles("dgx-a100");
  PlanFile plan = uniform_plan(s, ZeroStage::k2, kZeroOffload);
  plan.policy.micro_batch = 2;
  plan.policy.gradient_accumulation = 4;
  const json j = json::parse(deepspeed(s, plan).text);
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 2);
  EXPECT_EQ(j["gradient_accumulation_steps"], 4);
  EXPECT_EQ(j["train_batch_size"], 64);
}

TEST(DeepSpeedExport, ActivationCheckpointingIsLeftToTheScript) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  PlanFile plan = uniform_plan(s, ZeroStage::k2, kZeroOffload);
  EXPECT_TRUE(mentions(deepspeed(s, plan).instructions, "gradient_checkpointing_enable"));
  EXPECT_TRUE(deepspeed(s, plan).not_expressible.empty());  // the script does it: the plan is unchanged
  plan.policy.activation_checkpointing = false;
  EXPECT_TRUE(deepspeed(s, plan).instructions.empty());
}

TEST(DeepSpeedExport, AllGpuPlanHasNoOffloadSections) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  const ExportResult r = deepspeed(s, uniform_plan(s, ZeroStage::k0, kAllGpu));
  const json j = json::parse(r.text);
  EXPECT_EQ(j["zero_optimization"]["stage"], 0);
  EXPECT_FALSE(j["zero_optimization"].contains("offload_optimizer"));
  EXPECT_FALSE(j["zero_optimization"].contains("offload_param"));
  EXPECT_FALSE(j.contains("aio"));
  EXPECT_TRUE(besides_checkpointing(r.not_expressible).empty()) << joined(r.not_expressible);
}

// Stage 2 cannot offload parameters: no offload_param, and a sentence.
TEST(DeepSpeedExport, ParamOffloadOnlyWithStage3) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  const ExportResult r = deepspeed(s, uniform_plan(s, ZeroStage::k2,
                                                   {.param16 = Tier::kCpu,
                                                    .optimizer_states = Tier::kCpu,
                                                    .optimizer = OptimizerDevice::kCpu,
                                                    .gradients = Tier::kCpu}));
  EXPECT_FALSE(json::parse(r.text)["zero_optimization"].contains("offload_param"));
  EXPECT_TRUE(mentions(r.not_expressible, "only with ZeRO stage 3")) << joined(r.not_expressible);
}

// The mixed plan, stage 3 on one GPU: embedding + blocks 0-8 keep their
// optimizer on the GPU, blocks 9-20 offload states to CPU memory, blocks
// 21-31 and the final layer to NVMe, with a delayed update.
//   GPU  131'072'000 + 9 x 202'383'360                  = 1'952'522'240
//   CPU  12 x 202'383'360                               = 2'428'600'320
//   NVMe 11 x 202'383'360 + 131'076'096                 = 2'357'293'056
// CPU holds the most offloaded bytes, so device cpu, and the GPU share is a
// leading run: ratio = (2'428'600'320 + 2'357'293'056) / 6'738'415'616
// = 0.710240... (the sub-group size is chosen in the test below).
PlanFile mixed_plan(const Profiles& s) {
  PlanFile plan = uniform_plan(s, ZeroStage::k3, kAllGpu);
  std::vector<PartitionPolicy>& p = plan.policy.partitions;
  for (size_t i = 10; i < p.size(); ++i) p[i] = i < 22 ? kZeroOffload : kZeroInfinity;
  plan.policy.delayed_update = true;
  return plan;
}

TEST(DeepSpeedExport, MixedPlanUsesHeaviestTierAndSaysWhatItCannotExpress) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  const ExportResult r = deepspeed(s, mixed_plan(s));
  const json j = json::parse(r.text);
  const json& z = j["zero_optimization"];
  EXPECT_EQ(z["offload_optimizer"]["device"], "cpu");
  // DeepSpeed offloads whole sub-groups, the last int(ratio x n) (stage3.py).
  // sub_group_size is the plan's GPU share, the embedding and 9 blocks:
  // 131'072'000 + 9 x 202'383'360 = 1'952'522'240, so the first sub-group is
  // exactly that share and the other 4'785'893'376 elements make 3 more
  // (two of at least the size, the rest). ratio = (4 - 1 - 0.5) / 4 = 0.625
  // keeps 1 of 4 on the GPU, and the realised share is the planned 0.710240.
  EXPECT_EQ(z["sub_group_size"], 1'952'522'240);
  EXPECT_DOUBLE_EQ(z["offload_optimizer"]["ratio"].get<double>(), 0.625);
  const std::vector<int64_t> groups = deepspeed::sub_group_numels(s.workload, 1, 1'952'522'240);
  ASSERT_EQ(groups.size(), 4U);
  EXPECT_EQ(groups[0], 1'952'522'240);
  const double offloaded = 2'428'600'320.0 + 2'357'293'056.0;
  EXPECT_DOUBLE_EQ(deepspeed::partial_offload(groups, 0.625).realised_ratio(),
                   offloaded / static_cast<double>(kTotalParams));
  EXPECT_FALSE(mentions(r.not_expressible, "whole sub-groups")) << joined(r.not_expressible);
  // 16-bit weights: 22 partitions on the GPU, 12 in CPU memory -> cpu, with a sentence.
  EXPECT_EQ(z["offload_param"]["device"], "cpu");
  EXPECT_FALSE(j.contains("aio"));  // the NVMe states were folded into CPU memory
  EXPECT_TRUE(mentions(r.not_expressible, "on NVMe; DeepSpeed puts all offloaded states on one device"))
      << joined(r.not_expressible);
  EXPECT_TRUE(mentions(r.not_expressible, "delayed parameter update")) << joined(r.not_expressible);
  EXPECT_TRUE(mentions(r.not_expressible, "offloads every partitioned parameter"))
      << joined(r.not_expressible);
  EXPECT_FALSE(mentions(r.not_expressible, "leading run")) << joined(r.not_expressible);
}

// The same split under stage 2: DeepSpeed allows ratio < 1 only with stage
// 3, so every partition's optimizer goes to the CPU and a sentence says so.
TEST(DeepSpeedExport, PartialOffloadNeedsStage3) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  PlanFile plan = uniform_plan(s, ZeroStage::k2, kAllGpu);
  for (size_t i = 0; i < plan.policy.partitions.size(); i += 2) plan.policy.partitions[i] = kZeroOffload;
  const ExportResult r = deepspeed(s, plan);
  const json j = json::parse(r.text);
  const json& opt = j["zero_optimization"]["offload_optimizer"];
  EXPECT_EQ(opt["device"], "cpu");
  EXPECT_FALSE(opt.contains("ratio"));
  EXPECT_TRUE(mentions(r.not_expressible, "needs ZeRO stage 3")) << joined(r.not_expressible);
}

// Under stage 3 a GPU share that is not a leading run keeps its ratio but
// DeepSpeed chooses the first sub-groups: say so.
TEST(DeepSpeedExport, PartialOffloadOrderIsDeepSpeeds) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  PlanFile plan = uniform_plan(s, ZeroStage::k3, kZeroOffload);
  plan.policy.partitions.back() = kAllGpu;  // the final layer: 131'076'096 of 6'738'415'616
  const ExportResult r = deepspeed(s, plan);
  const json j = json::parse(r.text);
  const json& opt = j["zero_optimization"]["offload_optimizer"];
  EXPECT_LT(opt["ratio"].get<double>(), 1.0);
  EXPECT_TRUE(mentions(r.not_expressible, "leading run")) << joined(r.not_expressible);
}

// fp16-adam: dynamic scaling from 65536 = 2^16, window 1000, minimum 1;
// plain Adam must switch off DeepSpeed's default decoupled decay.
TEST(DeepSpeedExport, Fp16TrainingGetsDynamicLossScaling) {
  const Profiles s = profiles("workstation-24gb-1nvme", "fp16-adam");
  const ExportResult r = deepspeed(s, uniform_plan(s, ZeroStage::k2, kZeroOffload));
  const json j = json::parse(r.text);
  EXPECT_FALSE(j.contains("bf16"));
  const json& fp16 = j["fp16"];
  EXPECT_EQ(fp16["enabled"], true);
  EXPECT_EQ(fp16["loss_scale"], 0);
  EXPECT_EQ(fp16["initial_scale_power"], 16);
  EXPECT_EQ(fp16["loss_scale_window"], 1000);
  EXPECT_EQ(fp16["min_loss_scale"], 1.0);
  EXPECT_EQ(j["optimizer"]["type"], "Adam");
  EXPECT_EQ(j["optimizer"]["params"]["adam_w_mode"], false);
  EXPECT_TRUE(besides_checkpointing(r.not_expressible).empty()) << joined(r.not_expressible);
}

// 1024 = 2^10 exactly; 1000 is no power of two and rounds to 2^10 with a sentence.
TEST(DeepSpeedExport, InitialScalePowerIsLog2OfTheInitialScale) {
  Profiles s = profiles("workstation-24gb-1nvme", "fp16-adam");
  s.training.loss_scaling.initial_scale = 1024;
  ExportResult r = deepspeed(s, uniform_plan(s, ZeroStage::k2, kZeroOffload));
  EXPECT_EQ(json::parse(r.text)["fp16"]["initial_scale_power"], 10);
  EXPECT_TRUE(besides_checkpointing(r.not_expressible).empty()) << joined(r.not_expressible);
  s.training.loss_scaling.initial_scale = 1000;
  r = deepspeed(s, uniform_plan(s, ZeroStage::k2, kZeroOffload));
  EXPECT_EQ(json::parse(r.text)["fp16"]["initial_scale_power"], 10);
  EXPECT_TRUE(mentions(r.not_expressible, "power of two")) << joined(r.not_expressible);
}

TEST(DeepSpeedExport, PlanForAnotherModelIsADiagnostic) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  PlanFile plan = uniform_plan(s, ZeroStage::k2, kZeroOffload);
  plan.policy.partitions.pop_back();
  const core::Result<ExportResult> r = export_deepspeed(plan, s.machine, s.workload, s.training, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(core::to_string(r.error()).find("the plan has 33 partitions but llama-2-7b splits into 34"),
            std::string::npos)
      << core::to_string(r.error());
}

TEST(DeepSpeedExport, NvmeOnAMachineWithoutDrivesIsADiagnostic) {
  Profiles s = profiles("workstation-24gb-1nvme");
  s.machine.nvme_count = 0;
  const core::Result<ExportResult> r =
      export_deepspeed(uniform_plan(s, ZeroStage::k3, kZeroInfinity), s.machine, s.workload, s.training, {});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(core::to_string(r.error()).find("has no NVMe drives"), std::string::npos);
}

// Issue 16, item 3: bf16 moments beside fp32 master weights have no
// DeepSpeed spelling (its bf16_optimizer_states needs bf16 master weights),
// so both exporters refuse them, naming the field and what would export.
TEST(DeepSpeedExport, Bf16OptimizerStatesAreRefusedWithTheReason) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  PlanFile plan = uniform_plan(s, ZeroStage::k2, kZeroOffload);
  plan.policy.optimizer_state_precision = core::StatePrecision::kBf16;
  for (const core::Result<ExportResult>& r : {export_deepspeed(plan, s.machine, s.workload, s.training, {}),
                                              export_accelerate(plan, s.machine, s.workload, s.training, {})}) {
    ASSERT_FALSE(r.has_value());
    const std::string message = core::to_string(r.error());
    EXPECT_NE(message.find("policy.optimizer_state_precision: bf16 moments beside fp32 master weights cannot be "
                           "expressed in DeepSpeed"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("bf16.bf16_master_weights_and_grads"), std::string::npos) << message;
  }
}

TEST(AccelerateExport, YamlPointsAtTheDeepSpeedJson) {
  const Profiles s = profiles("workstation-24gb-1nvme");
  const ExportOptions options{.deepspeed_config_file = "run/acc.deepspeed.json"};
  const core::Result<ExportResult> r =
      export_accelerate(uniform_plan(s, ZeroStage::k2, kZeroOffload), s.machine, s.workload, s.training, options);
  ASSERT_TRUE(r.has_value()) << core::to_string(r.error());
  const YAML::Node y = YAML::Load(r->text);
  EXPECT_EQ(y["compute_environment"].as<std::string>(), "LOCAL_MACHINE");
  EXPECT_EQ(y["distributed_type"].as<std::string>(), "DEEPSPEED");
  EXPECT_EQ(y["num_processes"].as<int>(), 1);
  // Accelerate refuses mixed_precision beside a config file: the JSON decides.
  EXPECT_FALSE(y["mixed_precision"].IsDefined());
  const YAML::Node ds = y["deepspeed_config"];
  EXPECT_EQ(ds["deepspeed_config_file"].as<std::string>(), "run/acc.deepspeed.json");
  EXPECT_FALSE(ds["zero3_init_flag"].as<bool>());
  // Accelerate refuses its own DeepSpeed keys beside a config file, and its
  // launcher would drop the NVMe paths: none of them is written.
  for (const char* key : {"zero_stage", "offload_optimizer_device", "offload_param_device",
                          "offload_optimizer_nvme_path", "gradient_accumulation_steps"}) {
    EXPECT_FALSE(ds[key].IsDefined()) << key;
  }
  EXPECT_TRUE(mentions(r->instructions, "DataLoader")) << joined(r->instructions);
  EXPECT_TRUE(mentions(r->instructions, "DummyOptim")) << joined(r->instructions);
}

// With the JSON beside it the YAML loses nothing: its differences are
// exactly DeepSpeed's.
TEST(AccelerateExport, LosesNothingBesideTheDeepSpeedJson) {
  const Profiles s = profiles("dgx-a100", "fp16-adam");
  const PlanFile plan = uniform_plan(s, ZeroStage::k3,
                                     {.param16 = Tier::kNvme,
                                      .optimizer_states = Tier::kNvme,
                                      .optimizer = OptimizerDevice::kCpu,
                                      .gradients = Tier::kCpu});
  const ExportResult r = accelerate(s, plan);
  const YAML::Node y = YAML::Load(r.text);
  EXPECT_EQ(y["num_processes"].as<int>(), 8);
  EXPECT_TRUE(y["deepspeed_config"]["zero3_init_flag"].as<bool>());
  EXPECT_EQ(r.not_expressible, deepspeed(s, plan).not_expressible);
  EXPECT_TRUE(mentions(r.instructions, "RAID 0")) << joined(r.instructions);  // DeepSpeed's own note
  const ExportResult mixed = accelerate(s, mixed_plan(s));
  EXPECT_EQ(mixed.not_expressible, deepspeed(s, mixed_plan(s)).not_expressible);
}

}  // namespace
}  // namespace stowage::planner
