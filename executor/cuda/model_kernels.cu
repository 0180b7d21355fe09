// model_kernels.h. GELU: grid-stride loops. LayerNorm: one block per row for
// the statistics and dx (a shared-memory tree of doubles), one thread per
// column for dw and db (grid-stride, as the grid is capped).
#include "executor/cuda/model_kernels.h"

#include "executor/cuda/block_reduce.cuh"
#include "executor/cuda/cuda_error.h"
#include "executor/cuda/launch_shape.h"
#include "executor/model/gelu_math.h"
#include "executor/model/layer_norm_math.h"

namespace stowage::executor::cuda {
namespace {

__global__ void gelu_forward_kernel(const float* x, float* y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = model::gelu_value(x[i]);
}

__global__ void gelu_backward_kernel(const float* x, const float* dy, float* dx, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dx[i] = model::gelu_input_grad(x[i], dy[i]);
}

__global__ void layer_norm_forward_kernel(const float* x, const float* w, const float* b, float* y,
                                          float* mean, float* rstd, int64_t d) {
  __shared__ double shared[kThreadsPerBlock];
  const int64_t r = blockIdx.x;
  const float* xr = x + r * d;
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) sum += xr[i];
  const double mu = block_sum(sum, shared) / static_cast<double>(d);
  double squares = 0.0;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) squares += (xr[i] - mu) * (xr[i] - mu);
  const double var = block_sum(squares, shared) / static_cast<double>(d);
  const float row_mean = static_cast<float>(mu);
  const float row_rstd = model::layer_norm_rstd(var);
  if (threadIdx.x == 0) {
    mean[r] = row_mean;
    rstd[r] = row_rstd;
  }
  float* yr = y + r * d;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
    yr[i] = model::layer_norm_output(xr[i], row_mean, row_rstd, w[i], b[i]);
}

__global__ void layer_norm_input_grad_kernel(const float* x, const float* w, const float* mean,
                                             const float* rstd, const float* dy, float* dx, int64_t d) {
  __shared__ double shared[kThreadsPerBlock];
  const int64_t r = blockIdx.x;
  const float* xr = x + r * d;
  const float* dyr = dy + r * d;
  double sum_dxhat = 0.0;
  double sum_dxhat_xhat = 0.0;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x) {
    const float xhat = model::layer_norm_xhat(xr[i], mean[r], rstd[r]);
    const float dxhat = dyr[i] * w[i];
    sum_dxhat += dxhat;
    sum_dxhat_xhat += static_cast<double>(dxhat) * xhat;
  }
  const float mean_dxhat = static_cast<float>(block_sum(sum_dxhat, shared) / static_cast<double>(d));
  const float mean_dxhat_xhat =
      static_cast<float>(block_sum(sum_dxhat_xhat, shared) / static_cast<double>(d));
  float* dxr = dx + r * d;
  for (int64_t i = threadIdx.x; i < d; i += blockDim.x)
    dxr[i] +=
        model::layer_norm_input_grad(xr[i], mean[r], rstd[r], w[i], dyr[i], mean_dxhat, mean_dxhat_xhat);
}

__global__ void layer_norm_weight_grad_kernel(const float* x, const float* mean, const float* rstd,
                                              const float* dy, float* dw, float* db, int64_t rows,
                                              int64_t d) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;  // blocks_for caps the grid
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < d; i += stride) {
    float dw_i = dw[i];
    float db_i = db[i];
    for (int64_t r = 0; r < rows; ++r) {  // row order, as the CPU adds
      const float dy_ri = dy[r * d + i];
      dw_i += dy_ri * model::layer_norm_xhat(x[r * d + i], mean[r], rstd[r]);
      db_i += dy_ri;
    }
    dw[i] = dw_i;
    db[i] = db_i;
  }
}

}  // namespace

void launch_gelu_forward(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  gelu_forward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(x, y, n);
  check_launch("gelu_forward_kernel");
}

void launch_gelu_backward(const float* x, const float* dy, float* dx, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  gelu_backward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(x, dy, dx, n);
  check_launch("gelu_backward_kernel");
}

void launch_layer_norm_forward(const float* x, const float* w, const float* b, float* y, float* mean,
                               float* rstd, int64_t rows, int64_t d, cudaStream_t stream) {
  if (rows <= 0 || d <= 0) return;
  layer_norm_forward_kernel<<<static_cast<unsigned>(rows), kThreadsPerBlock, 0, stream>>>(x, w, b, y, mean,
                                                                                          rstd, d);
  check_launch("layer_norm_forward_kernel");
}

void launch_layer_norm_backward(const float* x, const float* w, const float* mean, const float* rstd,
                                const float* dy, float* dx, float* dw, float* db, int64_t rows, int64_t d,
                                cudaStream_t stream) {
  if (rows <= 0 || d <= 0) return;
  layer_norm_input_grad_kernel<<<static_cast<unsigned>(rows), kThreadsPerBlock, 0, stream>>>(x, w, mean, rstd,
                                                                                             dy, dx, d);
  check_launch("layer_norm_input_grad_kernel");
  layer_norm_weight_grad_kernel<<<blocks_for(d), kThreadsPerBlock, 0, stream>>>(x, mean, rstd, dy, dw, db,
                                                                                rows, d);
  check_launch("layer_norm_weight_grad_kernel");
}

}  // namespace stowage::executor::cuda
