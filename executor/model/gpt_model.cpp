// GptModel: size checks, then each layer's forward and backward as a
// sequence of calls to the thread's layer kernels (layer_kernels.h), which
// alone touch the tensors. Initialisation is in parameter_init.cpp.
#include "executor/model/kernel_scratch.h"
#include "executor/model/gpt_model.h"

#include <algorithm>

#include "executor/model/layer_kernels.h"
#include "executor/model/next_token_head.h"

namespace stowage::executor::model {
namespace {

using core::LayerKind;

}  // namespace

core::Result<GptModel> GptModel::create(const core::Workload& workload, const ModelOptions& options) {
  core::Result<ModelShape> shape = model_shape_of(workload);
  if (!shape) return std::unexpected(shape.error());
  if (core::Diagnostics d = apply(options); !d.empty()) return std::unexpected(std::move(d));
  return GptModel(workload, *shape);
}

GptModel::GptModel(const core::Workload& workload, ModelShape shape)
    : DecoderLayers(workload, shape.vocab, shape.max_positions), shape_(shape) {
  const std::vector<TensorSlot> b = layer_slots(LayerKind::kBlock, shape_);
  block_ = {offset_of(b, "attn_norm.weight"),     offset_of(b, "attn_norm.bias"),
            offset_of(b, "attn.q_proj.weight"),   offset_of(b, "attn.q_proj.bias"),
            offset_of(b, "attn.k_proj.weight"),   offset_of(b, "attn.k_proj.bias"),
            offset_of(b, "attn.v_proj.weight"),   offset_of(b, "attn.v_proj.bias"),
            offset_of(b, "attn.o_proj.weight"),   offset_of(b, "attn.o_proj.bias"),
            offset_of(b, "mlp_norm.weight"),      offset_of(b, "mlp_norm.bias"),
            offset_of(b, "mlp.up_proj.weight"),   offset_of(b, "mlp.up_proj.bias"),
            offset_of(b, "mlp.down_proj.weight"), offset_of(b, "mlp.down_proj.bias")};
}

std::span<const float> GptModel::token_embedding(std::span<const float> embedding_params) const {
  require_size(embedding_params.size(), param_count(LayerKind::kEmbedding),
               "token_embedding: embedding layer");
  return embedding_params.first(static_cast<size_t>(shape_.vocab * shape_.d_model));
}

std::span<float> GptModel::token_embedding(std::span<float> embedding_params) const {
  require_size(embedding_params.size(), param_count(LayerKind::kEmbedding),
               "token_embedding: embedding layer");
  return embedding_params.first(static_cast<size_t>(shape_.vocab * shape_.d_model));
}

// ---- embedding ----

void GptModel::embedding_forward(std::span<const float> params, std::span<const int32_t> tokens, MicroBatch mb,
                                 std::span<float> out) const {
  check_batch(mb);
  check_tokens(tokens, mb);
  require_size(params.size(), param_count(LayerKind::kEmbedding), "embedding_forward: params");
  require_size(out.size(), mb.tokens() * shape_.d_model, "embedding_forward: out");
  const int64_t d = shape_.d_model;
  LayerKernels& k = layer_kernels();
  k.gather_rows(params.data(), tokens.data(), mb.tokens(), d, out.data());
  // + the position rows: token i of a sequence is at position_offset + i.
  const float* positions = params.data() + (shape_.vocab + shape_.position_offset) * d;
  for (int64_t b = 0; b < mb.batch; ++b) k.add_into(out.data() + b * mb.seq * d, positions, mb.seq * d);
}

void GptModel::embedding_backward(std::span<const int32_t> tokens, MicroBatch mb, std::span<const float> d_out,
                                  std::span<float> d_params) const {
  check_batch(mb);
  check_tokens(tokens, mb);
  require_size(d_out.size(), mb.tokens() * shape_.d_model, "embedding_backward: d_out");
  require_size(d_params.size(), param_count(LayerKind::kEmbedding), "embedding_backward: d_params");
  const int64_t d = shape_.d_model;
  LayerKernels& k = layer_kernels();
  k.scatter_add_rows(tokens.data(), d_out.data(), mb.tokens(), d, d_params.data());
  // Each position row gathers its tokens' gradients in token order, as before.
  float* d_positions = d_params.data() + (shape_.vocab + shape_.position_offset) * d;
  for (int64_t b = 0; b < mb.batch; ++b) k.add_into(d_positions, d_out.data() + b * mb.seq * d, mb.seq * d);
}

// ---- block ----

void GptModel::size_saved(BlockSaved& s, MicroBatch mb) const {
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  const int64_t a = shape_.attention_width();
  const int64_t f = shape_.ffn;
  s.batch = mb;
  s.storage.lay_out({{&s.attn_norm_mean, n},
                     {&s.attn_norm_rstd, n},
                     {&s.attn_norm_out, n * d},
                     {&s.q, n * a},
                     {&s.k, n * a},
                     {&s.v, n * a},
                     {&s.probs, mb.batch * shape_.heads * mb.seq * mb.seq},
                     {&s.attn_out, n * a},
                     {&s.mid, n * d},
                     {&s.mlp_norm_mean, n},
                     {&s.mlp_norm_rstd, n},
                     {&s.mlp_norm_out, n * d},
                     {&s.hidden_pre, n * f},
                     {&s.hidden, n * f}});
}

void GptModel::size_saved(FinalSaved& s, MicroBatch mb) const {
  const int64_t n = mb.tokens();
  s.batch = mb;
  s.storage.lay_out({{&s.norm_mean, n}, {&s.norm_rstd, n}, {&s.norm_out, n * shape_.d_model}, {&s.probs, n * shape_.vocab}});
}

void GptModel::block_forward(std::span<const float> params, std::span<const float> in, MicroBatch mb,
                             BlockSaved& s, std::span<float> out) const {
  check_batch(mb);
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  const int64_t a = shape_.attention_width();
  const int64_t f = shape_.ffn;
  require_size(params.size(), param_count(LayerKind::kBlock), "block_forward: params");
  require_size(in.size(), n * d, "block_forward: in");
  require_size(out.size(), n * d, "block_forward: out");
  size_saved(s, mb);

  const float* p = params.data();
  const BlockOffsets& o = block_;
  LayerKernels& k = layer_kernels();
  k.layer_norm_forward(in.data(), p + o.attn_norm_weight, p + o.attn_norm_bias, s.attn_norm_out.data(),
                     s.attn_norm_mean.data(), s.attn_norm_rstd.data(), n, d);
  const LinearShape qkv{.rows = n, .in = d, .out = a};
  k.linear_forward(s.attn_norm_out.data(), p + o.q_weight, p + o.q_bias, s.q.data(), qkv);
  k.linear_forward(s.attn_norm_out.data(), p + o.k_weight, p + o.k_bias, s.k.data(), qkv);
  k.linear_forward(s.attn_norm_out.data(), p + o.v_weight, p + o.v_bias, s.v.data(), qkv);
  const AttentionShape as{.batch = mb.batch,
                          .seq = mb.seq,
                          .heads = shape_.heads,
                          .head_dim = shape_.head_dim,
                          .kv_heads = shape_.heads};
  k.causal_attention_forward(s.q.data(), s.k.data(), s.v.data(), s.probs.data(), s.attn_out.data(), as);
  k.linear_forward(s.attn_out.data(), p + o.o_weight, p + o.o_bias, s.mid.data(), {.rows = n, .in = a, .out = d});
  k.add_into(s.mid.data(), in.data(), n * d);

  k.layer_norm_forward(s.mid.data(), p + o.mlp_norm_weight, p + o.mlp_norm_bias, s.mlp_norm_out.data(),
                     s.mlp_norm_mean.data(), s.mlp_norm_rstd.data(), n, d);
  k.linear_forward(s.mlp_norm_out.data(), p + o.up_weight, p + o.up_bias, s.hidden_pre.data(),
                 {.rows = n, .in = d, .out = f});
  k.gelu_forward(s.hidden_pre.data(), s.hidden.data(), n * f);
  k.linear_forward(s.hidden.data(), p + o.down_weight, p + o.down_bias, out.data(), {.rows = n, .in = f, .out = d});
  k.add_into(out.data(), s.mid.data(), n * d);
}

// d_mid += the MLP branch's gradient with respect to mid, from d_out.
void GptModel::mlp_backward(const float* p, const BlockSaved& s, const float* d_out, float* d_mid,
                            float* dp) const {
  const int64_t n = s.batch.tokens();
  const int64_t d = shape_.d_model;
  const int64_t f = shape_.ffn;
  const BlockOffsets& o = block_;
  LayerKernels& k = layer_kernels();
  Temporary d_hidden(n * f);
  k.linear_backward(s.hidden.data(), p + o.down_weight, d_out, d_hidden.data(), dp + o.down_weight, dp + o.down_bias,
                  {.rows = n, .in = f, .out = d});
  Temporary d_pre(static_cast<int64_t>(d_hidden.size()));
  k.gelu_backward(s.hidden_pre.data(), d_hidden.data(), d_pre.data(), n * f);
  Temporary d_norm(n * d);
  k.linear_backward(s.mlp_norm_out.data(), p + o.up_weight, d_pre.data(), d_norm.data(), dp + o.up_weight,
                  dp + o.up_bias, {.rows = n, .in = d, .out = f});
  k.layer_norm_backward(s.mid.data(), p + o.mlp_norm_weight, s.mlp_norm_mean.data(), s.mlp_norm_rstd.data(),
                      d_norm.data(), d_mid, dp + o.mlp_norm_weight, dp + o.mlp_norm_bias, n, d);
}

// d_norm += the attention branch's gradient with respect to its normed
// input, from d_mid.
void GptModel::attention_backward(const float* p, const BlockSaved& s, const float* d_mid, float* d_norm,
                                  float* dp) const {
  const int64_t n = s.batch.tokens();
  const int64_t d = shape_.d_model;
  const int64_t a = shape_.attention_width();
  const BlockOffsets& o = block_;
  LayerKernels& k = layer_kernels();
  Temporary d_attn(n * a);
  k.linear_backward(s.attn_out.data(), p + o.o_weight, d_mid, d_attn.data(), dp + o.o_weight, dp + o.o_bias,
                  {.rows = n, .in = a, .out = d});
  Temporary dq(static_cast<int64_t>(d_attn.size()));
  Temporary dk(static_cast<int64_t>(d_attn.size()));
  Temporary dv(static_cast<int64_t>(d_attn.size()));
  const AttentionShape as{.batch = s.batch.batch,
                          .seq = s.batch.seq,
                          .heads = shape_.heads,
                          .head_dim = shape_.head_dim,
                          .kv_heads = shape_.heads};
  k.causal_attention_backward(s.q.data(), s.k.data(), s.v.data(), s.probs.data(), d_attn.data(), dq.data(), dk.data(),
                            dv.data(), as);
  const LinearShape qkv{.rows = n, .in = d, .out = a};
  const float* x = s.attn_norm_out.data();
  k.linear_backward(x, p + o.q_weight, dq.data(), d_norm, dp + o.q_weight, dp + o.q_bias, qkv);
  k.linear_backward(x, p + o.k_weight, dk.data(), d_norm, dp + o.k_weight, dp + o.k_bias, qkv);
  k.linear_backward(x, p + o.v_weight, dv.data(), d_norm, dp + o.v_weight, dp + o.v_bias, qkv);
}

void GptModel::block_backward(std::span<const float> params, std::span<const float> in, const BlockSaved& s,
                              std::span<const float> d_out, std::span<float> d_in,
                              std::span<float> d_params) const {
  const int64_t n = s.batch.tokens();
  const int64_t d = shape_.d_model;
  require_size(params.size(), param_count(LayerKind::kBlock), "block_backward: params");
  require_size(d_params.size(), param_count(LayerKind::kBlock), "block_backward: d_params");
  require_size(in.size(), n * d, "block_backward: in");
  require_size(d_out.size(), n * d, "block_backward: d_out");
  require_size(d_in.size(), n * d, "block_backward: d_in");
  require_size(s.hidden.size(), n * shape_.ffn, "block_backward: saved state");
  const float* p = params.data();
  float* dp = d_params.data();
  // The residual passes d_out through to mid; d_out is read only until
  // d_in is written, which lets the two share memory.
  Temporary d_mid(d_out);
  mlp_backward(p, s, d_out.data(), d_mid.data(), dp);
  Temporary d_norm(n * d);
  attention_backward(p, s, d_mid.data(), d_norm.data(), dp);
  LayerKernels& k = layer_kernels();
  k.copy(d_in.data(), d_mid.data(), n * d);
  k.layer_norm_backward(in.data(), p + block_.attn_norm_weight, s.attn_norm_mean.data(), s.attn_norm_rstd.data(),
                      d_norm.data(), d_in.data(), dp + block_.attn_norm_weight, dp + block_.attn_norm_bias, n, d);
}

int64_t GptModel::backward_scratch_floats(LayerKind kind, MicroBatch mb) const {
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  switch (kind) {
    case LayerKind::kEmbedding: return 0;
    case LayerKind::kBlock: {
      // d_mid throughout; then the MLP's d_hidden, d_pre, d_norm, or
      // d_norm and the attention's d_attn, dq, dk, dv and one score matrix.
      const int64_t a = shape_.attention_width();
      return n * d + std::max(2 * n * shape_.ffn + n * d, n * d + 4 * n * a + mb.seq * mb.seq);
    }
    case LayerKind::kFinal: return n * shape_.vocab + n * d;  // d_logits, d_norm
  }
  return 0;
}

// ---- final: norm, tied head, loss ----

float GptModel::final_forward(std::span<const float> params, std::span<const float> token_embedding,
                              std::span<const float> in, std::span<const int32_t> targets, MicroBatch mb,
                              FinalSaved& s) const {
  check_batch(mb);
  check_tokens(targets, mb);
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  const int64_t v = shape_.vocab;
  require_size(params.size(), param_count(LayerKind::kFinal), "final_forward: params");
  require_size(token_embedding.size(), v * d, "final_forward: token_embedding");
  require_size(in.size(), n * d, "final_forward: in");
  size_saved(s, mb);
  layer_kernels().layer_norm_forward(in.data(), params.data(), params.data() + d, s.norm_out.data(),
                                     s.norm_mean.data(), s.norm_rstd.data(), n, d);
  return next_token_head_forward(s.norm_out.data(), token_embedding.data(), targets.data(), s.probs.data(),
                                 {.tokens = n, .d_model = d, .vocab = v});
}

void GptModel::final_backward(std::span<const float> params, std::span<const float> token_embedding,
                              std::span<const float> in, std::span<const int32_t> targets, const FinalSaved& s,
                              float loss_scale, std::span<float> d_in, std::span<float> d_params,
                              std::span<float> d_token_embedding) const {
  const MicroBatch mb = s.batch;
  check_tokens(targets, mb);
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  const int64_t v = shape_.vocab;
  require_size(params.size(), param_count(LayerKind::kFinal), "final_backward: params");
  require_size(d_params.size(), param_count(LayerKind::kFinal), "final_backward: d_params");
  require_size(token_embedding.size(), v * d, "final_backward: token_embedding");
  require_size(d_token_embedding.size(), v * d, "final_backward: d_token_embedding");
  require_size(in.size(), n * d, "final_backward: in");
  require_size(d_in.size(), n * d, "final_backward: d_in");
  require_size(s.probs.size(), n * v, "final_backward: saved state");
  Temporary d_norm(n * d);
  next_token_head_backward(s.norm_out.data(), token_embedding.data(), targets.data(), s.probs.data(),
                           loss_scale, d_norm.data(), d_token_embedding.data(),
                           {.tokens = n, .d_model = d, .vocab = v});
  LayerKernels& k = layer_kernels();
  k.fill(d_in.data(), 0.0f, n * d);
  k.layer_norm_backward(in.data(), params.data(), s.norm_mean.data(), s.norm_rstd.data(), d_norm.data(), d_in.data(),
                      d_params.data(), d_params.data() + d, n, d);
}

}  // namespace stowage::executor::model
