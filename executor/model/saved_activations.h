// What a layer's forward keeps for its backward. The caller owns these and
// may drop them after forward and rebuild them before backward by running
// forward again on the layer's saved input (activation checkpointing): the
// same input gives the same bits. Forward resizes the vectors, so one object
// reused across steps allocates once.
#pragma once

#include <vector>

#include "executor/model/model_shape.h"

namespace stowage::executor::model {

// A transformer block (tokens = batch * seq, d = d_model, a = heads *
// head_dim, f = ffn). Its input is not copied here: backward takes it
// from the caller, who keeps it anyway (it is the previous layer's output
// and, with checkpointing, the only thing kept).
struct BlockSaved {
  MicroBatch batch;
  std::vector<float> attn_norm_mean;  // [tokens]
  std::vector<float> attn_norm_rstd;  // [tokens]
  std::vector<float> attn_norm_out;   // [tokens, d]
  std::vector<float> q;               // [tokens, a]
  std::vector<float> k;               // [tokens, a]
  std::vector<float> v;               // [tokens, a]
  std::vector<float> probs;           // [batch, heads, seq, seq] attention probabilities
  std::vector<float> attn_out;        // [tokens, a] before o_proj
  std::vector<float> mid;             // [tokens, d] residual stream after attention
  std::vector<float> mlp_norm_mean;   // [tokens]
  std::vector<float> mlp_norm_rstd;   // [tokens]
  std::vector<float> mlp_norm_out;    // [tokens, d]
  std::vector<float> hidden_pre;      // [tokens, f] before GELU
  std::vector<float> hidden;          // [tokens, f] after GELU
};

// The final layer: final norm, tied LM head, loss.
struct FinalSaved {
  MicroBatch batch;
  std::vector<float> norm_mean;  // [tokens]
  std::vector<float> norm_rstd;  // [tokens]
  std::vector<float> norm_out;   // [tokens, d]
  std::vector<float> probs;      // [tokens, vocab] softmax of the logits
};

}  // namespace stowage::executor::model
