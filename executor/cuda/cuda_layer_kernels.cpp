#include "executor/cuda/cuda_layer_kernels.h"

#include <stdexcept>

#include "executor/cuda/cuda_error.h"
#include "executor/cuda/layer_primitives.h"
#include "executor/cuda/model_kernels.h"
#include "executor/model/kernel_scratch.h"

namespace stowage::executor::cuda {
namespace {

using model::Transpose;

// Grows `memory` to at least `bytes` (contents dropped). Work enqueued on
// `stream` may still read the old buffer, so the host waits for it before
// freeing that, rather than count on cudaFree's implicit synchronisation
// (which a stream-ordered free would not have). Rare: a buffer grows a few
// times in a run.
void reserve(DeviceMemory& memory, int64_t bytes, cudaStream_t stream) {
  if (memory.bytes() >= bytes) return;
  if (memory.data() != nullptr) STOWAGE_CUDA(cudaStreamSynchronize(stream));
  memory = DeviceMemory(bytes);
}

}  // namespace

const int32_t* CudaLayerKernels::upload_ids(const int32_t* ids, int64_t n) {
  reserve(ids_, 4 * n, stream_);
  STOWAGE_CUDA(cudaMemcpyAsync(ids_.data(), ids, static_cast<size_t>(4 * n), cudaMemcpyHostToDevice, stream_));
  return reinterpret_cast<const int32_t*>(ids_.data());
}

std::pair<const float*, const float*> CudaLayerKernels::rotary_on_device(const model::RotaryTable& table) {
  auto it = rotary_.find(table.id());
  if (it == rotary_.end()) {
    const auto bytes = static_cast<int64_t>(table.cos_table().size_bytes());
    std::pair<DeviceMemory, DeviceMemory> tables{DeviceMemory(bytes), DeviceMemory(bytes)};
    STOWAGE_CUDA(cudaMemcpyAsync(tables.first.data(), table.cos_table().data(), static_cast<size_t>(bytes),
                                 cudaMemcpyHostToDevice, stream_));
    STOWAGE_CUDA(cudaMemcpyAsync(tables.second.data(), table.sin_table().data(), static_cast<size_t>(bytes),
                                 cudaMemcpyHostToDevice, stream_));
    it = rotary_.emplace(table.id(), std::move(tables)).first;
  }
  return {reinterpret_cast<const float*>(it->second.first.data()),
          reinterpret_cast<const float*>(it->second.second.data())};
}

void CudaLayerKernels::linear_forward(const float* x, const float* w, const float* b, float* y,
                                      const model::LinearShape& s) {
  gemm_.matmul(Transpose::kNo, Transpose::kYes, s.rows, s.out, s.in, 1.0f, x, s.in, w, s.in, 0.0f, y, s.out,
               stream_);
  if (b != nullptr) launch_add_bias_rows(y, b, s.rows, s.out, stream_);
}

void CudaLayerKernels::linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw,
                                       float* db, const model::LinearShape& s) {
  gemm_.matmul(Transpose::kNo, Transpose::kNo, s.rows, s.in, s.out, 1.0f, dy, s.out, w, s.in, 1.0f, dx, s.in,
               stream_);
  gemm_.matmul(Transpose::kYes, Transpose::kNo, s.out, s.in, s.rows, 1.0f, dy, s.out, x, s.in, 1.0f, dw, s.in,
               stream_);
  if (db != nullptr) launch_add_column_sums(dy, db, s.rows, s.out, stream_);
}

void CudaLayerKernels::layer_norm_forward(const float* x, const float* w, const float* b, float* y, float* mean,
                                          float* rstd, int64_t rows, int64_t d) {
  launch_layer_norm_forward(x, w, b, y, mean, rstd, rows, d, stream_);
}

void CudaLayerKernels::layer_norm_backward(const float* x, const float* w, const float* mean, const float* rstd,
                                           const float* dy, float* dx, float* dw, float* db, int64_t rows,
                                           int64_t d) {
  launch_layer_norm_backward(x, w, mean, rstd, dy, dx, dw, db, rows, d, stream_);
}

void CudaLayerKernels::rms_norm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows,
                                        int64_t d) {
  launch_rms_norm_forward(x, w, y, rstd, rows, d, stream_);
}

void CudaLayerKernels::rms_norm_backward(const float* x, const float* w, const float* rstd, const float* dy,
                                         float* dx, float* dw, int64_t rows, int64_t d) {
  launch_rms_norm_backward(x, w, rstd, dy, dx, dw, rows, d, stream_);
}

void CudaLayerKernels::gelu_forward(const float* x, float* y, int64_t n) {
  launch_gelu_forward(x, y, n, stream_);
}

void CudaLayerKernels::gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  launch_gelu_backward(x, dy, dx, n, stream_);
}

void CudaLayerKernels::swiglu_forward(const float* gate, const float* up, float* h, int64_t n) {
  launch_swiglu_forward(gate, up, h, n, stream_);
}

void CudaLayerKernels::swiglu_backward(const float* gate, const float* up, const float* dh, float* d_gate,
                                       float* d_up, int64_t n) {
  launch_swiglu_backward(gate, up, dh, d_gate, d_up, n, stream_);
}

void CudaLayerKernels::apply_rotary(const model::RotaryTable& table, float* x, int64_t batch, int64_t seq,
                                    int64_t heads, float direction) {
  if (seq > table.positions()) throw std::invalid_argument("RotaryTable: sequence longer than the table");
  const auto [cos, sin] = rotary_on_device(table);
  launch_rotate(x, cos, sin, batch, seq, heads, table.head_dim(), direction, stream_);
}

void CudaLayerKernels::rotate(const model::RotaryTable& table, float* x, int64_t batch, int64_t seq,
                              int64_t heads) {
  apply_rotary(table, x, batch, seq, heads, 1.0f);
}

void CudaLayerKernels::rotate_back(const model::RotaryTable& table, float* dx, int64_t batch, int64_t seq,
                                   int64_t heads) {
  apply_rotary(table, dx, batch, seq, heads, -1.0f);
}

// causal_attention.cpp's products, call for call; the softmax of every
// (sequence, head) in one launch between them.
void CudaLayerKernels::causal_attention_forward(const float* q, const float* k, const float* v, float* probs,
                                                float* y, const model::AttentionShape& s) {
  const int64_t group = s.group();
  const float scale = s.scale();
  auto each = [&](auto&& body) {
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t h = 0; h < s.heads; ++h) {
        body(b * s.seq * s.width() + h * s.head_dim, b * s.seq * s.kv_width() + (h / group) * s.head_dim,
             probs + (b * s.heads + h) * s.seq * s.seq);
      }
    }
  };
  each([&](int64_t at, int64_t kv_at, float* p) {
    gemm_.matmul(Transpose::kNo, Transpose::kYes, s.seq, s.seq, s.head_dim, scale, q + at, s.width(), k + kv_at,
                 s.kv_width(), 0.0f, p, s.seq, stream_);
  });
  launch_causal_softmax(probs, s.batch * s.heads, s.seq, stream_);
  each([&](int64_t at, int64_t kv_at, float* p) {
    gemm_.matmul(Transpose::kNo, Transpose::kNo, s.seq, s.head_dim, s.seq, 1.0f, p, s.seq, v + kv_at, s.kv_width(),
                 0.0f, y + at, s.width(), stream_);
  });
}

void CudaLayerKernels::causal_attention_backward(const float* q, const float* k, const float* v,
                                                 const float* probs, const float* dy, float* dq, float* dk,
                                                 float* dv, const model::AttentionShape& s) {
  const int64_t seq = s.seq;
  const int64_t dh = s.head_dim;
  const int64_t width = s.width();
  const int64_t kv_width = s.kv_width();
  const int64_t group = s.group();
  const float scale = s.scale();
  // Outside a region a Temporary is a host vector, which the device cannot
  // reach: the executor installs the op's (device) scratch around a layer.
  if (!model::scratch_region_installed())
    throw std::logic_error(
        "causal attention's backward on the GPU needs its score gradients in the op's device "
        "scratch, and no scratch region is installed");
  model::Temporary ds(seq * seq);  // the model's declared scratch, on the device
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t at = b * seq * width + h * dh;
      const int64_t kv_at = b * seq * kv_width + (h / group) * dh;
      const float beta = h % group == 0 ? 0.0f : 1.0f;  // the group's first head writes, the rest add
      const float* p = probs + (b * s.heads + h) * seq * seq;
      gemm_.matmul(Transpose::kYes, Transpose::kNo, seq, dh, seq, 1.0f, p, seq, dy + at, width, beta, dv + kv_at,
                   kv_width, stream_);
      gemm_.matmul(Transpose::kNo, Transpose::kYes, seq, seq, dh, 1.0f, dy + at, width, v + kv_at, kv_width, 0.0f,
                   ds.data(), seq, stream_);
      launch_causal_softmax_backward(p, ds.data(), 1, seq, stream_);
      gemm_.matmul(Transpose::kNo, Transpose::kNo, seq, dh, seq, scale, ds.data(), seq, k + kv_at, kv_width, 0.0f,
                   dq + at, width, stream_);
      gemm_.matmul(Transpose::kYes, Transpose::kNo, seq, dh, seq, scale, ds.data(), seq, q + at, width, beta,
                   dk + kv_at, kv_width, stream_);
    }
  }
}

double CudaLayerKernels::softmax_cross_entropy_forward(float* logits, const int32_t* targets, int64_t rows,
                                                       int64_t vocab) {
  const int32_t* device_targets = upload_ids(targets, rows);
  reserve(row_loss_, 8 * rows, stream_);
  auto* row_loss = reinterpret_cast<double*>(row_loss_.data());
  launch_cross_entropy_forward(logits, device_targets, row_loss, rows, vocab, stream_);
  row_loss_host_.resize(static_cast<size_t>(rows));
  STOWAGE_CUDA(cudaMemcpyAsync(row_loss_host_.data(), row_loss, static_cast<size_t>(8 * rows),
                               cudaMemcpyDeviceToHost, stream_));
  STOWAGE_CUDA(cudaStreamSynchronize(stream_));
  double total = 0.0;  // in row order, as the CPU adds
  for (double l : row_loss_host_) total += l;
  return total;
}

void CudaLayerKernels::softmax_cross_entropy_backward(const float* probs, const int32_t* targets, float scale,
                                                      float* dlogits, int64_t rows, int64_t vocab) {
  launch_cross_entropy_backward(probs, upload_ids(targets, rows), scale, dlogits, rows, vocab, stream_);
}

void CudaLayerKernels::gather_rows(const float* table, const int32_t* ids, int64_t rows, int64_t d, float* out) {
  launch_gather_rows(table, upload_ids(ids, rows), rows, d, out, stream_);
}

void CudaLayerKernels::scatter_add_rows(const int32_t* ids, const float* d_out, int64_t rows, int64_t d,
                                        float* d_table) {
  launch_scatter_add_rows(upload_ids(ids, rows), d_out, rows, d, d_table, stream_);
}

void CudaLayerKernels::add_into(float* y, const float* x, int64_t n) {
  launch_add_into(y, x, n, stream_);
}

void CudaLayerKernels::copy(float* dst, const float* src, int64_t n) {
  if (n <= 0) return;
  STOWAGE_CUDA(cudaMemcpyAsync(dst, src, static_cast<size_t>(4 * n), cudaMemcpyDeviceToDevice, stream_));
}

void CudaLayerKernels::fill(float* dst, float value, int64_t n) {
  launch_fill(dst, value, n, stream_);
}

}  // namespace stowage::executor::cuda
