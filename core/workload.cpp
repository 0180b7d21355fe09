#include "core/workload.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>

namespace stowage::core {
namespace {

// Builds the parameter list of one layer in Hugging Face module order.
class LayerBuilder {
 public:
  LayerBuilder(const ModelSpec& m, std::string prefix) : m_(m), prefix_(std::move(prefix)) {}

  void matrix(const std::string& module, int64_t rows, int64_t cols, bool bias) {
    add(module, "weight", {rows, cols});
    if (bias) add(module, "bias", {rows});
  }
  void norm(const std::string& module) {
    add(module, "weight", {m_.d_model});
    if (m_.norm == NormKind::kLayerNorm) add(module, "bias", {m_.d_model});
  }
  void table(const std::string& module, int64_t rows) { add(module, "weight", {rows, m_.d_model}); }

  std::vector<ParamTensor> take() { return std::move(params_); }

 private:
  void add(const std::string& module, const char* leaf, std::vector<int64_t> shape) {
    const std::string full = prefix_.empty() ? module : prefix_ + "." + module;
    params_.push_back({full + "." + leaf, full, std::move(shape)});
  }
  const ModelSpec& m_;
  std::string prefix_;
  std::vector<ParamTensor> params_;
};

int64_t matrix_elements(const std::vector<ParamTensor>& params) {
  int64_t n = 0;
  for (const ParamTensor& p : params) {
    if (p.shape.size() == 2) n += p.elements();
  }
  return n;
}

void add_mlp(LayerBuilder& b, const ModelSpec& m, const std::string& prefix) {
  const int64_t d = m.d_model;
  if (m.mlp == MlpKind::kSwiglu) b.matrix(prefix + "gate_proj", m.ffn, d, m.biases);
  b.matrix(prefix + "up_proj", m.ffn, d, m.biases);
  b.matrix(prefix + "down_proj", d, m.ffn, m.biases);
}

Layer embedding_layer(const ModelSpec& m) {
  LayerBuilder b(m, "");
  b.table("embed_tokens", m.vocab);
  if (m.position == PositionKind::kLearned) b.table("embed_positions", m.max_positions + m.position_offset);
  if (m.embedding_norm) b.norm("embed_norm");
  Layer layer{.name = "embedding", .kind = LayerKind::kEmbedding, .params = b.take()};
  layer.active_params = layer.param_count();
  // A table lookup: no FLOPs, and backward needs only the token ids.
  return layer;
}

// Saved 16-bit tensors per token of one block (see the header's citation):
// both norms' inputs and outputs, q/k/v, the attention output and its fp32
// log-sum-exp per head, and the MLP's hidden tensors for each routed expert.
Bytes block_activation_bytes(const ModelSpec& m) {
  const int64_t d = m.d_model;
  const int64_t q_width = m.heads * m.head_dim;
  const int64_t kv_width = m.kv_heads * m.head_dim;
  const int64_t attention = 2 * d + 2 * d + 2 * (q_width + 2 * kv_width) + 2 * q_width + 4 * m.heads;
  const int64_t hidden_tensors = m.mlp == MlpKind::kSwiglu ? 3 : 2;  // gate, up, product | pre, post act
  int64_t mlp = 2 * d + 2 * d + 2 * hidden_tensors * m.ffn * m.experts_per_token;
  if (m.experts > 1) mlp += 4 * m.experts;  // fp32 router logits
  return Bytes(attention + mlp);
}

Layer block_layer(const ModelSpec& m, int64_t index, int64_t sequence_length) {
  const int64_t d = m.d_model;
  const std::string prefix = "layers." + std::to_string(index);
  LayerBuilder b(m, prefix);
  b.norm("attn_norm");
  b.matrix("attn.q_proj", m.heads * m.head_dim, d, m.biases);
  b.matrix("attn.k_proj", m.kv_heads * m.head_dim, d, m.biases);
  b.matrix("attn.v_proj", m.kv_heads * m.head_dim, d, m.biases);
  b.matrix("attn.o_proj", d, m.heads * m.head_dim, m.biases);
  b.norm("mlp_norm");
  int64_t expert_params = 0;
  if (m.experts > 1) {
    b.matrix("mlp.router", m.experts, d, /*bias=*/false);
    for (int64_t e = 0; e < m.experts; ++e) add_mlp(b, m, "mlp.experts." + std::to_string(e) + ".");
  } else {
    add_mlp(b, m, "mlp.");
  }
  Layer layer{.name = prefix, .kind = LayerKind::kBlock, .params = b.take()};
  const int64_t total = layer.param_count();
  int64_t matrices = matrix_elements(layer.params);
  if (m.experts > 1) {
    for (const ParamTensor& p : layer.params) {
      if (p.module.find(".experts.") != std::string::npos) expert_params += p.elements();
    }
    // Only experts_per_token of the experts see each token.
    const int64_t idle = expert_params - expert_params / m.experts * m.experts_per_token;
    layer.active_params = total - idle;
    matrices -= idle;  // expert tensors are all matrices or their biases; biases are tiny
  } else {
    layer.active_params = total;
  }
  // 2 FLOPs per multiply-add over the weights, plus QK^T and AV.
  const double attention = 4.0 * static_cast<double>(sequence_length * m.heads * m.head_dim);
  layer.forward_flops_per_token = Flops(2.0 * static_cast<double>(matrices) + attention);
  layer.activation_bytes_per_token = block_activation_bytes(m);
  layer.checkpoint_bytes_per_token = Bytes(2 * d);  // the block's input
  return layer;
}

Layer final_layer(const ModelSpec& m) {
  LayerBuilder b(m, "");
  b.norm("final_norm");
  if (!m.tied_embeddings) b.table("lm_head", m.vocab);
  Layer layer{.name = "final", .kind = LayerKind::kFinal, .params = b.take()};
  layer.active_params = layer.param_count();
  // The LM head runs whether or not its weight is tied to the embedding.
  layer.forward_flops_per_token = Flops(2.0 * static_cast<double>(m.vocab * m.d_model));
  // Norm input and output, 16-bit logits and the fp32 softmax the loss keeps.
  layer.activation_bytes_per_token = Bytes(4 * m.d_model + 6 * m.vocab);
  layer.checkpoint_bytes_per_token = layer.activation_bytes_per_token;
  return layer;
}

}  // namespace

int64_t ParamTensor::elements() const {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

Bytes Tensor::bytes() const {
  const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  return Bytes(n * bytes_per_element(dtype));
}

int64_t Layer::param_count() const {
  int64_t n = 0;
  for (const ParamTensor& p : params) n += p.elements();
  return n;
}

Workload::Workload(const ModelSpec& model, int64_t sequence_length)
    : model_(model), sequence_length_(sequence_length) {
  layers_.push_back(embedding_layer(model_));
  for (int64_t i = 0; i < model_.layers; ++i) layers_.push_back(block_layer(model_, i, sequence_length_));
  layers_.push_back(final_layer(model_));
}

int64_t Workload::total_params() const {
  int64_t n = 0;
  for (const Layer& l : layers_) n += l.param_count();
  return n;
}

int64_t Workload::active_params() const {
  int64_t n = 0;
  for (const Layer& l : layers_) n += l.active_params;
  return n;
}

int64_t Workload::largest_module_params() const {
  std::map<std::string, int64_t> modules;
  for (const Layer& l : layers_) {
    for (const ParamTensor& p : l.params) {
      // A layer's experts are one module, as Hugging Face transformers holds
      // them (MixtralExperts: every expert's gate_up_proj and down_proj in
      // one module, transformers 5.x), which DeepSpeed's estimator takes as
      // its largest layer: "layers.3.mlp.experts.5.up_proj" belongs to
      // "layers.3.mlp.experts".
      constexpr std::string_view kExperts = ".experts.";
      const size_t at = p.module.find(kExperts);
      modules[at == std::string::npos ? p.module : p.module.substr(0, at + kExperts.size() - 1)] += p.elements();
    }
  }
  int64_t largest = 0;
  for (const auto& [name, n] : modules) largest = std::max(largest, n);
  return largest;
}

int64_t Workload::largest_layer_params() const {
  int64_t largest = 0;
  for (const Layer& l : layers_) largest = std::max(largest, l.param_count());
  return largest;
}

Flops Workload::forward_flops_per_token() const {
  Flops f;
  for (const Layer& l : layers_) f += l.forward_flops_per_token;
  return f;
}

Flops Workload::model_flops_per_token() const {
  return Flops(6.0 * static_cast<double>(active_params()));
}

ComputeFootprint Workload::footprint(size_t layer, int64_t tokens) const {
  if (!footprints_.empty()) {
    if (tokens != footprint_tokens_)
      throw std::logic_error("footprints were declared for micro-batches of " +
                             std::to_string(footprint_tokens_) + " tokens, asked for " +
                             std::to_string(tokens));
    return footprints_.at(layer);
  }
  const Layer& l = layers_.at(layer);
  return {.saved = l.activation_bytes_per_token * tokens,
          .checkpointed = l.checkpoint_bytes_per_token * tokens};
}

void Workload::set_footprints(std::vector<ComputeFootprint> per_layer, int64_t tokens) {
  if (per_layer.size() != layers_.size()) throw std::logic_error("one footprint per layer");
  footprints_ = std::move(per_layer);
  footprint_tokens_ = tokens;
}

Bytes Workload::activation_bytes(int64_t tokens, bool checkpointing) const {
  Bytes held;
  Bytes largest_block;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const ComputeFootprint f = footprint(l, tokens);
    held += checkpointing ? f.checkpointed : f.saved;
    if (layers_[l].kind == LayerKind::kBlock) largest_block = std::max(largest_block, f.saved);
  }
  // With checkpointing, backward recomputes one block at a time in full.
  if (checkpointing) held += largest_block;
  return held;
}

std::vector<Tensor> Workload::tensors_of(const Layer& layer, Precision precision) const {
  constexpr TensorClass kStateClasses[] = {TensorClass::kParam16, TensorClass::kGrad16,
                                           TensorClass::kMaster32, TensorClass::kAdamM,
                                           TensorClass::kAdamV};
  std::vector<Tensor> out;
  for (TensorClass c : kStateClasses) {
    for (const ParamTensor& p : layer.params) {
      out.push_back({p.name, p.shape, dtype_of(c, precision), c});
    }
  }
  const int64_t tokens = sequence_length_;  // per sequence; callers scale by micro-batch
  const Bytes act = layer.activation_bytes_per_token * tokens;
  if (act.count() > 0) {
    const DType half = dtype_of(TensorClass::kActivation, precision);
    out.push_back({layer.name + ".saved_activations", {tokens, act.count() / tokens / bytes_per_element(half)},
                   half, TensorClass::kActivation});
  }
  return out;
}

}  // namespace stowage::core
