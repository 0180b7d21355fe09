// A Linear layer, y = x W^T + b with W [out, in] (PyTorch nn.Linear, the
// layout core::Workload lists), forward and backward on OpenBLAS sgemm.
// Kernels take raw row-major pointers with shapes in comments (llm.c
// style); the layer API in gpt_model.h checks sizes before calling them.
#pragma once

#include <cstdint>

namespace stowage::executor::model {

struct LinearShape {
  int64_t rows = 0;  // tokens: batch * seq
  int64_t in = 0;
  int64_t out = 0;
};

// x [rows, in], w [out, in], b [out] or null, y [rows, out] written.
void linear_forward(const float* x, const float* w, const float* b, float* y, const LinearShape& s);

// dy [rows, out]. Every gradient is ADDED to what its buffer holds, so the
// callers can sum the contributions of several uses:
//   dx [rows, in] += dy W;  dw [out, in] += dy^T x;  db [out] += column sums of dy (db may be null).
void linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db,
                     const LinearShape& s);

// OpenBLAS's thread count, process-wide (OpenBLAS keeps one setting).
// OpenBLAS splits a matrix product over threads by output blocks and never
// over the summed dimension, so for a fixed count and shape the result is
// the same bits every run; different counts may differ in the last bits.
void set_blas_threads(int threads);
[[nodiscard]] int blas_threads();

// cblas takes int dimensions; throws std::length_error beyond INT_MAX.
[[nodiscard]] int blas_int(int64_t n);

}  // namespace stowage::executor::model
