// The shape of the Llama-style decoder the executor trains (Touvron et al.
// 2023, arXiv:2302.13971 and 2307.09288: RMSNorm before each branch,
// rotary positions, grouped-query attention, SwiGLU MLP, no biases, untied
// LM head), read off a core::Workload, and where each parameter tensor sits
// in a layer's flat array. The layout is core::Workload's (Hugging Face
// module order, Linear weights [out, in]); llama_shape_of checks it tensor
// by tensor, as model_shape_of does for the GPT.
#pragma once

#include <cstdint>
#include <vector>

#include "core/diagnostic.h"
#include "core/workload.h"
#include "executor/model/model_shape.h"

namespace stowage::executor::model {

struct LlamaShape {
  int64_t vocab = 0;          // 256 for bytes
  int64_t d_model = 0;        // 192 for tiny-llama
  int64_t heads = 0;          // query heads
  int64_t kv_heads = 0;       // key/value heads, divides heads (tiny-llama: 6 and 2)
  int64_t head_dim = 0;       // even: RoPE turns pairs
  int64_t ffn = 0;            // SwiGLU hidden width (intermediate_size)
  int64_t layers = 0;         // transformer blocks
  int64_t max_positions = 0;  // longest sequence the rotary table covers
  double rope_theta = 0;      // RoPE base, e.g. 10000

  [[nodiscard]] int64_t q_width() const { return heads * head_dim; }
  [[nodiscard]] int64_t kv_width() const { return kv_heads * head_dim; }
};

// The tensors of a layer of `kind`, in core::Workload's order, with offsets:
//   embedding: embed_tokens.weight [vocab, d]
//   block:     attn_norm.weight [d], attn.{q,k,v,o}_proj.weight, mlp_norm.weight [d],
//              mlp.{gate,up}_proj.weight [ffn, d], mlp.down_proj.weight [d, ffn]
//   final:     final_norm.weight [d], lm_head.weight [vocab, d]
[[nodiscard]] std::vector<TensorSlot> llama_layer_slots(core::LayerKind kind, const LlamaShape& shape);

// Whether `model` is Llama-shaped at all (RMSNorm, SwiGLU or rotary
// positions): the trainer picks the architecture by this and reports the
// chosen one's reasons when the rest does not fit.
[[nodiscard]] bool is_llama_style(const core::ModelSpec& model);

// The shape of `workload`'s model, or every reason the executor cannot run
// it as a Llama: norm rmsnorm, mlp swiglu, position rope, biases false,
// tied_embeddings false, one expert, no embedding norm, even head_dim,
// kv_heads dividing heads, the sequence within max_positions.
[[nodiscard]] core::Result<LlamaShape> llama_shape_of(const core::Workload& workload);

}  // namespace stowage::executor::model
