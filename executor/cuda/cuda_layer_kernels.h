// The GPU's layer kernels (model/layer_kernels.h): the CPU model's
// sequence of products, in the same calls, on cuBLASLt in fp32 or on
// bf16- or fp16-rounded operands with fp32 sums (row_major_gemm.h), and its loops as CUDA kernels
// (layer_primitives.h, model_kernels.h), all enqueued on the compute lane's stream over device memory. What
// the CUDA backend installs for a compute op.
//
// Host arrays the model hands over (token ids, targets, a rotary table) are
// uploaded into device memory of this object's own: a few bytes a token
// (and a rotary table once), outside the plan's arena. The loss is the one
// value the host waits for (softmax_cross_entropy_forward). Compute ops run
// one at a time (the compute lane has one slot), so one object serves them.
#pragma once

#include <cuda_runtime_api.h>

#include <map>
#include <utility>
#include <vector>

#include "executor/cuda/device_memory.h"
#include "executor/cuda/row_major_gemm.h"
#include "executor/model/layer_kernels.h"

namespace stowage::executor::cuda {

class CudaLayerKernels final : public model::LayerKernels {
 public:
  explicit CudaLayerKernels(cudaStream_t stream, ProductPrecision products = ProductPrecision::kFp32)
      : stream_(stream), gemm_(products) {}

  void linear_forward(const float* x, const float* w, const float* b, float* y, const model::LinearShape& s) override;
  void linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db,
                       const model::LinearShape& s) override;
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
  void rotate(const model::RotaryTable& table, float* x, int64_t batch, int64_t seq, int64_t heads) override;
  void rotate_back(const model::RotaryTable& table, float* dx, int64_t batch, int64_t seq, int64_t heads) override;
  void causal_attention_forward(const float* q, const float* k, const float* v, float* probs, float* y,
                                const model::AttentionShape& s) override;
  void causal_attention_backward(const float* q, const float* k, const float* v, const float* probs,
                                 const float* dy, float* dq, float* dk, float* dv,
                                 const model::AttentionShape& s) override;
  double softmax_cross_entropy_forward(float* logits, const int32_t* targets, int64_t rows, int64_t vocab) override;
  void softmax_cross_entropy_backward(const float* probs, const int32_t* targets, float scale, float* dlogits,
                                      int64_t rows, int64_t vocab) override;
  void gather_rows(const float* table, const int32_t* ids, int64_t rows, int64_t d, float* out) override;
  void scatter_add_rows(const int32_t* ids, const float* d_out, int64_t rows, int64_t d, float* d_table) override;
  void add_into(float* y, const float* x, int64_t n) override;
  void copy(float* dst, const float* src, int64_t n) override;
  void fill(float* dst, float value, int64_t n) override;

 private:
  // `n` host ids on the device (valid until the next upload: stream-ordered).
  const int32_t* upload_ids(const int32_t* ids, int64_t n);
  // The table's cos and sin on the device, uploaded once.
  std::pair<const float*, const float*> rotary_on_device(const model::RotaryTable& table);
  void apply_rotary(const model::RotaryTable& table, float* x, int64_t batch, int64_t seq, int64_t heads,
                    float direction);

  cudaStream_t stream_;
  RowMajorGemm gemm_;
  DeviceMemory ids_;
  DeviceMemory row_loss_;
  std::vector<double> row_loss_host_;
  std::map<uint64_t, std::pair<DeviceMemory, DeviceMemory>> rotary_;  // by RotaryTable::id
};

}  // namespace stowage::executor::cuda
