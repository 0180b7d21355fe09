// Bad input of every kind the issue names, each reported as
// file:line:column with the field, and all problems in a file at once.
#include "core/profile_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stowage::core {
namespace {

const char* const kGoodGpu = R"(format: stowage/gpu/v1
label: Test GPU
source: made up for a test
memory: 24 GiB
memory_bandwidth: 1008 GB/s
fp16_rate: 165 TFLOP/s
fp32_rate: 82.6 TFLOP/s
pcie_generation: 4
pcie_lanes: 16
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

Diagnostics errors_of(const std::string& text) {
  auto r = read_gpu_profile(text, "gpus/test.yaml", "test");
  EXPECT_FALSE(r.has_value());
  return r ? Diagnostics{} : r.error();
}

TEST(ProfileReader, ReadsAGoodGpu) {
  auto r = read_gpu_profile(kGoodGpu, "gpus/test.yaml", "test");
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->name, "test");
  EXPECT_EQ(r->memory, Bytes(int64_t{24} << 30));
  EXPECT_DOUBLE_EQ(r->fp16_rate.value(), 165e12);
  EXPECT_FALSE(r->bf16_rate.has_value());
}

// device_names: a list of text values, in order; anything else is named
// with its place.
TEST(ProfileReader, DeviceNamesAreAListOfTexts) {
  auto r = read_gpu_profile(std::string(kGoodGpu) + "device_names: [\"NVIDIA A\", \"NVIDIA A (2)\"]\n",
                            "gpus/test.yaml", "test");
  ASSERT_TRUE(r) << to_string(r.error());
  EXPECT_EQ(r->device_names, (std::vector<std::string>{"NVIDIA A", "NVIDIA A (2)"}));
  EXPECT_TRUE(read_gpu_profile(kGoodGpu, "gpus/test.yaml", "test")->device_names.empty());
  Diagnostics d = errors_of(std::string(kGoodGpu) + "device_names: NVIDIA A\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(
      d[0].to_string(),
      "gpus/test.yaml:10:15: device_names: wrong type: 'NVIDIA A' (a list of text values, e.g. [\"one\", "
      "\"two\"])");
  d = errors_of(std::string(kGoodGpu) + "device_names:\n  - NVIDIA A\n  - {x: 1}\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string(), "gpus/test.yaml:12:5: device_names[1]: wrong type: a mapping (a text value)");
}

TEST(ProfileReader, UnknownKeySuggestsTheNearest) {
  const Diagnostics d = errors_of(replace(kGoodGpu, "memory: 24 GiB", "memroy: 24 GiB"));
  ASSERT_EQ(d.size(), 2u);  // memory is now missing, memroy is unknown
  EXPECT_EQ(d[0].to_string(), "gpus/test.yaml:1:1: missing field 'memory' (a value for 'memory')");
  EXPECT_EQ(d[1].to_string(), "gpus/test.yaml:4:1: unknown key 'memroy' (did you mean 'memory'?)");
}

TEST(ProfileReader, WrongTypeNamesTheField) {
  const Diagnostics d = errors_of(replace(kGoodGpu, "pcie_lanes: 16", "pcie_lanes: sixteen"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].where.line, 9);
  EXPECT_EQ(d[0].where.column, 13);
  EXPECT_EQ(d[0].what, "pcie_lanes: wrong type: 'sixteen' is not a whole number");
}

TEST(ProfileReader, MappingWhereAValueBelongsIsAWrongType) {
  const Diagnostics d = errors_of(replace(kGoodGpu, "memory: 24 GiB", "memory:\n  size: 24 GiB"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "memory: wrong type: a mapping");
  EXPECT_EQ(d[0].where.line, 5);
}

TEST(ProfileReader, MissingFieldIsReported) {
  const Diagnostics d = errors_of(replace(kGoodGpu, "fp32_rate: 82.6 TFLOP/s\n", ""));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "missing field 'fp32_rate'");
}

TEST(ProfileReader, NegativeSizeIsRejected) {
  const Diagnostics d = errors_of(replace(kGoodGpu, "memory: 24 GiB", "memory: -24 GiB"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].where.line, 4);
  EXPECT_NE(d[0].what.find("memory: "), std::string::npos);
  EXPECT_NE(d[0].what.find("negative"), std::string::npos) << d[0].what;
}

TEST(ProfileReader, AbsurdSizeIsOutOfRange) {
  // 24 MiB of GPU memory is a wrong unit, not a real card.
  const Diagnostics d = errors_of(replace(kGoodGpu, "memory: 24 GiB", "memory: 24 MiB"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "memory: '24 MiB' is out of range");
  EXPECT_EQ(d[0].expected, "between 1 GiB and 4 TiB");
}

TEST(ProfileReader, UnknownUnitIsReported) {
  const Diagnostics d = errors_of(replace(kGoodGpu, "1008 GB/s", "1008 Gb/s"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].where.line, 5);
  EXPECT_NE(d[0].what.find("unknown unit"), std::string::npos) << d[0].what;
}

TEST(ProfileReader, UnknownFormatVersionListsKnownOnes) {
  const Diagnostics d = errors_of(replace(kGoodGpu, "stowage/gpu/v1", "stowage/gpu/v7"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string(),
            "gpus/test.yaml:1:9: format: unknown format version 'stowage/gpu/v7' (known versions: stowage/gpu/v1)");
}

TEST(ProfileReader, WrongKindIsReported) {
  const Diagnostics d = errors_of(replace(kGoodGpu, "stowage/gpu/v1", "stowage/model/v1"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "format: 'stowage/model/v1' is not a gpu file");
}

TEST(ProfileReader, FormatMustComeFirst) {
  const std::string moved = replace(kGoodGpu, "format: stowage/gpu/v1\nlabel: Test GPU\n", "label: Test GPU\nformat: stowage/gpu/v1\n");
  const Diagnostics d = errors_of(moved);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "format: 'format' must be the first key");
}

TEST(ProfileReader, ReportsEveryProblemAtOnce) {
  std::string text = replace(kGoodGpu, "memory: 24 GiB", "memory: 24 GiBs");
  text = replace(text, "pcie_lanes: 16", "pcie_lanes: 99");
  text += "colour: green\n";
  const Diagnostics d = errors_of(text);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].where.line, 4);
  EXPECT_EQ(d[1].where.line, 9);
  EXPECT_EQ(d[1].what, "pcie_lanes: 99 is out of range");
  EXPECT_EQ(d[2].where.line, 10);
}

TEST(ProfileReader, DuplicateKeyIsReported) {
  const Diagnostics d = errors_of(std::string(kGoodGpu) + "memory: 48 GiB\n");
  ASSERT_FALSE(d.empty());
  EXPECT_EQ(d.back().what, "duplicate key 'memory'");
  EXPECT_EQ(d.back().expected, "each key once; first given on line 4");
}

TEST(ProfileReader, SyntaxErrorHasALine) {
  const Diagnostics d = errors_of("format: stowage/gpu/v1\nmemory: [24 GiB\n");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_GT(d[0].where.line, 0);
  EXPECT_NE(d[0].what.find("YAML syntax error"), std::string::npos);
}

TEST(ProfileReader, EmptyFileIsNotAMapping) {
  const Diagnostics d = errors_of("");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].what, "the file is not a YAML mapping");
}

TEST(ProfileReader, ChoiceSuggestsTheNearestWord) {
  auto r = read_training_profile(R"(format: stowage/training/v1
label: t
source: t
micro_batch: 1
sequence_length: 2048
precision: bf61
optimizer: adamw
activation_checkpointing: true
)", "training/t.yaml", "t");
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 1u);
  EXPECT_EQ(r.error()[0].to_string(),
            "training/t.yaml:6:12: precision: unknown value 'bf61' (did you mean 'bf16'? one of: bf16, fp16)");
}

TEST(ProfileReader, NestedMapKeysAreQualified) {
  auto r = read_training_profile(R"(format: stowage/training/v1
label: t
source: t
micro_batch: 1
sequence_length: 2048
precision: bf16
optimizer: adamw
adam:
  beta1: 0.9
  beta_2: 0.95
activation_checkpointing: true
)", "training/t.yaml", "t");
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 1u);
  EXPECT_EQ(r.error()[0].to_string(), "training/t.yaml:10:3: unknown key 'adam.beta_2' (did you mean 'beta2'?)");
}

TEST(ProfileReader, ModelShapeIsChecked) {
  auto r = read_model_profile(R"(format: stowage/model/v1
label: m
source: m
d_model: 100
layers: 2
heads: 3
kv_heads: 2
ffn: 400
vocab: 256
max_positions: 128
position: rope
norm: rmsnorm
mlp: swiglu
biases: false
tied_embeddings: false
)", "models/m.yaml", "m");
  ASSERT_FALSE(r);
  ASSERT_EQ(r.error().size(), 2u);
  EXPECT_EQ(r.error()[0].what, "heads: 3 heads do not divide d_model 100");
  EXPECT_EQ(r.error()[1].what, "kv_heads: 2 does not divide heads 3");
}

TEST(ProfileReader, MachineNeedsADriveModelWhenItHasDrives) {
  auto r = read_machine_profile(R"(format: stowage/machine/v1
label: m
source: m
gpu: a100-80gb
gpu_count: 1
host: dgx-a100-host
nvme_count: 2
)", "machines/m.yaml", "m");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error()[0].what, "missing field 'nvme'");
}

}  // namespace
}  // namespace stowage::core
