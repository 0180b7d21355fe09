// What a layer's forward keeps for its backward. The caller owns these and
// may drop them after forward and rebuild them before backward by running
// forward again on the layer's saved input (activation checkpointing): the
// same input gives the same bits. Forward lays the tensors out in the
// object's storage (saved_storage.h): the caller's region if it provided
// one, else storage of its own, which one object reused across steps
// allocates once.
#pragma once

#include <span>

#include "executor/model/model_shape.h"
#include "executor/model/saved_storage.h"

namespace stowage::executor::model {

// A transformer block (tokens = batch * seq, d = d_model, a = heads *
// head_dim, f = ffn). Its input is not copied here: backward takes it
// from the caller, who keeps it anyway (it is the previous layer's output
// and, with checkpointing, the only thing kept).
struct BlockSaved {
  MicroBatch batch;
  SavedStorage storage;  // what the views below point into
  std::span<float> attn_norm_mean;  // [tokens]
  std::span<float> attn_norm_rstd;  // [tokens]
  std::span<float> attn_norm_out;   // [tokens, d]
  std::span<float> q;               // [tokens, a]
  std::span<float> k;               // [tokens, a]
  std::span<float> v;               // [tokens, a]
  std::span<float> probs;           // [batch, heads, seq, seq] attention probabilities
  std::span<float> attn_out;        // [tokens, a] before o_proj
  std::span<float> mid;             // [tokens, d] residual stream after attention
  std::span<float> mlp_norm_mean;   // [tokens]
  std::span<float> mlp_norm_rstd;   // [tokens]
  std::span<float> mlp_norm_out;    // [tokens, d]
  std::span<float> hidden_pre;      // [tokens, f] before GELU
  std::span<float> hidden;          // [tokens, f] after GELU
};

// The final layer: final norm, tied LM head, loss.
struct FinalSaved {
  MicroBatch batch;
  SavedStorage storage;  // what the views below point into
  std::span<float> norm_mean;  // [tokens]
  std::span<float> norm_rstd;  // [tokens]
  std::span<float> norm_out;   // [tokens, d]
  std::span<float> probs;      // [tokens, vocab] softmax of the logits
};

}  // namespace stowage::executor::model
