// causal_attention.h. Each (sequence, head) is a strided [seq, head_dim]
// block of the [tokens, width] matrices: sgemm reads it in place with
// leading dimension `width`, so no transposition to [batch, heads, seq,
// head_dim] is needed. Backward, with dS the gradient of the scores:
//   dV = P^T dY,  dP = dY V^T,  dS = P * (dP - rowsum(P * dP)),
//   dQ = dS K / sqrt(dh),  dK = dS^T Q / sqrt(dh).
// With grouped-query attention the first query head of a group writes its
// kv head's dK and dV (beta 0) and the others add to them (beta 1).
#include "executor/model/kernel_scratch.h"
#include "executor/model/causal_attention.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "executor/model/matmul.h"

namespace stowage::executor::model {
namespace {

// Masked softmax of one [seq, seq] score matrix in place: row t over
// columns 0..t, zeros after.
void causal_softmax(float* scores, int64_t seq) {
  for (int64_t t = 0; t < seq; ++t) {
    float* row = scores + t * seq;
    const float max = *std::max_element(row, row + t + 1);
    double sum = 0.0;
    for (int64_t s = 0; s <= t; ++s) {
      row[s] = std::exp(row[s] - max);
      sum += row[s];
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t s = 0; s <= t; ++s) row[s] *= inv;
    std::fill(row + t + 1, row + seq, 0.0f);
  }
}

// dP [seq, seq] -> dS in place, from P.
void softmax_backward(const float* p, float* dp, int64_t seq) {
  for (int64_t t = 0; t < seq; ++t) {
    const float* pr = p + t * seq;
    float* dr = dp + t * seq;
    double dot = 0.0;
    for (int64_t s = 0; s <= t; ++s) dot += static_cast<double>(pr[s]) * dr[s];
    const float dotf = static_cast<float>(dot);
    for (int64_t s = 0; s <= t; ++s) dr[s] = pr[s] * (dr[s] - dotf);
    std::fill(dr + t + 1, dr + seq, 0.0f);
  }
}

}  // namespace

int64_t AttentionShape::group() const {
  if (kv_heads < 1 || heads % kv_heads != 0) {
    throw std::invalid_argument("attention: kv_heads " + std::to_string(kv_heads) + " does not divide heads " +
                                std::to_string(heads));
  }
  return heads / kv_heads;
}

float AttentionShape::scale() const {
  return 1.0f / std::sqrt(static_cast<float>(head_dim));
}

void causal_attention_forward(const float* q, const float* k, const float* v, float* probs, float* y,
                              const AttentionShape& s) {
  const int64_t seq = s.seq;
  const int64_t dh = s.head_dim;
  const int64_t width = s.width();
  const int64_t kv_width = s.kv_width();
  const int64_t group = s.group();
  const float scale = s.scale();
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t at = b * s.seq * s.width() + h * s.head_dim;
      const int64_t kv_at = b * s.seq * s.kv_width() + (h / group) * s.head_dim;
      float* p = probs + (b * s.heads + h) * s.seq * s.seq;
      // S [seq, seq] = scale * Q_bh K_bh^T
      matmul(Transpose::kNo, Transpose::kYes, seq, seq, dh, scale, q + at, width, k + kv_at, kv_width, 0.0f,
             p, seq);
      causal_softmax(p, s.seq);
      // Y_bh [seq, dh] = P V_bh
      matmul(Transpose::kNo, Transpose::kNo, seq, dh, seq, 1.0f, p, seq, v + kv_at, kv_width, 0.0f, y + at,
             width);
    }
  }
}

void causal_attention_backward(const float* q, const float* k, const float* v, const float* probs,
                               const float* dy, float* dq, float* dk, float* dv, const AttentionShape& s) {
  const int64_t seq = s.seq;
  const int64_t dh = s.head_dim;
  const int64_t width = s.width();
  const int64_t kv_width = s.kv_width();
  const int64_t group = s.group();
  const float scale = s.scale();
  Temporary ds(s.seq * s.seq);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t at = b * s.seq * s.width() + h * s.head_dim;
      const int64_t kv_at = b * s.seq * s.kv_width() + (h / group) * s.head_dim;
      const float beta = h % group == 0 ? 0.0f : 1.0f;  // the group's first head writes, the rest add
      const float* p = probs + (b * s.heads + h) * s.seq * s.seq;
      // dV_bh (+)= P^T dY_bh
      matmul(Transpose::kYes, Transpose::kNo, seq, dh, seq, 1.0f, p, seq, dy + at, width, beta, dv + kv_at,
             kv_width);
      // dP = dY_bh V_bh^T, then dS in place
      matmul(Transpose::kNo, Transpose::kYes, seq, seq, dh, 1.0f, dy + at, width, v + kv_at, kv_width, 0.0f,
             ds.data(), seq);
      softmax_backward(p, ds.data(), s.seq);
      // dQ_bh = scale * dS K_bh;  dK_bh (+)= scale * dS^T Q_bh
      matmul(Transpose::kNo, Transpose::kNo, seq, dh, seq, scale, ds.data(), seq, k + kv_at, kv_width, 0.0f,
             dq + at, width);
      matmul(Transpose::kYes, Transpose::kNo, seq, dh, seq, scale, ds.data(), seq, q + at, width, beta,
             dk + kv_at, kv_width);
    }
  }
}

}  // namespace stowage::executor::model
