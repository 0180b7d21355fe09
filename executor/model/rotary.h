// Rotary position embeddings (Su et al. 2021, RoFormer, arXiv:2104.09864
// §3.4) in Hugging Face Llama's "rotate half" layout: within each head of
// head_dim values, element i pairs with element i + head_dim/2 and the pair
// turns by pos * theta^(-2i / head_dim) (transformers' rotate_half and
// apply_rotary_pos_emb). Hugging Face's Llama checkpoints are stored for
// this layout, so weights from them work unpermuted.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace stowage::executor::model {

// cos and sin of every (position, frequency), computed once in double.
class RotaryTable {
 public:
  // head_dim even, positions >= 1, theta > 0 (the profile's rope_theta,
  // 10000 in Llama 2, 500000 in Llama 3).
  RotaryTable(int64_t head_dim, int64_t positions, double theta);

  [[nodiscard]] int64_t head_dim() const { return head_dim_; }
  [[nodiscard]] int64_t positions() const { return positions_; }
  // [positions, head_dim / 2]: what a GPU's kernels upload.
  [[nodiscard]] std::span<const float> cos_table() const { return cos_; }
  [[nodiscard]] std::span<const float> sin_table() const { return sin_; }
  // Which tables these are, unique among the tables made in this process
  // (a copy keeps it, as it keeps the values): what a GPU's cache of
  // uploaded tables keys on, since an address outlives its table.
  [[nodiscard]] uint64_t id() const { return id_; }

  // x [batch * seq, heads * head_dim], token-major, token i at position
  // i % seq (seq <= positions): every head rotated in place.
  void rotate(float* x, int64_t batch, int64_t seq, int64_t heads) const;
  // The gradient's way back: the transpose of rotate, i.e. the rotation by
  // the opposite angle, in place on dx of x's shape.
  void rotate_back(float* dx, int64_t batch, int64_t seq, int64_t heads) const;

 private:
  void apply(float* x, int64_t batch, int64_t seq, int64_t heads, float direction) const;

  int64_t head_dim_;
  int64_t positions_;
  uint64_t id_;
  std::vector<float> cos_;  // [positions, head_dim / 2]
  std::vector<float> sin_;  // [positions, head_dim / 2]
};

}  // namespace stowage::executor::model
