// Validation of a workload against what the executor's model implements,
// and the per-layer tensor layout shared by every kernel.
#include "executor/model/model_shape.h"

#include <numeric>
#include <stdexcept>

namespace stowage::executor::model {
namespace {

using core::Diagnostic;
using core::Diagnostics;
using core::LayerKind;

constexpr std::string_view kSupported =
    "the executor trains GPT-2-style models: norm layernorm, mlp gelu, position learned, biases true, "
    "kv_heads = heads, experts 1, tied_embeddings true, embedding_norm false";

void linear(std::vector<TensorSlot>& slots, const std::string& module, int64_t out, int64_t in) {
  slots.push_back({module + ".weight", {out, in}});
  slots.push_back({module + ".bias", {out}});
}

void norm(std::vector<TensorSlot>& slots, const std::string& module, int64_t d) {
  slots.push_back({module + ".weight", {d}});
  slots.push_back({module + ".bias", {d}});
}

std::vector<TensorSlot> block_slots(const ModelShape& s) {
  const int64_t d = s.d_model;
  const int64_t a = s.attention_width();
  std::vector<TensorSlot> slots;
  norm(slots, "attn_norm", d);
  linear(slots, "attn.q_proj", a, d);
  linear(slots, "attn.k_proj", a, d);
  linear(slots, "attn.v_proj", a, d);
  linear(slots, "attn.o_proj", d, a);
  norm(slots, "mlp_norm", d);
  linear(slots, "mlp.up_proj", s.ffn, d);
  linear(slots, "mlp.down_proj", d, s.ffn);
  return slots;
}

std::string model_label(const core::ModelSpec& m) { return "model '" + m.name + "'"; }

void check_spec(const core::ModelSpec& m, const core::Workload& w, Diagnostics& out) {
  auto reject = [&](bool bad, const std::string& what) {
    if (bad) out.push_back({.what = model_label(m) + ": " + what + " is not supported", .expected = std::string(kSupported)});
  };
  reject(m.norm != core::NormKind::kLayerNorm, "norm rmsnorm");
  reject(m.mlp != core::MlpKind::kGelu, m.mlp == core::MlpKind::kRelu ? "mlp relu" : "mlp swiglu");
  reject(m.position != core::PositionKind::kLearned, m.position == core::PositionKind::kRope ? "position rope" : "position alibi");
  reject(!m.biases, "biases false");
  reject(m.kv_heads != m.heads, "grouped-query attention (kv_heads " + std::to_string(m.kv_heads) + " != heads " +
                                    std::to_string(m.heads) + ")");
  reject(m.experts != 1, "mixture of experts (" + std::to_string(m.experts) + " experts)");
  reject(!m.tied_embeddings, "tied_embeddings false");
  reject(m.embedding_norm, "embedding_norm true");
  const bool positive = m.d_model > 0 && m.layers >= 0 && m.heads > 0 && m.head_dim > 0 && m.ffn > 0 &&
                        m.vocab > 0 && m.max_positions > 0 && m.position_offset >= 0;
  reject(!positive, "a non-positive dimension");
  if (w.sequence_length() < 1 || w.sequence_length() > m.max_positions) {
    out.push_back({.what = model_label(m) + ": sequence length " + std::to_string(w.sequence_length()) +
                           " does not fit the position table",
                   .expected = "1 to max_positions = " + std::to_string(m.max_positions)});
  }
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool names_match(const std::string& name, const std::string& leaf) {
  return name == leaf || (name.size() > leaf.size() && name.ends_with("." + leaf));
}

}  // namespace

std::vector<TensorSlot> with_offsets(std::vector<TensorSlot> slots) {
  int64_t offset = 0;
  for (TensorSlot& s : slots) {
    s.offset = offset;
    offset += s.elements();
  }
  return slots;
}

// The workload's tensors of one layer against the layout the kernels use.
void check_layer_slots(const core::Layer& layer, const std::vector<TensorSlot>& slots, Diagnostics& out) {
  const size_t n = std::max(slots.size(), layer.params.size());
  for (size_t i = 0; i < n; ++i) {
    const std::string have =
        i < layer.params.size() ? layer.params[i].name + " " + shape_string(layer.params[i].shape) : "nothing";
    const std::string want = i < slots.size() ? slots[i].leaf + " " + shape_string(slots[i].shape) : "nothing";
    const bool same = i < layer.params.size() && i < slots.size() && names_match(layer.params[i].name, slots[i].leaf) &&
                      layer.params[i].shape == slots[i].shape;
    if (!same) {
      out.push_back({.what = "layer '" + layer.name + "' tensor " + std::to_string(i) + " is " + have,
                     .expected = "the executor's layout: " + want});
    }
  }
}

int64_t TensorSlot::elements() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

std::vector<TensorSlot> layer_slots(LayerKind kind, const ModelShape& s) {
  switch (kind) {
    case LayerKind::kEmbedding:
      return with_offsets({{"embed_tokens.weight", {s.vocab, s.d_model}},
                           {"embed_positions.weight", {s.position_rows(), s.d_model}}});
    case LayerKind::kBlock:
      return with_offsets(block_slots(s));
    case LayerKind::kFinal:
      return with_offsets({{"final_norm.weight", {s.d_model}}, {"final_norm.bias", {s.d_model}}});
  }
  throw std::logic_error("layer_slots: unknown layer kind");
}

int64_t offset_of(const std::vector<TensorSlot>& slots, std::string_view leaf) {
  for (const TensorSlot& s : slots) {
    if (s.leaf == leaf) return s.offset;
  }
  throw std::logic_error("offset_of: no tensor '" + std::string(leaf) + "' in the layout");
}

core::Result<ModelShape> model_shape_of(const core::Workload& workload) {
  const core::ModelSpec& m = workload.model();
  Diagnostics problems;
  check_spec(m, workload, problems);
  if (!problems.empty()) return std::unexpected(problems);
  const ModelShape shape{.vocab = m.vocab,
                         .d_model = m.d_model,
                         .heads = m.heads,
                         .head_dim = m.head_dim,
                         .ffn = m.ffn,
                         .layers = m.layers,
                         .max_positions = m.max_positions,
                         .position_offset = m.position_offset};
  for (const core::Layer& layer : workload.layers()) {
    check_layer_slots(layer, layer_slots(layer.kind, shape), problems);
  }
  if (!problems.empty()) return std::unexpected(problems);
  return shape;
}

}  // namespace stowage::executor::model
