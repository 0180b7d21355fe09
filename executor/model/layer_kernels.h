// The primitives the models' layers are made of, as a kernel set that the
// backend running a compute op installs on the computing thread (as it
// installs the op's scratch region, kernel_scratch.h), so that a layer's
// forward and backward are the model's sequence of calls and the backend
// decides where and how each runs: on the CPU, OpenBLAS and the project's
// loops over host memory (cpu_layer_kernels.h); on a GPU, kernels over
// device memory.
//
// Every float pointer is memory of the installing backend's device (the
// layer's workspaces, kept regions and temporaries) and is only handed on:
// the model's own code never dereferences it, which the executor's tests
// check by running with device pointers that fault on the host (the CPU
// backend's opaque_device_memory). Token ids and targets are host arrays
// (the model reads them to check them), as is a RotaryTable.
//
// The contracts (shapes, which outputs are written and which added to) are
// those of the CPU functions of the same names: linear.h, layer_norm.h,
// rms_norm.h, gelu.h, swiglu.h, rotary.h, causal_attention.h,
// cross_entropy.h. Matrix products count their FLOPs on the calling thread
// (matmul.h) whichever backend computes them.
#pragma once

#include <cstdint>

#include "executor/model/causal_attention.h"
#include "executor/model/linear.h"
#include "executor/model/rotary.h"

namespace stowage::executor::model {

class LayerKernels {
 public:
  virtual ~LayerKernels() = default;

  virtual void linear_forward(const float* x, const float* w, const float* b, float* y, const LinearShape& s) = 0;
  virtual void linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db,
                               const LinearShape& s) = 0;

  virtual void layer_norm_forward(const float* x, const float* w, const float* b, float* y, float* mean,
                                  float* rstd, int64_t rows, int64_t d) = 0;
  virtual void layer_norm_backward(const float* x, const float* w, const float* mean, const float* rstd,
                                   const float* dy, float* dx, float* dw, float* db, int64_t rows, int64_t d) = 0;
  virtual void rms_norm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t d) = 0;
  virtual void rms_norm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx,
                                 float* dw, int64_t rows, int64_t d) = 0;

  virtual void gelu_forward(const float* x, float* y, int64_t n) = 0;
  virtual void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) = 0;
  virtual void swiglu_forward(const float* gate, const float* up, float* h, int64_t n) = 0;
  virtual void swiglu_backward(const float* gate, const float* up, const float* dh, float* d_gate, float* d_up,
                               int64_t n) = 0;

  // RotaryTable::rotate and rotate_back, on x in place.
  virtual void rotate(const RotaryTable& table, float* x, int64_t batch, int64_t seq, int64_t heads) = 0;
  virtual void rotate_back(const RotaryTable& table, float* dx, int64_t batch, int64_t seq, int64_t heads) = 0;

  virtual void causal_attention_forward(const float* q, const float* k, const float* v, float* probs, float* y,
                                        const AttentionShape& s) = 0;
  virtual void causal_attention_backward(const float* q, const float* k, const float* v, const float* probs,
                                         const float* dy, float* dq, float* dk, float* dv,
                                         const AttentionShape& s) = 0;

  // targets: host. Returns the summed loss (the host waits for it).
  virtual double softmax_cross_entropy_forward(float* logits, const int32_t* targets, int64_t rows,
                                               int64_t vocab) = 0;
  virtual void softmax_cross_entropy_backward(const float* probs, const int32_t* targets, float scale,
                                              float* dlogits, int64_t rows, int64_t vocab) = 0;

  // An embedding's lookups, ids on the host: out [rows, d] row i = table
  // row ids[i] (written); d_table row ids[i] += d_out row i, for i in order.
  virtual void gather_rows(const float* table, const int32_t* ids, int64_t rows, int64_t d, float* out) = 0;
  virtual void scatter_add_rows(const int32_t* ids, const float* d_out, int64_t rows, int64_t d,
                                float* d_table) = 0;

  // y[i] += x[i]; dst[i] = src[i]; dst[i] = value; for i < n.
  virtual void add_into(float* y, const float* x, int64_t n) = 0;
  virtual void copy(float* dst, const float* src, int64_t n) = 0;
  virtual void fill(float* dst, float value, int64_t n) = 0;
};

// The kernels installed on this thread, or the CPU's over host memory
// (tests and evaluation, which run the model on host vectors).
[[nodiscard]] LayerKernels& layer_kernels();

// Installs `kernels` on this thread until destruction (installations nest).
class InstalledKernels {
 public:
  explicit InstalledKernels(LayerKernels& kernels);
  ~InstalledKernels();
  InstalledKernels(const InstalledKernels&) = delete;
  InstalledKernels& operator=(const InstalledKernels&) = delete;

 private:
  LayerKernels* outer_;
};

}  // namespace stowage::executor::model
