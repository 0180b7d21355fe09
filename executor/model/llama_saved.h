// What a Llama layer's forward keeps for its backward; the same contract as
// saved_activations.h (caller-owned, droppable and rebuilt bit for bit by
// running forward again on the layer's input, resized by forward).
#pragma once

#include <span>

#include "executor/model/model_shape.h"
#include "executor/model/saved_storage.h"

namespace stowage::executor::model {

// A Llama block (tokens = batch * seq, d = d_model, a = heads * head_dim,
// g = kv_heads * head_dim, f = ffn). The input is the caller's, as for the GPT.
struct LlamaBlockSaved {
  MicroBatch batch;
  SavedStorage storage;  // what the views below point into
  std::span<float> attn_norm_rstd;  // [tokens]
  std::span<float> attn_norm_out;   // [tokens, d]
  std::span<float> q;               // [tokens, a] after RoPE
  std::span<float> k;               // [tokens, g] after RoPE
  std::span<float> v;               // [tokens, g]
  std::span<float> probs;           // [batch, heads, seq, seq] attention probabilities
  std::span<float> attn_out;        // [tokens, a] before o_proj
  std::span<float> mid;             // [tokens, d] residual stream after attention
  std::span<float> mlp_norm_rstd;   // [tokens]
  std::span<float> mlp_norm_out;    // [tokens, d]
  std::span<float> gate;            // [tokens, f] gate_proj output
  std::span<float> up;              // [tokens, f] up_proj output
  std::span<float> hidden;          // [tokens, f] silu(gate) * up
};

// The final layer: final RMSNorm, the untied LM head, loss.
struct LlamaFinalSaved {
  MicroBatch batch;
  SavedStorage storage;  // what the views below point into
  std::span<float> norm_rstd;  // [tokens]
  std::span<float> norm_out;   // [tokens, d]
  std::span<float> probs;      // [tokens, vocab] softmax of the logits
};

}  // namespace stowage::executor::model
