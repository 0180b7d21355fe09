// What a Llama layer's forward keeps for its backward; the same contract as
// saved_activations.h (caller-owned, droppable and rebuilt bit for bit by
// running forward again on the layer's input, resized by forward).
#pragma once

#include <vector>

#include "executor/model/model_shape.h"

namespace stowage::executor::model {

// A Llama block (tokens = batch * seq, d = d_model, a = heads * head_dim,
// g = kv_heads * head_dim, f = ffn). The input is the caller's, as for the GPT.
struct LlamaBlockSaved {
  MicroBatch batch;
  std::vector<float> attn_norm_rstd;  // [tokens]
  std::vector<float> attn_norm_out;   // [tokens, d]
  std::vector<float> q;               // [tokens, a] after RoPE
  std::vector<float> k;               // [tokens, g] after RoPE
  std::vector<float> v;               // [tokens, g]
  std::vector<float> probs;           // [batch, heads, seq, seq] attention probabilities
  std::vector<float> attn_out;        // [tokens, a] before o_proj
  std::vector<float> mid;             // [tokens, d] residual stream after attention
  std::vector<float> mlp_norm_rstd;   // [tokens]
  std::vector<float> mlp_norm_out;    // [tokens, d]
  std::vector<float> gate;            // [tokens, f] gate_proj output
  std::vector<float> up;              // [tokens, f] up_proj output
  std::vector<float> hidden;          // [tokens, f] silu(gate) * up
};

// The final layer: final RMSNorm, the untied LM head, loss.
struct LlamaFinalSaved {
  MicroBatch batch;
  std::vector<float> norm_rstd;  // [tokens]
  std::vector<float> norm_out;   // [tokens, d]
  std::vector<float> probs;      // [tokens, vocab] softmax of the logits
};

}  // namespace stowage::executor::model
