#include "executor/model/cpu_layer_kernels.h"

#include <algorithm>

#include "executor/model/causal_attention.h"
#include "executor/model/cross_entropy.h"
#include "executor/model/gelu.h"
#include "executor/model/kernel_scratch.h"
#include "executor/model/layer_norm.h"
#include "executor/model/linear.h"
#include "executor/model/rms_norm.h"
#include "executor/model/swiglu.h"

namespace stowage::executor::model {
void CpuLayerKernels::linear_forward(const float* x, const float* w, const float* b, float* y,
                                     const LinearShape& s) {
  model::linear_forward(h(x), h(w), h(b), h(y), s);
}

void CpuLayerKernels::linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                                      float* db, const LinearShape& s) {
  model::linear_backward(h(x), h(w), h(dy), h(dx), h(dw), h(db), s);
}

void CpuLayerKernels::layer_norm_forward(const float* x, const float* w, const float* b, float* y, float* mean,
                                         float* rstd, int64_t rows, int64_t d) {
  model::layer_norm_forward(h(x), h(w), h(b), h(y), h(mean), h(rstd), rows, d);
}

void CpuLayerKernels::layer_norm_backward(const float* x, const float* w, const float* mean, const float* rstd,
                                          const float* dy, float* dx, float* dw, float* db, int64_t rows,
                                          int64_t d) {
  model::layer_norm_backward(h(x), h(w), h(mean), h(rstd), h(dy), h(dx), h(dw), h(db), rows, d);
}

void CpuLayerKernels::rms_norm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows,
                                       int64_t d) {
  model::rms_norm_forward(h(x), h(w), h(y), h(rstd), rows, d);
}

void CpuLayerKernels::rms_norm_backward(const float* x, const float* w, const float* rstd, const float* dy,
                                        float* dx, float* dw, int64_t rows, int64_t d) {
  model::rms_norm_backward(h(x), h(w), h(rstd), h(dy), h(dx), h(dw), rows, d);
}

void CpuLayerKernels::gelu_forward(const float* x, float* y, int64_t n) {
  model::gelu_forward(h(x), h(y), n);
}

void CpuLayerKernels::gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  model::gelu_backward(h(x), h(dy), h(dx), n);
}

void CpuLayerKernels::swiglu_forward(const float* gate, const float* up, float* hidden, int64_t n) {
  model::swiglu_forward(h(gate), h(up), h(hidden), n);
}

void CpuLayerKernels::swiglu_backward(const float* gate, const float* up, const float* dh, float* d_gate,
                                      float* d_up, int64_t n) {
  model::swiglu_backward(h(gate), h(up), h(dh), h(d_gate), h(d_up), n);
}

void CpuLayerKernels::rotate(const RotaryTable& table, float* x, int64_t batch, int64_t seq, int64_t heads) {
  table.rotate(h(x), batch, seq, heads);
}

void CpuLayerKernels::rotate_back(const RotaryTable& table, float* dx, int64_t batch, int64_t seq, int64_t heads) {
  table.rotate_back(h(dx), batch, seq, heads);
}

void CpuLayerKernels::causal_attention_forward(const float* q, const float* k, const float* v, float* probs,
                                               float* y, const AttentionShape& s) {
  model::causal_attention_forward(h(q), h(k), h(v), h(probs), h(y), s);
}

void CpuLayerKernels::causal_attention_backward(const float* q, const float* k, const float* v, const float* probs,
                                                const float* dy, float* dq, float* dk, float* dv,
                                                const AttentionShape& s) {
  const HostAddresses host(host_address_);  // its score gradients are a temporary of its own
  model::causal_attention_backward(h(q), h(k), h(v), h(probs), h(dy), h(dq), h(dk), h(dv), s);
}

double CpuLayerKernels::softmax_cross_entropy_forward(float* logits, const int32_t* targets, int64_t rows,
                                                      int64_t vocab) {
  return model::softmax_cross_entropy_forward(h(logits), targets, rows, vocab);
}

void CpuLayerKernels::softmax_cross_entropy_backward(const float* probs, const int32_t* targets, float scale,
                                                     float* dlogits, int64_t rows, int64_t vocab) {
  model::softmax_cross_entropy_backward(h(probs), targets, scale, h(dlogits), rows, vocab);
}

void CpuLayerKernels::gather_rows(const float* table, const int32_t* ids, int64_t rows, int64_t d, float* out) {
  const float* t = h(table);
  float* o = h(out);
  for (int64_t i = 0; i < rows; ++i) std::copy(t + ids[i] * d, t + ids[i] * d + d, o + i * d);
}

void CpuLayerKernels::scatter_add_rows(const int32_t* ids, const float* d_out, int64_t rows, int64_t d,
                                       float* d_table) {
  const float* g = h(d_out);
  float* t = h(d_table);
  for (int64_t i = 0; i < rows; ++i) {
    float* row = t + ids[i] * d;
    for (int64_t c = 0; c < d; ++c) row[c] += g[i * d + c];
  }
}

void CpuLayerKernels::add_into(float* y, const float* x, int64_t n) {
  float* a = h(y);
  const float* b = h(x);
  for (int64_t i = 0; i < n; ++i) a[i] += b[i];
}

void CpuLayerKernels::copy(float* dst, const float* src, int64_t n) {
  std::copy(h(src), h(src) + n, h(dst));
}

void CpuLayerKernels::fill(float* dst, float value, int64_t n) {
  std::fill(h(dst), h(dst) + n, value);
}

}  // namespace stowage::executor::model
