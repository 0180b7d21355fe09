// Matrix products on the GPU with cblas_sgemm's row-major contract
// (model/matmul.h), through cuBLASLt with fp32 accumulation, so that the
// CUDA layer kernels compute the CPU model's products in the CPU model's
// order of calls: on fp32 operands in fp32 (no TF32: the CPU's math), or
// with the operands rounded to bf16 or fp16 on the tensor cores
// (CUBLAS_COMPUTE_32F_FAST_16BF, _16F: the fp32 buffers stay, nothing is
// allocated for 16-bit copies, and the sums stay fp32), the mixed-precision
// products training frameworks run and the simulator prices. cuBLASLt is column-major: a row-major
// C [m, n] = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T, so the
// call swaps the operands and the m and n dimensions.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <map>

#include "executor/cuda/device_memory.h"
#include "executor/cuda/product_precision.h"
#include "executor/model/matmul.h"

namespace stowage::executor::cuda {

// The column-major call that computes a row-major C [m, n] = op(A) op(B):
// column-major C^T [n, m] = op(B)^T op(A)^T, so `first` describes B and
// `second` A, each as stored (rows, columns and leading dimension before
// its transpose, as cuBLASLt's layouts take them). Pure, so that a test
// checks it against a row-major reference without a GPU.
struct ColumnMajorOperand {
  bool transposed = false;
  int64_t rows = 0, cols = 0, ld = 0;
};
struct ColumnMajorProduct {
  ColumnMajorOperand first, second;
  int64_t c_rows = 0, c_cols = 0, ldc = 0;
};
[[nodiscard]] ColumnMajorProduct column_major_product(model::Transpose ta, model::Transpose tb, int64_t m, int64_t n,
                                                      int64_t k, int64_t lda, int64_t ldb, int64_t ldc);

class RowMajorGemm {
 public:
  // Throws CudaError when cuBLASLt cannot start.
  explicit RowMajorGemm(ProductPrecision precision = ProductPrecision::kFp32);
  ~RowMajorGemm();
  RowMajorGemm(const RowMajorGemm&) = delete;
  RowMajorGemm& operator=(const RowMajorGemm&) = delete;

  // C [m, n] = alpha op(A) op(B) + beta C, row-major with leading
  // dimensions, device pointers, enqueued on `stream`; counts 2·m·n·k
  // FLOPs on the calling thread as model::matmul does. Throws CudaError.
  void matmul(model::Transpose ta, model::Transpose tb, int64_t m, int64_t n, int64_t k, float alpha,
              const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
              cudaStream_t stream);

 private:
  // The heuristic's choice for each shape (transposes, dimensions, leading
  // dimensions, alignments): a layer's products recur every micro-batch,
  // and asking again costs more host time than a small product.
  using ShapeKey = std::array<int64_t, 11>;
  std::map<ShapeKey, cublasLtMatmulAlgo_t> algorithms_;
  ProductPrecision precision_;
  cublasLtHandle_t handle_ = nullptr;
  DeviceMemory workspace_;
};

}  // namespace stowage::executor::cuda
