// The trained model's element-wise layers on the GPU, over the math the CPU
// model runs (executor/model/gelu_math.h, layer_norm_math.h), with the same
// shapes and contracts as executor/model/gelu.h and layer_norm.h. Device
// arrays; enqueued on `stream`; each throws CudaError when its launch
// fails. What differs from the CPU, and the tolerance it allows, is stated
// in tests/executor/cuda/model_kernels_test.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace stowage::executor::cuda {

// y[i] = gelu(x[i]), i < n.
void launch_gelu_forward(const float* x, float* y, int64_t n, cudaStream_t stream);
// dx[i] = dy[i] * gelu'(x[i]) (written, as model::gelu_backward).
void launch_gelu_backward(const float* x, const float* dy, float* dx, int64_t n, cudaStream_t stream);

// x, y [rows, d]; w, b [d]; mean, rstd [rows] written. Row sums in double,
// as on the CPU, added in a tree instead of in index order.
void launch_layer_norm_forward(const float* x, const float* w, const float* b, float* y, float* mean,
                               float* rstd, int64_t rows, int64_t d, cudaStream_t stream);
// dx [rows, d], dw [d], db [d] ADDED to. dw and db are summed over rows in
// row order, one thread per column: the CPU's order and bits.
void launch_layer_norm_backward(const float* x, const float* w, const float* mean, const float* rstd,
                                const float* dy, float* dx, float* dw, float* db, int64_t rows, int64_t d,
                                cudaStream_t stream);

}  // namespace stowage::executor::cuda
