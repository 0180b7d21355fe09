// The CPU's layer kernels (layer_kernels.h): OpenBLAS and the project's
// loops, the functions of linear.h, layer_norm.h and the rest, over host
// memory. What every thread runs without a backend's kernels installed,
// and what the CPU backend installs for its compute ops.
#pragma once

#include "executor/model/layer_kernels.h"

namespace stowage::executor::model {

class CpuLayerKernels final : public LayerKernels {
 public:
  // Where a device pointer is in this process: the CPU backend hands out
  // device pointers that fault on the host in its tests (opaque device
  // memory) and maps them back here, so that only the kernels reach the
  // memory. Null: device pointers are host addresses. Never given null.
  using HostAddress = const void* (*)(const void* device);
  explicit CpuLayerKernels(HostAddress host_address = nullptr) : host_address_(host_address) {}

  void linear_forward(const float* x, const float* w, const float* b, float* y, const LinearShape& s) override;
  void linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db,
                       const LinearShape& s) override;
  void layer_norm_forward(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd,
                          int64_t rows, int64_t d) override;
  void layer_norm_backward(const float* x, const float* w, const float* mean, const float* rstd, const float* dy,
                           float* dx, float* dw, float* db, int64_t rows, int64_t d) override;
  void rms_norm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t d) override;
  void rms_norm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx, float* dw,
                         int64_t rows, int64_t d) override;
  void gelu_forward(const float* x, float* y, int64_t n) override;
  void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) override;
  void swiglu_forward(const float* gate, const float* up, float* h, int64_t n) override;
  void swiglu_backward(const float* gate, const float* up, const float* dh, float* d_gate, float* d_up,
                       int64_t n) override;
  void rotate(const RotaryTable& table, float* x, int64_t batch, int64_t seq, int64_t heads) override;
  void rotate_back(const RotaryTable& table, float* dx, int64_t batch, int64_t seq, int64_t heads) override;
  void causal_attention_forward(const float* q, const float* k, const float* v, float* probs, float* y,
                                const AttentionShape& s) override;
  void causal_attention_backward(const float* q, const float* k, const float* v, const float* probs,
                                 const float* dy, float* dq, float* dk, float* dv, const AttentionShape& s) override;
  double softmax_cross_entropy_forward(float* logits, const int32_t* targets, int64_t rows, int64_t vocab) override;
  void softmax_cross_entropy_backward(const float* probs, const int32_t* targets, float scale, float* dlogits,
                                      int64_t rows, int64_t vocab) override;
  void gather_rows(const float* table, const int32_t* ids, int64_t rows, int64_t d, float* out) override;
  void scatter_add_rows(const int32_t* ids, const float* d_out, int64_t rows, int64_t d, float* d_table) override;
  void add_into(float* y, const float* x, int64_t n) override;
  void copy(float* dst, const float* src, int64_t n) override;
  void fill(float* dst, float value, int64_t n) override;

 private:
  // The host address of device pointer p (null stays null).
  template <class T>
  T* h(T* p) const {
    if (p == nullptr || host_address_ == nullptr) return p;
    return static_cast<T*>(const_cast<void*>(host_address_(p)));
  }

  HostAddress host_address_;
};

}  // namespace stowage::executor::model
