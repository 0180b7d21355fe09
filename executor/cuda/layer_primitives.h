// The CUDA layer kernels' element-wise and row-wise pieces (the products
// are cuBLASLt's, row_major_gemm.h): each the GPU twin of a loop of the
// CPU model, with that loop's contract (what is written, what added to).
// Device arrays; enqueued on `stream`; each throws CudaError when its
// launch fails. Row sums are in double as on the CPU, added in a tree.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace stowage::executor::cuda {

// y [rows, out] row r += b (linear.cpp's bias).
void launch_add_bias_rows(float* y, const float* b, int64_t rows, int64_t out, cudaStream_t stream);
// db [out] += the column sums of dy [rows, out], in row order (linear.cpp).
void launch_add_column_sums(const float* dy, float* db, int64_t rows, int64_t out, cudaStream_t stream);

// `matrices` score matrices [seq, seq] in place: row t softmaxed over
// columns 0..t, zeros after (causal_attention.cpp's causal_softmax).
void launch_causal_softmax(float* scores, int64_t matrices, int64_t seq, cudaStream_t stream);
// dp -> dS in place from p, row by row (causal_attention.cpp's softmax_backward).
void launch_causal_softmax_backward(const float* p, float* dp, int64_t matrices, int64_t seq,
                                    cudaStream_t stream);

// logits [rows, vocab] -> probabilities in place; row_loss [rows] written
// (logsumexp - target logit, in double). targets [rows] device.
void launch_cross_entropy_forward(float* logits, const int32_t* targets, double* row_loss, int64_t rows,
                                  int64_t vocab, cudaStream_t stream);
// dlogits [rows, vocab] written: (probs - onehot(target)) * scale.
void launch_cross_entropy_backward(const float* probs, const int32_t* targets, float scale, float* dlogits,
                                   int64_t rows, int64_t vocab, cudaStream_t stream);

// out [rows, d] row i = table row ids[i]; ids device.
void launch_gather_rows(const float* table, const int32_t* ids, int64_t rows, int64_t d, float* out,
                        cudaStream_t stream);
// d_table row ids[i] += d_out row i, for i in order (one thread a column:
// the CPU's order, and repeated ids never race).
void launch_scatter_add_rows(const int32_t* ids, const float* d_out, int64_t rows, int64_t d, float* d_table,
                             cudaStream_t stream);

void launch_add_into(float* y, const float* x, int64_t n, cudaStream_t stream);
void launch_fill(float* dst, float value, int64_t n, cudaStream_t stream);

// rms_norm.h's contracts (rstd written; dx and dw added to).
void launch_rms_norm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t d,
                             cudaStream_t stream);
void launch_rms_norm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx,
                              float* dw, int64_t rows, int64_t d, cudaStream_t stream);

// swiglu.h's contracts (everything written).
void launch_swiglu_forward(const float* gate, const float* up, float* h, int64_t n, cudaStream_t stream);
void launch_swiglu_backward(const float* gate, const float* up, const float* dh, float* d_gate, float* d_up,
                            int64_t n, cudaStream_t stream);

// RotaryTable::apply: x [batch * seq, heads * head_dim] rotated in place by
// direction (+1 rotate, -1 rotate back); cos, sin [positions, head_dim / 2] device.
void launch_rotate(float* x, const float* cos, const float* sin, int64_t batch, int64_t seq, int64_t heads,
                   int64_t head_dim, float direction, cudaStream_t stream);

}  // namespace stowage::executor::cuda
