// The plan file: writing then reading gives back the very same PlanFile,
// doubles bit for bit; bad input is reported as file:line:column with the
// field's path, every problem at once.
#include "core/plan_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include <unistd.h>

namespace stowage::core {
namespace {

using namespace literals;

// Line numbers matter: the error tests below point into this text.
const char* const kGoodPlan = R"(format: stowage/plan/v1
machine: workstation-24gb-1nvme
model: llama-2-7b
training: default
policy:
  zero_stage: 3
  sub_group_params: 100000000
  nvme_prefetch_depth: 2
  h2d_prefetch_depth: 1
  staging_buffers: 4
  staging_buffer_size: 64 MiB
  pinned_memory: true
  nvme_block_size: 512 KiB
  nvme_queue_depth: 16
  delayed_update: false
  activation_checkpointing: true
  micro_batch: 0
  gradient_accumulation: 0
  partitions:
    - {param16: gpu, optimizer_states: cpu, optimizer: cpu, gradients: cpu}
    - {param16: cpu, optimizer_states: nvme, optimizer: cpu, gradients: cpu}
    - {param16: nvme, optimizer_states: nvme, optimizer: gpu, gradients: gpu}
predicted:
  step_time: 1.5 s
  tokens_per_second: 2730.5
  model_tflops_per_gpu: 81.25
  peak_memory:
    gpu: 22 GiB
    cpu: 96 GiB
    nvme: 400 GB
  bounding_lane: nvme.read
)";

constexpr const char* kFile = "plans/test.yaml";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

Diagnostics errors_of(const std::string& text) {
  Result<PlanFile> r = read_plan(text, kFile);
  EXPECT_FALSE(r.has_value()) << text;
  return r ? Diagnostics{} : r.error();
}

// Not a real plan's numbers: each field differs from its default, the
// partitions mix every tier, sizes are not round, and the doubles have no
// short decimal form (0.1 + 0.2 is 0.30000000000000004; 1/3 needs 16
// digits; 5e-324 is the smallest subnormal).
PlanFile awkward_plan() {
  Policy policy{
      .stage = ZeroStage::k2,
      .sub_group_params = 123'456'789,
      .partitions = {{.param16 = Tier::kGpu,
                      .optimizer_states = Tier::kCpu,
                      .optimizer = OptimizerDevice::kCpu,
                      .gradients = Tier::kCpu},
                     {.param16 = Tier::kCpu,
                      .optimizer_states = Tier::kNvme,
                      .optimizer = OptimizerDevice::kCpu,
                      .gradients = Tier::kGpu},
                     {.param16 = Tier::kNvme,
                      .optimizer_states = Tier::kGpu,
                      .optimizer = OptimizerDevice::kGpu,
                      .gradients = Tier::kGpu}},
      .nvme_prefetch_depth = 7,
      .h2d_prefetch_depth = 0,
      .staging_buffers = 3,
      .staging_buffer_size = Bytes(1'000'000'007),
      .pinned_memory = false,
      .delayed_update = true,
      .activation_checkpointing = false,
      .micro_batch = 3,
      .gradient_accumulation = 5,
  };
  PredictedFigures predicted{
      .step_time = Seconds(0.1 + 0.2),
      .tokens_per_second = 1.0 / 3.0,
      .model_tflops_per_gpu = 5e-324,
      .peak_memory = {Bytes(25'769'803'777), 3_GB, Bytes(0)},
      .bounding_lane = "pcie.h2d",
  };
  return {.machine = "workstation-24gb-1nvme", .model = "llama-2-7b", .training = "default",
          .policy = policy, .predicted = predicted};
}

PlanFile read_back(const PlanFile& plan) {
  const std::string text = write_plan(plan);
  Result<PlanFile> r = read_plan(text, kFile);
  if (!r) {
    ADD_FAILURE() << to_string(r.error()) << "\n" << text;
    return {};
  }
  return *r;
}

TEST(PlanFile, ReadsAGoodPlan) {
  Result<PlanFile> r = read_plan(kGoodPlan, kFile);
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->machine, "workstation-24gb-1nvme");
  EXPECT_EQ(r->policy.stage, ZeroStage::k3);
  EXPECT_EQ(r->policy.staging_buffer_size, 64_MiB);
  ASSERT_EQ(r->policy.partitions.size(), 3u);
  EXPECT_EQ(r->policy.partitions[1].optimizer_states, Tier::kNvme);
  EXPECT_EQ(r->policy.partitions[2].optimizer, OptimizerDevice::kGpu);
  ASSERT_TRUE(r->predicted);
  EXPECT_EQ(r->predicted->step_time, Seconds(1.5));
  EXPECT_EQ(r->predicted->peak_memory[static_cast<size_t>(Tier::kNvme)], 400_GB);
  EXPECT_EQ(r->predicted->bounding_lane, "nvme.read");
}

TEST(PlanFile, RoundTripIsExact) {
  const PlanFile plan = awkward_plan();
  const PlanFile back = read_back(plan);
  EXPECT_EQ(back.policy, plan.policy);
  ASSERT_TRUE(back.predicted);
  // Exact comparisons on purpose: the writer promises bit-identical doubles.
  EXPECT_EQ(back.predicted->step_time.value(), 0.1 + 0.2);
  EXPECT_EQ(back.predicted->tokens_per_second, 1.0 / 3.0);
  EXPECT_EQ(back.predicted->model_tflops_per_gpu, 5e-324);
  EXPECT_EQ(back.predicted->peak_memory, plan.predicted->peak_memory);
  EXPECT_EQ(back, plan);
}

// Shortest round-trip text must read back bit for bit for any double, not
// only the ones picked above: 500 values spread over 40 orders of
// magnitude with random low bits, from a fixed seed.
TEST(PlanFile, RoundTripIsExactForManyDoubles) {
  std::mt19937_64 random(20240611);
  std::uniform_real_distribution<double> exponent(-30, 9);
  PlanFile plan = awkward_plan();
  for (int i = 0; i < 500; ++i) {
    const double v = std::pow(10.0, exponent(random));
    plan.predicted->step_time = Seconds(v);
    plan.predicted->tokens_per_second = v * 1000;
    plan.predicted->model_tflops_per_gpu = v;
    const PlanFile back = read_back(plan);
    ASSERT_EQ(back, plan) << "v = " << std::hexfloat << v;
  }
}

TEST(PlanFile, RoundTripWithoutPredictionsOrPartitions) {
  PlanFile plan = awkward_plan();
  plan.predicted.reset();
  plan.policy.partitions.clear();
  EXPECT_EQ(read_back(plan), plan);
}

TEST(PlanFile, NamesYamlWouldMisreadAreQuoted) {
  PlanFile plan = awkward_plan();
  plan.machine = "null";
  plan.model = "my model: \"v2\" # draft\\1\n\t";
  plan.training = "";
  plan.predicted->bounding_lane = "- x";
  EXPECT_EQ(read_back(plan), plan);
}

TEST(PlanFile, WriterStartsWithTheFormatLine) {
  const std::string text = write_plan(awkward_plan());
  EXPECT_TRUE(text.starts_with("format: stowage/plan/v1\n")) << text;
}

TEST(PlanFile, WriterSpellsNumbersExactlyAndReadably) {
  PlanFile plan = awkward_plan();
  plan.policy.staging_buffer_size = 64_MiB;
  const std::string text = write_plan(plan);
  EXPECT_NE(text.find("  staging_buffer_size: 64 MiB\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  step_time: 0.30000000000000004 s\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    gpu: 25769803777 B\n"), std::string::npos) << text;  // 24 GiB + 1 B
  EXPECT_NE(text.find("    cpu: 3 GB\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    - {param16: cpu, optimizer_states: nvme, optimizer: cpu, gradients: gpu}\n"),
            std::string::npos)
      << text;
}

TEST(PlanFile, UnknownKeySuggestsTheNearest) {
  const Diagnostics d = errors_of(replace(kGoodPlan, "  delayed_update:", "  delayed_updte:"));
  ASSERT_EQ(d.size(), 2u);  // delayed_update is now missing, delayed_updte is unknown
  EXPECT_EQ(d[0].to_string(),
            "plans/test.yaml:6:3: missing field 'policy.delayed_update' (a value for 'delayed_update')");
  EXPECT_EQ(d[1].to_string(),
            "plans/test.yaml:15:3: unknown key 'policy.delayed_updte' (did you mean 'delayed_update'?)");
}

TEST(PlanFile, WrongTierWordSuggestsTheNearest) {
  const Diagnostics d = errors_of(replace(kGoodPlan, "{param16: cpu,", "{param16: cpuu,"));
  ASSERT_EQ(d.size(), 1u);
  // "    - {param16: " is 16 characters, so the value starts in column 17.
  EXPECT_EQ(d[0].to_string(),
            "plans/test.yaml:21:17: policy.partitions[1].param16: unknown value 'cpuu' "
            "(did you mean 'cpu'? one of: gpu, cpu, nvme)");
}

TEST(PlanFile, PartitionThatIsNotAMapIsNamedByIndex) {
  const Diagnostics d =
      errors_of(replace(kGoodPlan, "{param16: cpu, optimizer_states: nvme, optimizer: cpu, gradients: cpu}", "cpu"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string(),
            "plans/test.yaml:21:7: 'policy.partitions[1]' is 'cpu' (a mapping of 'key: value' lines)");
}

TEST(PlanFile, PartitionsThatAreNotAListAreAWrongType) {
  std::string text = kGoodPlan;
  const size_t from = text.find("  partitions:\n");
  text.replace(from, text.find("predicted:\n") - from, "  partitions: {param16: gpu}\n");
  const Diagnostics d = errors_of(text);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].where.line, 19);
  EXPECT_EQ(d[0].what, "policy.partitions: wrong type: a mapping");
}

TEST(PlanFile, MissingPolicyIsReported) {
  const std::string text = "format: stowage/plan/v1\nmachine: m\nmodel: x\ntraining: t\n";
  const Diagnostics d = errors_of(text);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string(), "plans/test.yaml:1:1: missing field 'policy' (a value for 'policy')");
}

TEST(PlanFile, OutOfRangeDepthIsReported) {
  const Diagnostics d = errors_of(replace(kGoodPlan, "nvme_prefetch_depth: 2", "nvme_prefetch_depth: 65"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string(),
            "plans/test.yaml:8:24: policy.nvme_prefetch_depth: 65 is out of range "
            "(a whole number between 0 and 64)");
}

TEST(PlanFile, UnknownFormatVersionListsTheKnownOne) {
  const Diagnostics d = errors_of(replace(kGoodPlan, "stowage/plan/v1", "stowage/plan/v2"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string(),
            "plans/test.yaml:1:9: format: unknown format version 'stowage/plan/v2' (known versions: stowage/plan/v1)");
}

TEST(PlanFile, AnotherKindOfFileIsRejected) {
  const Diagnostics d = errors_of(replace(kGoodPlan, "stowage/plan/v1", "stowage/gpu/v1"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "format: 'stowage/gpu/v1' is not a plan file");
}

TEST(PlanFile, AllProblemsAreReportedAtOnce) {
  std::string text = replace(kGoodPlan, "zero_stage: 3", "zero_stage: 4");
  text = replace(text, "staging_buffers: 4", "staging_buffers: 0");
  text = replace(text, "gradients: cpu}\n    - {param16: nvme", "gradients: disk}\n    - {param16: nvme");
  text = replace(text, "optimizer: gpu, gradients: gpu}", "optimiser: gpu, gradients: gpu}");
  text = replace(text, "step_time: 1.5 s", "step_time: 1.5 GB");
  text = replace(text, "    nvme: 400 GB\n", "");
  const Diagnostics d = errors_of(text);
  ASSERT_EQ(d.size(), 7u) << to_string(d);
  EXPECT_EQ(d[0].to_string(), "plans/test.yaml:6:15: policy.zero_stage: 4 is out of range "
                              "(a whole number between 0 and 3)");
  EXPECT_EQ(d[1].to_string(), "plans/test.yaml:10:20: policy.staging_buffers: 0 is out of range "
                              "(a whole number between 1 and 1024)");
  EXPECT_EQ(d[2].where.line, 21);
  EXPECT_EQ(d[2].what, "policy.partitions[1].gradients: unknown value 'disk'");
  EXPECT_EQ(d[3].to_string(), "plans/test.yaml:22:7: missing field 'policy.partitions[2].optimizer' "
                              "(a value for 'optimizer')");
  EXPECT_EQ(d[4].where.line, 22);
  EXPECT_EQ(d[4].what, "unknown key 'policy.partitions[2].optimiser'");
  EXPECT_EQ(d[4].expected, "did you mean 'optimizer'?");
  EXPECT_EQ(d[5].where.line, 24);
  EXPECT_EQ(d[5].what, "predicted.step_time: 'GB' in '1.5 GB' is a size unit, not a duration unit");
  EXPECT_EQ(d[6].to_string(), "plans/test.yaml:28:5: missing field 'predicted.peak_memory.nvme' "
                              "(a value for 'nvme')");
}

TEST(PlanFile, NvmeBlockSizeMustBeAMultipleOf4KiB) {
  const Diagnostics d = errors_of(replace(kGoodPlan, "nvme_block_size: 512 KiB", "nvme_block_size: 4100 B"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string(), "plans/test.yaml:13:20: policy.nvme_block_size: 4100 B is not a multiple of 4 KiB (a multiple "
                              "of 4096 bytes (O_DIRECT alignment), e.g. 1 MiB)");
  const Result<PlanFile> r = read_plan(kGoodPlan, "plans/test.yaml");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->policy.nvme_block_size, 512_KiB);
  EXPECT_EQ(r->policy.nvme_queue_depth, 16);
}

// Issue 11: `gradients: nvme` was accepted, then lowered with the gradients
// in CPU RAM, never freed. There is no gradient swap to NVMe, so the reader
// refuses it where the file says it.
TEST(PlanFile, GradientsOnNvmeAreRefusedWhereTheFileSaysSo) {
  const Diagnostics d = errors_of(replace(kGoodPlan, "optimizer: cpu, gradients: cpu}\n    - {param16: nvme",
                                          "optimizer: cpu, gradients: nvme}\n    - {param16: nvme"));
  ASSERT_EQ(d.size(), 1u);
  // "    - {param16: cpu, optimizer_states: nvme, optimizer: cpu, gradients: "
  // is 72 characters, so the value starts in column 73.
  EXPECT_EQ(d[0].to_string(),
            "plans/test.yaml:21:73: policy.partitions[1].gradients: gradients on nvme are not supported (no "
            "gradient swap to NVMe is modelled) (gpu or cpu; put the optimizer states on nvme instead)");
}

TEST(PlanFile, SyntaxErrorHasALine) {
  const Diagnostics d = errors_of(replace(kGoodPlan, "{param16: gpu,", "{param16: gpu,,]"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].where.line, 20);
  EXPECT_TRUE(d[0].what.starts_with("YAML syntax error")) << d[0].what;
}

TEST(PlanFile, LoadsFromDiskAndNamesAMissingFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "stowage_plan_file_test.yaml";
  std::ofstream(path) << write_plan(awkward_plan());
  Result<PlanFile> r = load_plan(path, STOWAGE_PROFILES_DIR);
  std::filesystem::remove(path);
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(*r, awkward_plan());

  Result<PlanFile> missing = load_plan(path, STOWAGE_PROFILES_DIR);
  ASSERT_FALSE(missing);
  ASSERT_EQ(missing.error().size(), 1u);
  EXPECT_EQ(missing.error()[0].where.file, path.string());
  EXPECT_TRUE(missing.error()[0].what.starts_with("cannot read file")) << missing.error()[0].what;
}

// A folder of its own under the system's temporary folder, removed after.
struct TempFolder {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("stowage_plan_refs_" + std::to_string(::getpid()));
  TempFolder() { std::filesystem::create_directories(path / "plans"); }
  ~TempFolder() { std::filesystem::remove_all(path); }
};

// Issue 11: `training: ./x.yaml` in a plan resolved against the working
// directory. A relative path names a file beside the plan; absolute paths
// and bundled names are kept as they are.
TEST(PlanFile, RelativeReferencesAreBesideThePlan) {
  const TempFolder dir;
  PlanFile plan = awkward_plan();
  const std::string machine = (dir.path / "profiles" / "m.yaml").string();
  plan.machine = machine;      // absolute, inside the profile folder
  plan.model = "../models/x";  // relative, inside the profile folder (the temporary folder below)
  plan.training = "./t.yaml";  // beside the plan
  const std::filesystem::path at = dir.path / "plans" / "p.yaml";
  std::ofstream(at) << write_plan(plan);
  Result<PlanFile> r = load_plan(at, dir.path);
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->machine, machine);
  EXPECT_EQ(r->model, (dir.path / "models" / "x").string());
  EXPECT_EQ(r->training, (dir.path / "plans" / "t.yaml").string());
  // A plan in the working directory: "./m" stays a path, not the name "m".
  plan.model = "./x";
  EXPECT_EQ(with_references_relative_to(plan, "p.yaml").model, "./x");
}

// The writer's side: references given relative to the working directory are
// rewritten relative to where the plan goes, so load_plan finds them again.
TEST(PlanFile, ReferencesAreWrittenRelativeToThePlan) {
  PlanFile plan = awkward_plan();
  plan.machine = "workstation-24gb-1nvme";
  plan.training = "profiles/t.yaml";
  const PlanFile out = with_references_relative_to(plan, "out/deep/p.yaml");
  EXPECT_EQ(out.machine, "workstation-24gb-1nvme");  // a bundled name
  EXPECT_EQ(out.training, "../../profiles/t.yaml");
  EXPECT_TRUE(is_path_reference("t.yml"));
  EXPECT_FALSE(is_path_reference("default"));
}

// Issue 16, item 3: the optimizer state precision. Absent reads as fp32 (every
// plan written before the field), fp32 is not written, bf16 is written and
// reads back, and another word is refused where the file says it.
TEST(PlanFile, OptimizerStatePrecisionIsOptionalAndRoundTrips) {
  Result<PlanFile> plain = read_plan(kGoodPlan, kFile);
  ASSERT_TRUE(plain) << to_string(plain.error());
  EXPECT_EQ(plain->policy.optimizer_state_precision, StatePrecision::kFp32);
  EXPECT_EQ(write_plan(*plain).find("optimizer_state_precision"), std::string::npos);
  PlanFile bf16 = awkward_plan();
  bf16.policy.optimizer_state_precision = StatePrecision::kBf16;
  EXPECT_NE(write_plan(bf16).find("  optimizer_state_precision: bf16\n"), std::string::npos);
  EXPECT_EQ(read_back(bf16), bf16);
  Result<PlanFile> spelled =
      read_plan(replace(kGoodPlan, "  micro_batch: 0\n", "  optimizer_state_precision: bf16\n  micro_batch: 0\n"), kFile);
  ASSERT_TRUE(spelled) << to_string(spelled.error());
  EXPECT_EQ(spelled->policy.optimizer_state_precision, StatePrecision::kBf16);
}

TEST(PlanFile, UnknownOptimizerStatePrecisionIsRefusedWhereItIs) {
  const Diagnostics d =
      errors_of(replace(kGoodPlan, "  micro_batch: 0\n", "  optimizer_state_precision: fp8\n  micro_batch: 0\n"));
  ASSERT_EQ(d.size(), 1u);
  // Line 17, "  optimizer_state_precision: " is 29 characters: column 30.
  EXPECT_EQ(d[0].to_string(),
            "plans/test.yaml:17:30: policy.optimizer_state_precision: unknown value 'fp8' (one of: fp32, bf16)");
}

// Issue 12 item 4: a plan's own references were followed anywhere, so a
// plan someone sent could make Stowage read `model: ../../etc/shadow`. A
// path must lie inside the plan's folder or the profile folder (the rule a
// machine profile's references follow, core/profile_reference.h); each one
// outside is refused at its line and column, naming the field, unread.
class PlanReferences : public ::testing::Test {
 protected:
  void SetUp() override {
    ::unsetenv(kAllowProfilePathsVariable);
    std::filesystem::create_directories(dir.path / "profiles");
    std::ofstream(dir.path / "secret.yaml") << "root:$6$hash-of-a-password:19000:0:99999:7:::\n";
  }
  void TearDown() override { ::unsetenv(kAllowProfilePathsVariable); }
  Result<PlanFile> load(const std::string& machine, const std::string& model, const std::string& training) {
    PlanFile plan = awkward_plan();
    plan.machine = machine;
    plan.model = model;
    plan.training = training;
    std::ofstream(at) << write_plan(plan);
    return load_plan(at, dir.path / "profiles");
  }
  TempFolder dir;
  std::filesystem::path at = dir.path / "plans" / "p.yaml";
};

TEST_F(PlanReferences, PathsOutsideThePlansFolderAndTheProfileFolderAreRefusedAtTheirLine) {
  const std::string secret = (dir.path / "secret.yaml").string();
  Result<PlanFile> r = load(secret, "../secret.yaml", "tiny");
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 2u) << to_string(r.error());
  // "machine: " and "model: " are 9 and 7 characters: values in columns 10 and 8.
  const std::string folders = "' lies outside the profile folder '" + (dir.path / "profiles").string() +
                              "' and the plan's folder '" + (dir.path / "plans").string() + "', so it is not read";
  const std::string expected =
      " profile name, or a path inside those folders; STOWAGE_ALLOW_PROFILE_PATHS=1 allows any path)";
  EXPECT_EQ(r.error()[0].to_string(),
            at.string() + ":2:10: machine: the reference '" + secret + folders + " (a machine" + expected);
  EXPECT_EQ(r.error()[1].to_string(),
            at.string() + ":3:8: model: the reference '../secret.yaml" + folders + " (a model" + expected);
  EXPECT_EQ(to_string(r.error()).find("hash-of-a-password"), std::string::npos);
  // "a/../../b" leaves "a" whatever the file system holds.
  Result<PlanFile> dotted = load("workstation-24gb-1nvme", "tiny-gpt", "./sub/../../secret.yaml");
  ASSERT_FALSE(dotted);
  EXPECT_TRUE(dotted.error()[0].what.starts_with("training: the reference")) << dotted.error()[0].what;
  EXPECT_EQ(dotted.error()[0].where.line, 4);
}

TEST_F(PlanReferences, PathsInsideEitherFolderAndBundledNamesAreFollowed) {
  const std::string in_profiles = (dir.path / "profiles" / "m.yaml").string();
  Result<PlanFile> r = load(in_profiles, "./models/x.yaml", "tiny");
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->machine, in_profiles);
  EXPECT_EQ(r->model, (dir.path / "plans" / "models" / "x.yaml").string());
  EXPECT_EQ(r->training, "tiny");
  Result<PlanFile> up = load("workstation-24gb-1nvme", "../profiles/x.yaml", "tiny");  // out of plans/, into profiles/
  ASSERT_TRUE(up) << to_string(up.error());
  EXPECT_EQ(up->model, (dir.path / "profiles" / "x.yaml").string());
}

TEST_F(PlanReferences, TheVariableAllowsAnyPath) {
  ::setenv(kAllowProfilePathsVariable, "1", 1);
  Result<PlanFile> r = load("workstation-24gb-1nvme", "../secret.yaml", "tiny");
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->model, (dir.path / "secret.yaml").string());
  ::setenv(kAllowProfilePathsVariable, "yes", 1);  // only "1" allows
  EXPECT_FALSE(load("workstation-24gb-1nvme", "../secret.yaml", "tiny"));
}

// The writer's side: a command that saves a plan naming a file the reader
// would refuse says so (it still writes what the user asked for).
TEST_F(PlanReferences, AWriterIsToldWhichReferencesReadingBackWouldRefuse) {
  PlanFile plan = awkward_plan();
  plan.machine = "workstation-24gb-1nvme";
  plan.model = "../secret.yaml";
  plan.training = "./t.yaml";
  const std::vector<std::string> w = references_refused_on_reading(plan, at, dir.path / "profiles");
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "model: '../secret.yaml' lies outside the folder of " + at.string() +
                      " and the profile folder, so reading that plan back needs the file copied beside it or "
                      "STOWAGE_ALLOW_PROFILE_PATHS=1");
  ::setenv(kAllowProfilePathsVariable, "1", 1);
  EXPECT_TRUE(references_refused_on_reading(plan, at, dir.path / "profiles").empty());
}

}  // namespace
}  // namespace stowage::core
