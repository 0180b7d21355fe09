// The one door from the executor's models to OpenBLAS's sgemm, and the count
// of the FLOPs that pass through it.
//
// core::Workload counts a layer's FLOPs as its matrix products only, 2 per
// multiply-add, with attention scores over the full s x s square
// (core/workload.h); the models' other work (norms, softmax, activation
// functions) is elementwise and uncounted on both sides. Every product the
// models compute goes through matmul(), which adds 2·m·n·k to a count kept
// per thread, so the interpreter can check that each compute op did exactly
// the FLOPs lowering declared for it (executor/interpreter.cpp).
#pragma once

#include <cstdint>

namespace stowage::executor::model {

enum class Transpose : bool { kNo = false, kYes = true };

// Row-major C [m, n] = alpha op(A) [m, k] op(B) [k, n] + beta C, with op(X)
// X or X^T and leading dimensions as cblas_sgemm takes them.
void matmul(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
            int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// The FLOPs matmul() has computed on the calling thread since it started.
[[nodiscard]] int64_t matmul_flops_on_this_thread();
// Adds a product's 2·m·n·k to that count: for another backend's matmul
// (executor/cuda/row_major_gemm.h), which counts as this one does.
void count_matmul_flops(int64_t m, int64_t n, int64_t k);

}  // namespace stowage::executor::model
