// LlamaModel: size checks, then each layer's forward and backward as a
// sequence of calls to the thread's layer kernels (layer_kernels.h; the
// attention grouped-query), which alone touch the tensors.
#include "executor/model/kernel_scratch.h"
#include "executor/model/llama_model.h"

#include <algorithm>
#include <vector>

#include "executor/model/layer_kernels.h"
#include "executor/model/next_token_head.h"
#include "executor/model/rms_norm.h"
#include "executor/model/rng.h"

namespace stowage::executor::model {
namespace {

using core::LayerKind;

// HF LlamaConfig.initializer_range.
constexpr double kInitStd = 0.02;

}  // namespace

core::Result<LlamaModel> LlamaModel::create(const core::Workload& workload, const ModelOptions& options) {
  core::Result<LlamaShape> shape = llama_shape_of(workload);
  if (!shape) return std::unexpected(shape.error());
  if (core::Diagnostics d = apply(options); !d.empty()) return std::unexpected(std::move(d));
  return LlamaModel(workload, *shape);
}

LlamaModel::LlamaModel(const core::Workload& workload, LlamaShape shape)
    : DecoderLayers(workload, shape.vocab, shape.max_positions),
      shape_(shape),
      rotary_(shape.head_dim, shape.max_positions, shape.rope_theta) {
  const std::vector<TensorSlot> b = llama_layer_slots(LayerKind::kBlock, shape_);
  block_ = {.attn_norm = offset_of(b, "attn_norm.weight"),
            .q = offset_of(b, "attn.q_proj.weight"),
            .k = offset_of(b, "attn.k_proj.weight"),
            .v = offset_of(b, "attn.v_proj.weight"),
            .o = offset_of(b, "attn.o_proj.weight"),
            .mlp_norm = offset_of(b, "mlp_norm.weight"),
            .gate = offset_of(b, "mlp.gate_proj.weight"),
            .up = offset_of(b, "mlp.up_proj.weight"),
            .down = offset_of(b, "mlp.down_proj.weight")};
  head_offset_ = offset_of(llama_layer_slots(LayerKind::kFinal, shape_), "lm_head.weight");
}

void LlamaModel::init_parameters(int layer, std::span<float> params, uint64_t seed) const {
  const LayerKind kind = layer_kind(layer);
  require_size(params.size(), param_count(kind), "init_parameters: params");
  SplitMix64 rng(derive_seed(seed, static_cast<uint64_t>(layer)));
  for (const TensorSlot& slot : llama_layer_slots(kind, shape_)) {
    std::span<float> t =
        params.subspan(static_cast<size_t>(slot.offset), static_cast<size_t>(slot.elements()));
    if (slot.leaf.ends_with("norm.weight")) {
      std::fill(t.begin(), t.end(), 1.0f);
    } else {
      for (float& x : t) x = static_cast<float>(kInitStd * rng.normal());
    }
  }
}

AttentionShape LlamaModel::attention_shape(MicroBatch mb) const {
  return {.batch = mb.batch,
          .seq = mb.seq,
          .heads = shape_.heads,
          .head_dim = shape_.head_dim,
          .kv_heads = shape_.kv_heads};
}

// ---- embedding ----

void LlamaModel::embedding_forward(std::span<const float> params, std::span<const int32_t> tokens,
                                   MicroBatch mb, std::span<float> out) const {
  check_batch(mb);
  check_tokens(tokens, mb);
  require_size(params.size(), param_count(LayerKind::kEmbedding), "embedding_forward: params");
  require_size(out.size(), mb.tokens() * shape_.d_model, "embedding_forward: out");
  layer_kernels().gather_rows(params.data(), tokens.data(), mb.tokens(), shape_.d_model, out.data());
}

void LlamaModel::embedding_backward(std::span<const int32_t> tokens, MicroBatch mb,
                                    std::span<const float> d_out, std::span<float> d_params) const {
  check_batch(mb);
  check_tokens(tokens, mb);
  require_size(d_out.size(), mb.tokens() * shape_.d_model, "embedding_backward: d_out");
  require_size(d_params.size(), param_count(LayerKind::kEmbedding), "embedding_backward: d_params");
  layer_kernels().scatter_add_rows(tokens.data(), d_out.data(), mb.tokens(), shape_.d_model, d_params.data());
}

// ---- block ----

// The attention branch up to mid = in + o_proj(attention): fills saved's
// attention part and mid.
void LlamaModel::attention_forward(const float* p, const float* in, MicroBatch mb, LlamaBlockSaved& s) const {
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  const BlockOffsets& o = block_;
  LayerKernels& k = layer_kernels();
  k.rms_norm_forward(in, p + o.attn_norm, s.attn_norm_out.data(), s.attn_norm_rstd.data(), n, d);
  const float* x = s.attn_norm_out.data();
  k.linear_forward(x, p + o.q, nullptr, s.q.data(), {.rows = n, .in = d, .out = shape_.q_width()});
  k.linear_forward(x, p + o.k, nullptr, s.k.data(), {.rows = n, .in = d, .out = shape_.kv_width()});
  k.linear_forward(x, p + o.v, nullptr, s.v.data(), {.rows = n, .in = d, .out = shape_.kv_width()});
  k.rotate(rotary_, s.q.data(), mb.batch, mb.seq, shape_.heads);
  k.rotate(rotary_, s.k.data(), mb.batch, mb.seq, shape_.kv_heads);
  k.causal_attention_forward(s.q.data(), s.k.data(), s.v.data(), s.probs.data(), s.attn_out.data(),
                           attention_shape(mb));
  k.linear_forward(s.attn_out.data(), p + o.o, nullptr, s.mid.data(),
                 {.rows = n, .in = shape_.q_width(), .out = d});
  k.add_into(s.mid.data(), in, n * d);
}

void LlamaModel::size_saved(LlamaBlockSaved& s, MicroBatch mb) const {
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  const int64_t f = shape_.ffn;
  s.batch = mb;
  s.storage.lay_out({{&s.attn_norm_rstd, n},
                     {&s.attn_norm_out, n * d},
                     {&s.q, n * shape_.q_width()},
                     {&s.k, n * shape_.kv_width()},
                     {&s.v, n * shape_.kv_width()},
                     {&s.probs, mb.batch * shape_.heads * mb.seq * mb.seq},
                     {&s.attn_out, n * shape_.q_width()},
                     {&s.mid, n * d},
                     {&s.mlp_norm_rstd, n},
                     {&s.mlp_norm_out, n * d},
                     {&s.gate, n * f},
                     {&s.up, n * f},
                     {&s.hidden, n * f}});
}

void LlamaModel::size_saved(LlamaFinalSaved& s, MicroBatch mb) const {
  const int64_t n = mb.tokens();
  s.batch = mb;
  s.storage.lay_out({{&s.norm_rstd, n}, {&s.norm_out, n * shape_.d_model}, {&s.probs, n * shape_.vocab}});
}

void LlamaModel::block_forward(std::span<const float> params, std::span<const float> in, MicroBatch mb,
                               LlamaBlockSaved& s, std::span<float> out) const {
  check_batch(mb);
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  const int64_t f = shape_.ffn;
  require_size(params.size(), param_count(LayerKind::kBlock), "block_forward: params");
  require_size(in.size(), n * d, "block_forward: in");
  require_size(out.size(), n * d, "block_forward: out");
  size_saved(s, mb);

  const float* p = params.data();
  const BlockOffsets& o = block_;
  attention_forward(p, in.data(), mb, s);
  LayerKernels& k = layer_kernels();
  k.rms_norm_forward(s.mid.data(), p + o.mlp_norm, s.mlp_norm_out.data(), s.mlp_norm_rstd.data(), n, d);
  const LinearShape up{.rows = n, .in = d, .out = f};
  k.linear_forward(s.mlp_norm_out.data(), p + o.gate, nullptr, s.gate.data(), up);
  k.linear_forward(s.mlp_norm_out.data(), p + o.up, nullptr, s.up.data(), up);
  k.swiglu_forward(s.gate.data(), s.up.data(), s.hidden.data(), n * f);
  k.linear_forward(s.hidden.data(), p + o.down, nullptr, out.data(), {.rows = n, .in = f, .out = d});
  k.add_into(out.data(), s.mid.data(), n * d);
}

// d_mid += the MLP branch's gradient with respect to mid, from d_out.
void LlamaModel::mlp_backward(const float* p, const LlamaBlockSaved& s, const float* d_out, float* d_mid,
                              float* dp) const {
  const int64_t n = s.batch.tokens();
  const int64_t d = shape_.d_model;
  const int64_t f = shape_.ffn;
  const BlockOffsets& o = block_;
  LayerKernels& k = layer_kernels();
  Temporary d_hidden(n * f);
  k.linear_backward(s.hidden.data(), p + o.down, d_out, d_hidden.data(), dp + o.down, nullptr,
                  {.rows = n, .in = f, .out = d});
  Temporary d_gate(static_cast<int64_t>(d_hidden.size()));
  Temporary d_up(static_cast<int64_t>(d_hidden.size()));
  k.swiglu_backward(s.gate.data(), s.up.data(), d_hidden.data(), d_gate.data(), d_up.data(), n * f);
  Temporary d_norm(n * d);
  const LinearShape up{.rows = n, .in = d, .out = f};
  k.linear_backward(s.mlp_norm_out.data(), p + o.gate, d_gate.data(), d_norm.data(), dp + o.gate, nullptr, up);
  k.linear_backward(s.mlp_norm_out.data(), p + o.up, d_up.data(), d_norm.data(), dp + o.up, nullptr, up);
  k.rms_norm_backward(s.mid.data(), p + o.mlp_norm, s.mlp_norm_rstd.data(), d_norm.data(), d_mid,
                    dp + o.mlp_norm, n, d);
}

// d_norm += the attention branch's gradient with respect to its normed
// input, from d_mid. RoPE is linear, so the gradients of the rotated q and
// k turn back by the same angles before the projections' backward.
void LlamaModel::attention_backward(const float* p, const LlamaBlockSaved& s, const float* d_mid,
                                    float* d_norm, float* dp) const {
  const int64_t n = s.batch.tokens();
  const int64_t d = shape_.d_model;
  const BlockOffsets& o = block_;
  LayerKernels& k = layer_kernels();
  Temporary d_attn(n * shape_.q_width());
  k.linear_backward(s.attn_out.data(), p + o.o, d_mid, d_attn.data(), dp + o.o, nullptr,
                  {.rows = n, .in = shape_.q_width(), .out = d});
  Temporary dq(static_cast<int64_t>(d_attn.size()));
  Temporary dk(n * shape_.kv_width());
  Temporary dv(static_cast<int64_t>(dk.size()));
  k.causal_attention_backward(s.q.data(), s.k.data(), s.v.data(), s.probs.data(), d_attn.data(), dq.data(),
                            dk.data(), dv.data(), attention_shape(s.batch));
  k.rotate_back(rotary_, dq.data(), s.batch.batch, s.batch.seq, shape_.heads);
  k.rotate_back(rotary_, dk.data(), s.batch.batch, s.batch.seq, shape_.kv_heads);
  const float* x = s.attn_norm_out.data();
  k.linear_backward(x, p + o.q, dq.data(), d_norm, dp + o.q, nullptr,
                  {.rows = n, .in = d, .out = shape_.q_width()});
  const LinearShape kv{.rows = n, .in = d, .out = shape_.kv_width()};
  k.linear_backward(x, p + o.k, dk.data(), d_norm, dp + o.k, nullptr, kv);
  k.linear_backward(x, p + o.v, dv.data(), d_norm, dp + o.v, nullptr, kv);
}

void LlamaModel::block_backward(std::span<const float> params, std::span<const float> in,
                                const LlamaBlockSaved& s, std::span<const float> d_out, std::span<float> d_in,
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
  k.rms_norm_backward(in.data(), p + block_.attn_norm, s.attn_norm_rstd.data(), d_norm.data(), d_in.data(),
                    dp + block_.attn_norm, n, d);
}

int64_t LlamaModel::backward_scratch_floats(LayerKind kind, MicroBatch mb) const {
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  switch (kind) {
    case LayerKind::kEmbedding: return 0;
    case LayerKind::kBlock: {
      // d_mid throughout; then the MLP's d_hidden, d_gate, d_up, d_norm, or
      // d_norm and the attention's d_attn, dq, dk, dv and one score matrix.
      const int64_t attention = 2 * n * shape_.q_width() + 2 * n * shape_.kv_width() + mb.seq * mb.seq;
      return n * d + std::max(3 * n * shape_.ffn + n * d, n * d + attention);
    }
    case LayerKind::kFinal: return n * shape_.vocab + n * d;  // d_logits, d_norm
  }
  return 0;
}

// ---- final: norm, untied head, loss ----

float LlamaModel::final_forward(std::span<const float> params, std::span<const float> in,
                                std::span<const int32_t> targets, MicroBatch mb, LlamaFinalSaved& s) const {
  check_batch(mb);
  check_tokens(targets, mb);
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  const int64_t v = shape_.vocab;
  require_size(params.size(), param_count(LayerKind::kFinal), "final_forward: params");
  require_size(in.size(), n * d, "final_forward: in");
  size_saved(s, mb);
  layer_kernels().rms_norm_forward(in.data(), params.data(), s.norm_out.data(), s.norm_rstd.data(), n, d);
  return next_token_head_forward(s.norm_out.data(), params.data() + head_offset_, targets.data(),
                                 s.probs.data(), {.tokens = n, .d_model = d, .vocab = v});
}

void LlamaModel::final_backward(std::span<const float> params, std::span<const float> in,
                                std::span<const int32_t> targets, const LlamaFinalSaved& s, float loss_scale,
                                std::span<float> d_in, std::span<float> d_params) const {
  const MicroBatch mb = s.batch;
  check_tokens(targets, mb);
  const int64_t n = mb.tokens();
  const int64_t d = shape_.d_model;
  const int64_t v = shape_.vocab;
  require_size(params.size(), param_count(LayerKind::kFinal), "final_backward: params");
  require_size(d_params.size(), param_count(LayerKind::kFinal), "final_backward: d_params");
  require_size(in.size(), n * d, "final_backward: in");
  require_size(d_in.size(), n * d, "final_backward: d_in");
  require_size(s.probs.size(), n * v, "final_backward: saved state");
  Temporary d_norm(n * d);
  next_token_head_backward(s.norm_out.data(), params.data() + head_offset_, targets.data(), s.probs.data(),
                           loss_scale, d_norm.data(), d_params.data() + head_offset_,
                           {.tokens = n, .d_model = d, .vocab = v});
  LayerKernels& k = layer_kernels();
  k.fill(d_in.data(), 0.0f, n * d);
  k.rms_norm_backward(in.data(), params.data(), s.norm_rstd.data(), d_norm.data(), d_in.data(), d_params.data(),
                    n, d);
}

}  // namespace stowage::executor::model
