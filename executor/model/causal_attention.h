// Causal multi-head scaled dot-product attention (Vaswani et al. 2017,
// arXiv:1706.03762 §3.2.1; GPT-2's masked self-attention): per sequence and
// head, P = softmax(Q K^T / sqrt(head_dim)) with position t seeing
// positions <= t, and Y = P V. The probabilities are kept for backward
// (no flash-style recomputation: the CPU model favours plainness).
// Grouped-query attention (Ainslie et al. 2023, arXiv:2305.13245): with
// kv_heads < heads, each group of heads / kv_heads consecutive query heads
// shares one key/value head (query head h reads kv head h / (heads /
// kv_heads), as Hugging Face's repeat_kv); kv_heads = heads is plain
// multi-head attention.
#pragma once

#include <cstdint>

namespace stowage::executor::model {

struct AttentionShape {
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t head_dim = 0;
  int64_t kv_heads = 0;  // divides heads
  [[nodiscard]] int64_t width() const { return heads * head_dim; }
  [[nodiscard]] int64_t kv_width() const { return kv_heads * head_dim; }
  // Query heads per kv head; throws std::invalid_argument when kv_heads
  // does not divide heads (a caller bug: model_shape_of checks the profile).
  [[nodiscard]] int64_t group() const;
  // The scores' factor, 1 / sqrt(head_dim).
  [[nodiscard]] float scale() const;
};

// q, y [batch * seq, heads * head_dim] (head h is columns h*head_dim ...,
// the layout q_proj produces); k, v [batch * seq, kv_heads * head_dim];
// probs [batch, heads, seq, seq] written, zero above the diagonal.
void causal_attention_forward(const float* q, const float* k, const float* v, float* probs, float* y,
                              const AttentionShape& s);

// From dy (y's shape): dq (q's shape), dk and dv (k's shape) WRITTEN; a
// shared kv head's gradient is the sum over its group of query heads.
void causal_attention_backward(const float* q, const float* k, const float* v, const float* probs,
                               const float* dy, float* dq, float* dk, float* dv, const AttentionShape& s);

}  // namespace stowage::executor::model
