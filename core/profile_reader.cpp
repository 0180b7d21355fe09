#include "core/profile_reader.h"

#include <array>
#include <cmath>
#include <utility>

#include "core/calibration_reader.h"
#include "core/profile_kind.h"
#include "core/yaml_reader.h"

namespace stowage::core {
namespace {

using namespace literals;

// Sanity ranges: wide enough for any real part, narrow enough to catch a
// wrong unit ("80 MB" of GPU memory, "7450 GB/s" for an SSD).
constexpr Bounds<Bytes> kGpuMemory{1_GiB, 4_TiB};
// The low ends admit the CPU backend's "device" as `stowage profile`
// measures it (a few GB/s of memcpy, tens of GFLOP/s of fp32 GEMM).
constexpr Bounds<BytesPerSecond> kGpuMemoryBandwidth{BytesPerSecond(1e9), BytesPerSecond(100e12)};
constexpr Bounds<FlopsPerSecond> kGpuRate{FlopsPerSecond(1e9), FlopsPerSecond(100e15)};
constexpr Bounds<BytesPerSecond> kLinkBandwidth{BytesPerSecond(1e9), BytesPerSecond(10e12)};
constexpr Bounds<int64_t> kPcieGeneration{1, 6};
constexpr Bounds<int64_t> kPcieLanes{1, 16};
constexpr Bounds<Bytes> kNvmeCapacity{1_GB, Bytes(1'000'000'000'000'000)};
constexpr Bounds<BytesPerSecond> kNvmeRate{BytesPerSecond(10e6), BytesPerSecond(100e9)};
constexpr Bounds<Bytes> kNvmeEndurance{1_TB, Bytes(1'000'000'000'000'000'000)};
constexpr Bounds<Bytes> kDram{1_GiB, Bytes(int64_t{64} << 40)};
constexpr Bounds<BytesPerSecond> kDramBandwidth{BytesPerSecond(1e9), BytesPerSecond(10e12)};
constexpr Bounds<int64_t> kDimension{1, 1'000'000};
constexpr Bounds<int64_t> kSmallCount{1, 10'000};

// The shared frame of every reader: parse, check `format`, read the common
// fields, let `fill` read the rest, report unknown keys, collect the result.
template <class Spec, class Fill>
Result<Spec> read_profile(const std::string& text, const std::string& file, const std::string& name,
                          ProfileKind kind, Fill fill) {
  Result<YAML::Node> root = load_yaml_text(text, file);
  if (!root) return std::unexpected(root.error());
  Diagnostics diagnostics;
  YamlMap map(*root, file, diagnostics);
  if (!check_format(map, *root, format_word(kind))) return std::unexpected(diagnostics);
  Spec spec;
  spec.name = name;
  assign(spec.label, map.text("label", Need::kRequired));
  assign(spec.source, map.text("source", Need::kRequired));
  fill(map, spec);
  map.finish();
  if (!diagnostics.empty()) return std::unexpected(diagnostics);
  return spec;
}

void fill_gpu(YamlMap& m, GpuSpec& g) {
  assign(g.memory, m.bytes("memory", Need::kRequired, kGpuMemory));
  assign(g.memory_bandwidth, m.bandwidth("memory_bandwidth", Need::kRequired, kGpuMemoryBandwidth));
  assign(g.fp16_rate, m.flops_rate("fp16_rate", Need::kRequired, kGpuRate));
  g.bf16_rate = m.flops_rate("bf16_rate", Need::kOptional, kGpuRate);
  assign(g.fp32_rate, m.flops_rate("fp32_rate", Need::kRequired, kGpuRate));
  assign(g.pcie_generation, m.integer("pcie_generation", Need::kRequired, kPcieGeneration));
  assign(g.pcie_lanes, m.integer("pcie_lanes", Need::kRequired, kPcieLanes));
  g.gpu_link_bandwidth = m.bandwidth("gpu_link_bandwidth", Need::kOptional, kLinkBandwidth);
  if (auto names = m.texts("device_names", Need::kOptional)) g.device_names = std::move(*names);
}

void fill_nvme(YamlMap& m, NvmeSpec& n) {
  assign(n.capacity, m.bytes("capacity", Need::kRequired, kNvmeCapacity));
  assign(n.sequential_read, m.bandwidth("sequential_read", Need::kRequired, kNvmeRate));
  assign(n.sequential_write, m.bandwidth("sequential_write", Need::kRequired, kNvmeRate));
  n.sustained_write = m.bandwidth("sustained_write", Need::kOptional, kNvmeRate);
  assign(n.endurance, m.bytes("endurance", Need::kRequired, kNvmeEndurance));
  assign(n.pcie_generation, m.integer("pcie_generation", Need::kRequired, kPcieGeneration));
  assign(n.pcie_lanes, m.integer("pcie_lanes", Need::kRequired, kPcieLanes));
  if (n.sustained_write && *n.sustained_write > n.sequential_write) {
    m.report("sustained_write", "is faster than sequential_write",
             "the rate after the write cache fills, at most sequential_write");
  }
}

void fill_host(YamlMap& m, HostSpec& h) {
  assign(h.cpu_cores, m.integer("cpu_cores", Need::kRequired, {1, 4096}));
  assign(h.sockets, m.integer("sockets", Need::kOptional, {1, 16}));
  assign(h.dram, m.bytes("dram", Need::kRequired, kDram));
  assign(h.dram_bandwidth, m.bandwidth("dram_bandwidth", Need::kRequired, kDramBandwidth));
  assign(h.pcie_lanes, m.integer("pcie_lanes", Need::kRequired, {1, 1024}));
  assign(h.pcie_generation, m.integer("pcie_generation", Need::kRequired, kPcieGeneration));
}

constexpr std::array<std::pair<std::string_view, NormKind>, 2> kNorms{
    {{"layernorm", NormKind::kLayerNorm}, {"rmsnorm", NormKind::kRmsNorm}}};
constexpr std::array<std::pair<std::string_view, MlpKind>, 3> kMlps{
    {{"gelu", MlpKind::kGelu}, {"relu", MlpKind::kRelu}, {"swiglu", MlpKind::kSwiglu}}};
constexpr std::array<std::pair<std::string_view, PositionKind>, 3> kPositions{
    {{"learned", PositionKind::kLearned}, {"rope", PositionKind::kRope}, {"alibi", PositionKind::kAlibi}}};

void check_model_shape(YamlMap& m, ModelSpec& s, bool head_dim_given) {
  if (s.heads <= 0 || s.d_model <= 0) return;  // already reported
  if (!head_dim_given) {
    if (s.d_model % s.heads != 0) {
      m.report("heads", std::to_string(s.heads) + " heads do not divide d_model " + std::to_string(s.d_model),
               "a divisor of d_model, or an explicit head_dim");
    }
    s.head_dim = s.d_model / s.heads;
  }
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  if (s.heads % s.kv_heads != 0) {
    m.report("kv_heads", std::to_string(s.kv_heads) + " does not divide heads " + std::to_string(s.heads),
             "a divisor of heads (grouped-query attention)");
  }
  if (s.experts_per_token > s.experts) {
    m.report("experts_per_token", "more than the " + std::to_string(s.experts) + " experts",
             "at most 'experts'");
  }
}

void fill_model(YamlMap& m, ModelSpec& s) {
  assign(s.d_model, m.integer("d_model", Need::kRequired, kDimension));
  assign(s.layers, m.integer("layers", Need::kRequired, kSmallCount));
  assign(s.heads, m.integer("heads", Need::kRequired, kSmallCount));
  assign(s.kv_heads, m.integer("kv_heads", Need::kOptional, kSmallCount));
  const std::optional<int64_t> head_dim = m.integer("head_dim", Need::kOptional, kSmallCount);
  assign(s.head_dim, head_dim);
  assign(s.ffn, m.integer("ffn", Need::kRequired, kDimension));
  assign(s.vocab, m.integer("vocab", Need::kRequired, {1, 10'000'000}));
  assign(s.max_positions, m.integer("max_positions", Need::kRequired, {1, 100'000'000}));
  assign(s.position_offset, m.integer("position_offset", Need::kOptional, {0, 1024}));
  assign(s.position, m.choice<PositionKind>("position", Need::kRequired, kPositions));
  assign(s.rope_theta, m.number("rope_theta", Need::kOptional, {1, 1e12}));
  assign(s.norm, m.choice<NormKind>("norm", Need::kRequired, kNorms));
  assign(s.mlp, m.choice<MlpKind>("mlp", Need::kRequired, kMlps));
  assign(s.biases, m.boolean("biases", Need::kRequired));
  assign(s.tied_embeddings, m.boolean("tied_embeddings", Need::kRequired));
  assign(s.embedding_norm, m.boolean("embedding_norm", Need::kOptional));
  assign(s.experts, m.integer("experts", Need::kOptional, {1, 4096}));
  assign(s.experts_per_token, m.integer("experts_per_token", Need::kOptional, {1, 4096}));
  if (std::optional<double> official = m.number("official_params", Need::kOptional, {1, 1e16})) {
    s.official_params = static_cast<int64_t>(*official);
    assign(s.official_params_source, m.text("official_params_source", Need::kRequired));
  } else {
    assign(s.official_params_source, m.text("official_params_source", Need::kOptional));
  }
  check_model_shape(m, s, head_dim.has_value());
}

constexpr std::array<std::pair<std::string_view, Precision>, 2> kPrecisions{
    {{"bf16", Precision::kBf16}, {"fp16", Precision::kFp16}}};
constexpr std::array<std::pair<std::string_view, OptimizerKind>, 2> kOptimizers{
    {{"adam", OptimizerKind::kAdam}, {"adamw", OptimizerKind::kAdamW}}};

void fill_adam(YamlMap& a, AdamConfig& c) {
  assign(c.learning_rate, a.number("learning_rate", Need::kOptional, {0, 10}));
  assign(c.beta1, a.number("beta1", Need::kOptional, {0, 0.999999}));
  assign(c.beta2, a.number("beta2", Need::kOptional, {0, 0.999999999}));
  assign(c.eps, a.number("eps", Need::kOptional, {1e-30, 1}));
  assign(c.weight_decay, a.number("weight_decay", Need::kOptional, {0, 10}));
  a.finish();
}

void fill_training(YamlMap& m, TrainingSpec& t) {
  assign(t.micro_batch, m.integer("micro_batch", Need::kRequired, {1, 1'000'000}));
  assign(t.sequence_length, m.integer("sequence_length", Need::kRequired, {1, 100'000'000}));
  assign(t.gradient_accumulation, m.integer("gradient_accumulation", Need::kOptional, {1, 1'000'000}));
  assign(t.precision, m.choice<Precision>("precision", Need::kRequired, kPrecisions));
  if (std::optional<YamlMap> ls = m.map("loss_scaling", Need::kOptional)) {
    const std::optional<double> initial = ls->number("initial_scale", Need::kOptional, {1, 1e30});
    assign(t.loss_scaling.initial_scale, initial);
    // DeepSpeed's spelling of the same: initial_scale = 2^initial_scale_power.
    if (std::optional<int64_t> power = ls->integer("initial_scale_power", Need::kOptional, {0, 64})) {
      if (initial) {
        ls->report("initial_scale_power", "given with initial_scale",
                   "one of initial_scale, initial_scale_power");
      }
      t.loss_scaling.initial_scale = std::ldexp(1.0, static_cast<int>(*power));
    }
    assign(t.loss_scaling.window, ls->integer("window", Need::kOptional, {1, 1'000'000'000}));
    assign(t.loss_scaling.min_scale, ls->number("min_scale", Need::kOptional, {1e-30, 1e30}));
    assign(t.loss_scaling.hysteresis, ls->integer("hysteresis", Need::kOptional, {1, 1'000'000'000}));
    ls->finish();
    if (t.precision == Precision::kBf16) {
      m.report("loss_scaling", "given with precision bf16", "loss scaling only with precision fp16");
    }
  }
  assign(t.optimizer, m.choice<OptimizerKind>("optimizer", Need::kRequired, kOptimizers));
  if (std::optional<YamlMap> adam = m.map("adam", Need::kOptional)) fill_adam(*adam, t.adam);
  assign(t.activation_checkpointing, m.boolean("activation_checkpointing", Need::kRequired));
  assign(t.max_grad_norm, m.number("max_grad_norm", Need::kOptional, {0, 1e30}));
}

}  // namespace

Result<GpuSpec> read_gpu_profile(const std::string& text, const std::string& file, const std::string& name) {
  return read_profile<GpuSpec>(text, file, name, ProfileKind::kGpu, fill_gpu);
}
Result<NvmeSpec> read_nvme_profile(const std::string& text, const std::string& file, const std::string& name) {
  return read_profile<NvmeSpec>(text, file, name, ProfileKind::kNvme, fill_nvme);
}
Result<HostSpec> read_host_profile(const std::string& text, const std::string& file, const std::string& name) {
  return read_profile<HostSpec>(text, file, name, ProfileKind::kHost, fill_host);
}
Result<ModelSpec> read_model_profile(const std::string& text, const std::string& file, const std::string& name) {
  return read_profile<ModelSpec>(text, file, name, ProfileKind::kModel, fill_model);
}
Result<TrainingSpec> read_training_profile(const std::string& text, const std::string& file,
                                           const std::string& name) {
  return read_profile<TrainingSpec>(text, file, name, ProfileKind::kTraining, fill_training);
}

namespace {

// A machine's part: a profile name, or a map of that kind's keys inline.
template <class Spec, class Fill>
void read_part(YamlMap& m, std::string_view key, Need need, const std::string& machine, std::string& name,
               std::optional<Spec>& inline_spec, Fill fill) {
  if (m.holds_map(key)) {
    std::optional<YamlMap> part = m.map(key, need);
    if (!part) return;
    Spec spec;
    spec.name = machine + "." + std::string(key);
    assign(spec.label, part->text("label", Need::kRequired));
    assign(spec.source, part->text("source", Need::kRequired));
    fill(*part, spec);
    part->finish();
    inline_spec = std::move(spec);
    return;
  }
  assign(name, m.text(key, need));
}

}  // namespace

Result<MachineReferences> read_machine_profile(const std::string& text, const std::string& file,
                                               const std::string& name) {
  return read_profile<MachineReferences>(text, file, name, ProfileKind::kMachine,
                                         [&name](YamlMap& m, MachineReferences& r) {
    read_part(m, "gpu", Need::kRequired, name, r.gpu, r.gpu_inline, fill_gpu);
    r.gpu_at = m.location_of("gpu");
    assign(r.gpu_count, m.integer("gpu_count", Need::kRequired, {1, 1024}));
    read_part(m, "host", Need::kRequired, name, r.host, r.host_inline, fill_host);
    r.host_at = m.location_of("host");
    assign(r.nvme_count, m.integer("nvme_count", Need::kRequired, {0, 256}));
    const Need nvme_need = r.nvme_count > 0 ? Need::kRequired : Need::kOptional;
    read_part(m, "nvme", nvme_need, name, r.nvme, r.nvme_inline, fill_nvme);
    r.nvme_at = m.location_of("nvme");
    if (std::optional<YamlMap> c = m.map("calibration", Need::kOptional)) read_calibration(*c, r.calibration);
  });
}

}  // namespace stowage::core
