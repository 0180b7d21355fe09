// layer_primitives.h. Element-wise work: grid-stride loops. Row-wise work
// (softmaxes, norms, the loss): one block a row, reductions in
// block_reduce.cuh. Column sums and scatters: one thread a column, adding
// in row order as the CPU does.
#include "executor/cuda/layer_primitives.h"

#include <cmath>

#include "executor/cuda/block_reduce.cuh"
#include "executor/cuda/cuda_error.h"
#include "executor/cuda/launch_shape.h"
#include "executor/model/rms_norm.h"

namespace stowage::executor::cuda {
namespace {

__device__ inline int64_t first_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t grid_stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

__global__ void add_bias_rows_kernel(float* y, const float* b, int64_t n, int64_t out) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] += b[i % out];
}

__global__ void add_column_sums_kernel(const float* dy, float* db, int64_t rows, int64_t out) {
  for (int64_t o = first_index(); o < out; o += grid_stride()) {
    float sum = db[o];
    for (int64_t r = 0; r < rows; ++r) sum += dy[r * out + o];
    db[o] = sum;
  }
}

__global__ void causal_softmax_kernel(float* scores, int64_t seq) {
  __shared__ double sums[kThreadsPerBlock];
  __shared__ float maxes[kThreadsPerBlock];
  float* row = scores + static_cast<int64_t>(blockIdx.x) * seq;
  const int64_t t = blockIdx.x % seq;
  float m = -INFINITY;
  for (int64_t s = threadIdx.x; s <= t; s += blockDim.x) m = fmaxf(m, row[s]);
  const float max = block_max(m, maxes);
  double sum = 0.0;
  for (int64_t s = threadIdx.x; s <= t; s += blockDim.x) {
    row[s] = expf(row[s] - max);
    sum += row[s];
  }
  const float inv = static_cast<float>(1.0 / block_sum(sum, sums));
  for (int64_t s = threadIdx.x; s < seq; s += blockDim.x) row[s] = s <= t ? row[s] * inv : 0.0f;
}

__global__ void causal_softmax_backward_kernel(const float* p, float* dp, int64_t seq) {
  __shared__ double sums[kThreadsPerBlock];
  const int64_t at = static_cast<int64_t>(blockIdx.x) * seq;
  const float* pr = p + at;
  float* dr = dp + at;
  const int64_t t = blockIdx.x % seq;
  double dot = 0.0;
  for (int64_t s = threadIdx.x; s <= t; s += blockDim.x) dot += static_cast<double>(pr[s]) * dr[s];
  const float dotf = static_cast<float>(block_sum(dot, sums));
  for (int64_t s = threadIdx.x; s < seq; s += blockDim.x) dr[s] = s <= t ? pr[s] * (dr[s] - dotf) : 0.0f;
}

__global__ void cross_entropy_forward_kernel(float* logits, const int32_t* targets, double* row_loss,
                                             int64_t vocab) {
  __shared__ double sums[kThreadsPerBlock];
  __shared__ float maxes[kThreadsPerBlock];
  const int64_t r = blockIdx.x;
  float* row = logits + r * vocab;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) m = fmaxf(m, row[i]);
  const float max = block_max(m, maxes);
  const float target_logit = row[targets[r]];
  __syncthreads();  // every thread has read it before any overwrites it
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) {
    row[i] = expf(row[i] - max);
    sum += row[i];
  }
  const double total = block_sum(sum, sums);
  if (threadIdx.x == 0) row_loss[r] = log(total) + static_cast<double>(max) - static_cast<double>(target_logit);
  const float inv = static_cast<float>(1.0 / total);
  for (int64_t i = threadIdx.x; i < vocab; i += blockDim.x) row[i] *= inv;
}

__global__ void cross_entropy_backward_kernel(const float* probs, const int32_t* targets, float scale,
                                              float* dlogits, int64_t rows, int64_t vocab) {
  for (int64_t i = first_index(); i < rows * vocab; i += grid_stride()) {
    const int64_t r = i / vocab;
    const bool target = i % vocab == targets[r];
    dlogits[i] = target ? (probs[i] - 1.0f) * scale : probs[i] * scale;
  }
}

__global__ void gather_rows_kernel(const float* table, const int32_t* ids, int64_t rows, int64_t d, float* out) {
  for (int64_t i = first_index(); i < rows * d; i += grid_stride()) out[i] = table[ids[i / d] * d + i % d];
}

__global__ void scatter_add_rows_kernel(const int32_t* ids, const float* d_out, int64_t rows, int64_t d,
                                        float* d_table) {
  for (int64_t c = first_index(); c < d; c += grid_stride()) {
    for (int64_t i = 0; i < rows; ++i) d_table[ids[i] * d + c] += d_out[i * d + c];
  }
}

__global__ void add_into_kernel(float* y, const float* x, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] += x[i];
}

__global__ void fill_kernel(float* dst, float value, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) dst[i] = value;
}

__global__ void rms_norm_forward_kernel(const float* x, const float* w, float* y, float* rstd, int64_t d) {
  __shared__ double sums[kThreadsPerBlock];
  const int64_t r = blockIdx.x;
  const float* xr = x + r * d;
  double squares = 0.0;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) squares += static_cast<double>(xr[i]) * xr[i];
  const double mean_square = block_sum(squares, sums) / static_cast<double>(d);
  const float row_rstd = static_cast<float>(1.0 / sqrt(mean_square + static_cast<double>(model::kRmsNormEps)));
  if (threadIdx.x == 0) rstd[r] = row_rstd;
  float* yr = y + r * d;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) yr[i] = xr[i] * row_rstd * w[i];
}

__global__ void rms_norm_input_grad_kernel(const float* x, const float* w, const float* rstd, const float* dy,
                                           float* dx, int64_t d) {
  __shared__ double sums[kThreadsPerBlock];
  const int64_t r = blockIdx.x;
  const float* xr = x + r * d;
  const float* dyr = dy + r * d;
  double sum_g_xhat = 0.0;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
    sum_g_xhat += static_cast<double>(dyr[i] * w[i]) * (xr[i] * rstd[r]);
  const float mean_g_xhat = static_cast<float>(block_sum(sum_g_xhat, sums) / static_cast<double>(d));
  float* dxr = dx + r * d;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float xhat = xr[i] * rstd[r];
    dxr[i] += rstd[r] * (dyr[i] * w[i] - xhat * mean_g_xhat);
  }
}

__global__ void rms_norm_weight_grad_kernel(const float* x, const float* rstd, const float* dy, float* dw,
                                            int64_t rows, int64_t d) {
  for (int64_t i = first_index(); i < d; i += grid_stride()) {
    float dw_i = dw[i];
    for (int64_t r = 0; r < rows; ++r) dw_i += dy[r * d + i] * (x[r * d + i] * rstd[r]);
    dw[i] = dw_i;
  }
}

__device__ inline float sigmoid(float z) {
  return 1.0f / (1.0f + expf(-z));
}

__global__ void swiglu_forward_kernel(const float* gate, const float* up, float* h, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) h[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

__global__ void swiglu_backward_kernel(const float* gate, const float* up, const float* dh, float* d_gate,
                                       float* d_up, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const float s = sigmoid(gate[i]);
    d_up[i] = dh[i] * gate[i] * s;
    d_gate[i] = dh[i] * up[i] * s * (1.0f + gate[i] * (1.0f - s));
  }
}

// One thread a (token, head, pair i < half).
__global__ void rotate_kernel(float* x, const float* cos, const float* sin, int64_t tokens, int64_t seq,
                              int64_t heads, int64_t head_dim, float direction) {
  const int64_t half = head_dim / 2;
  for (int64_t j = first_index(); j < tokens * heads * half; j += grid_stride()) {
    const int64_t i = j % half;
    const int64_t h = (j / half) % heads;
    const int64_t token = j / (half * heads);
    float* a = x + token * heads * head_dim + h * head_dim;
    float* b = a + half;
    const float c = cos[(token % seq) * half + i];
    const float sn = direction * sin[(token % seq) * half + i];
    const float ai = a[i];
    a[i] = ai * c - b[i] * sn;
    b[i] = b[i] * c + ai * sn;
  }
}

unsigned rows_grid(int64_t rows) {
  return static_cast<unsigned>(rows);
}

}  // namespace

void launch_add_bias_rows(float* y, const float* b, int64_t rows, int64_t out, cudaStream_t stream) {
  if (rows * out <= 0) return;
  add_bias_rows_kernel<<<blocks_for(rows * out), kThreadsPerBlock, 0, stream>>>(y, b, rows * out, out);
  check_launch("add_bias_rows_kernel");
}

void launch_add_column_sums(const float* dy, float* db, int64_t rows, int64_t out, cudaStream_t stream) {
  if (out <= 0) return;
  add_column_sums_kernel<<<blocks_for(out), kThreadsPerBlock, 0, stream>>>(dy, db, rows, out);
  check_launch("add_column_sums_kernel");
}

void launch_causal_softmax(float* scores, int64_t matrices, int64_t seq, cudaStream_t stream) {
  if (matrices * seq <= 0) return;
  causal_softmax_kernel<<<rows_grid(matrices * seq), kThreadsPerBlock, 0, stream>>>(scores, seq);
  check_launch("causal_softmax_kernel");
}

void launch_causal_softmax_backward(const float* p, float* dp, int64_t matrices, int64_t seq,
                                    cudaStream_t stream) {
  if (matrices * seq <= 0) return;
  causal_softmax_backward_kernel<<<rows_grid(matrices * seq), kThreadsPerBlock, 0, stream>>>(p, dp, seq);
  check_launch("causal_softmax_backward_kernel");
}

void launch_cross_entropy_forward(float* logits, const int32_t* targets, double* row_loss, int64_t rows,
                                  int64_t vocab, cudaStream_t stream) {
  if (rows <= 0) return;
  cross_entropy_forward_kernel<<<rows_grid(rows), kThreadsPerBlock, 0, stream>>>(logits, targets, row_loss, vocab);
  check_launch("cross_entropy_forward_kernel");
}

void launch_cross_entropy_backward(const float* probs, const int32_t* targets, float scale, float* dlogits,
                                   int64_t rows, int64_t vocab, cudaStream_t stream) {
  if (rows * vocab <= 0) return;
  cross_entropy_backward_kernel<<<blocks_for(rows * vocab), kThreadsPerBlock, 0, stream>>>(probs, targets, scale,
                                                                                           dlogits, rows, vocab);
  check_launch("cross_entropy_backward_kernel");
}

void launch_gather_rows(const float* table, const int32_t* ids, int64_t rows, int64_t d, float* out,
                        cudaStream_t stream) {
  if (rows * d <= 0) return;
  gather_rows_kernel<<<blocks_for(rows * d), kThreadsPerBlock, 0, stream>>>(table, ids, rows, d, out);
  check_launch("gather_rows_kernel");
}

void launch_scatter_add_rows(const int32_t* ids, const float* d_out, int64_t rows, int64_t d, float* d_table,
                             cudaStream_t stream) {
  if (d <= 0) return;
  scatter_add_rows_kernel<<<blocks_for(d), kThreadsPerBlock, 0, stream>>>(ids, d_out, rows, d, d_table);
  check_launch("scatter_add_rows_kernel");
}

void launch_add_into(float* y, const float* x, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  add_into_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(y, x, n);
  check_launch("add_into_kernel");
}

void launch_fill(float* dst, float value, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  fill_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(dst, value, n);
  check_launch("fill_kernel");
}

void launch_rms_norm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t d,
                             cudaStream_t stream) {
  if (rows <= 0 || d <= 0) return;
  rms_norm_forward_kernel<<<rows_grid(rows), kThreadsPerBlock, 0, stream>>>(x, w, y, rstd, d);
  check_launch("rms_norm_forward_kernel");
}

void launch_rms_norm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx,
                              float* dw, int64_t rows, int64_t d, cudaStream_t stream) {
  if (rows <= 0 || d <= 0) return;
  rms_norm_input_grad_kernel<<<rows_grid(rows), kThreadsPerBlock, 0, stream>>>(x, w, rstd, dy, dx, d);
  check_launch("rms_norm_input_grad_kernel");
  rms_norm_weight_grad_kernel<<<blocks_for(d), kThreadsPerBlock, 0, stream>>>(x, rstd, dy, dw, rows, d);
  check_launch("rms_norm_weight_grad_kernel");
}

void launch_swiglu_forward(const float* gate, const float* up, float* h, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  swiglu_forward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(gate, up, h, n);
  check_launch("swiglu_forward_kernel");
}

void launch_swiglu_backward(const float* gate, const float* up, const float* dh, float* d_gate, float* d_up,
                            int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  swiglu_backward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(gate, up, dh, d_gate, d_up, n);
  check_launch("swiglu_backward_kernel");
}

void launch_rotate(float* x, const float* cos, const float* sin, int64_t batch, int64_t seq, int64_t heads,
                   int64_t head_dim, float direction, cudaStream_t stream) {
  const int64_t pairs = batch * seq * heads * (head_dim / 2);
  if (pairs <= 0) return;
  rotate_kernel<<<blocks_for(pairs), kThreadsPerBlock, 0, stream>>>(x, cos, sin, batch * seq, seq, heads, head_dim,
                                                                    direction);
  check_launch("rotate_kernel");
}

}  // namespace stowage::executor::cuda
