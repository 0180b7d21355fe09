// Validation of a workload against the Llama the executor implements, and
// its per-layer tensor layout.
#include "executor/model/llama_shape.h"

#include <stdexcept>
#include <string>

namespace stowage::executor::model {
namespace {

using core::Diagnostics;
using core::LayerKind;

constexpr std::string_view kSupported =
    "the executor trains Llama-style models: norm rmsnorm, mlp swiglu, position rope, biases false, "
    "tied_embeddings false, experts 1, embedding_norm false, an even head_dim";

std::vector<TensorSlot> block_slots(const LlamaShape& s) {
  const int64_t d = s.d_model;
  return {{"attn_norm.weight", {d}},
          {"attn.q_proj.weight", {s.q_width(), d}},
          {"attn.k_proj.weight", {s.kv_width(), d}},
          {"attn.v_proj.weight", {s.kv_width(), d}},
          {"attn.o_proj.weight", {d, s.q_width()}},
          {"mlp_norm.weight", {d}},
          {"mlp.gate_proj.weight", {s.ffn, d}},
          {"mlp.up_proj.weight", {s.ffn, d}},
          {"mlp.down_proj.weight", {d, s.ffn}}};
}

void check_spec(const core::ModelSpec& m, const core::Workload& w, Diagnostics& out) {
  const std::string label = "model '" + m.name + "': ";
  auto reject = [&](bool bad, const std::string& what) {
    if (bad) out.push_back({.what = label + what + " is not supported", .expected = std::string(kSupported)});
  };
  reject(m.norm != core::NormKind::kRmsNorm, "norm layernorm");
  reject(m.mlp != core::MlpKind::kSwiglu, m.mlp == core::MlpKind::kRelu ? "mlp relu" : "mlp gelu");
  reject(m.position != core::PositionKind::kRope,
         m.position == core::PositionKind::kLearned ? "position learned" : "position alibi");
  reject(m.biases, "biases true");
  reject(m.tied_embeddings, "tied_embeddings true");
  reject(m.experts != 1, "mixture of experts (" + std::to_string(m.experts) + " experts)");
  reject(m.embedding_norm, "embedding_norm true");
  reject(m.head_dim % 2 != 0, "an odd head_dim (" + std::to_string(m.head_dim) + ")");
  const bool positive = m.d_model > 0 && m.layers >= 0 && m.heads > 0 && m.kv_heads > 0 && m.head_dim > 0 &&
                        m.ffn > 0 && m.vocab > 0 && m.max_positions > 0 && m.rope_theta > 0;
  reject(!positive, "a non-positive dimension");
  reject(positive && m.heads % m.kv_heads != 0,
         "kv_heads " + std::to_string(m.kv_heads) + " not dividing heads " + std::to_string(m.heads));
  if (w.sequence_length() < 1 || w.sequence_length() > m.max_positions) {
    out.push_back({.what = label + "sequence length " + std::to_string(w.sequence_length()) +
                           " does not fit max_positions",
                   .expected = "1 to max_positions = " + std::to_string(m.max_positions)});
  }
}

}  // namespace

bool is_llama_style(const core::ModelSpec& m) {
  return m.norm == core::NormKind::kRmsNorm || m.mlp == core::MlpKind::kSwiglu ||
         m.position == core::PositionKind::kRope;
}

std::vector<TensorSlot> llama_layer_slots(LayerKind kind, const LlamaShape& s) {
  switch (kind) {
    case LayerKind::kEmbedding:
      return with_offsets({{"embed_tokens.weight", {s.vocab, s.d_model}}});
    case LayerKind::kBlock:
      return with_offsets(block_slots(s));
    case LayerKind::kFinal:
      return with_offsets({{"final_norm.weight", {s.d_model}}, {"lm_head.weight", {s.vocab, s.d_model}}});
  }
  throw std::logic_error("llama_layer_slots: unknown layer kind");
}

core::Result<LlamaShape> llama_shape_of(const core::Workload& workload) {
  const core::ModelSpec& m = workload.model();
  Diagnostics problems;
  check_spec(m, workload, problems);
  if (!problems.empty()) return std::unexpected(problems);
  const LlamaShape shape{.vocab = m.vocab,
                         .d_model = m.d_model,
                         .heads = m.heads,
                         .kv_heads = m.kv_heads,
                         .head_dim = m.head_dim,
                         .ffn = m.ffn,
                         .layers = m.layers,
                         .max_positions = m.max_positions,
                         .rope_theta = m.rope_theta};
  for (const core::Layer& layer : workload.layers()) {
    check_layer_slots(layer, llama_layer_slots(layer.kind, shape), problems);
  }
  if (!problems.empty()) return std::unexpected(problems);
  return shape;
}

}  // namespace stowage::executor::model
