// The cuBLASLt calls row_major_gemm.cpp makes, on the host: a column-major
// D = alpha op(A) op(B) + beta C by OpenBLAS's sgemm (fp32 sums, in its
// order, not the GPU's), with the operands rounded to bf16 or fp16 first
// under the FAST_16BF / FAST_16F compute types (as the tensor cores take
// them: product_precision.h).
// Only what the executor and its device probe (device_probe.h) ask for is
// served: fp32 matrices, or bf16 or fp16 ones widened to fp32 and the
// result rounded back; one algorithm; D in place of C; anything else is
// CUBLAS_STATUS_NOT_SUPPORTED.
#include <cublasLt.h>

#include <cblas.h>

#include <cstdint>
#include <vector>

#include "executor/half_bits.h"
#include "tests/executor/cuda/emulated/emulated_streams.h"

namespace {

struct Desc {
  cublasComputeType_t compute;
  cublasOperation_t trans_a = CUBLAS_OP_N;
  cublasOperation_t trans_b = CUBLAS_OP_N;
};

struct Layout {
  cudaDataType type;
  int64_t rows, cols, ld;
};

template <class T, class Handle>
T* as(Handle h) {
  return reinterpret_cast<T*>(h);
}

// The stored matrix as the products take it: itself in fp32, else a copy
// with every element rounded to the 16-bit type.
const float* as_operand(const float* x, const Layout& l, cublasComputeType_t compute,
                        std::vector<float>& copy) {
  using namespace stowage::executor;
  if (compute != CUBLAS_COMPUTE_32F_FAST_16BF && compute != CUBLAS_COMPUTE_32F_FAST_16F) return x;
  if (l.rows == 0 || l.cols == 0) return x;
  copy.assign(x, x + (l.cols - 1) * l.ld + l.rows);
  for (float& v : copy)
    v = compute == CUBLAS_COMPUTE_32F_FAST_16BF ? bf16_value(bf16_bits(v)) : fp16_value(fp16_bits(v));
  return copy.data();
}

// The floats of a stored matrix of `l.type`'s elements: fp32 as they are,
// bf16 or fp16 widened (exactly) into `copy`.
const float* widened(const void* x, const Layout& l, std::vector<float>& copy) {
  using namespace stowage::executor;
  if (l.type == CUDA_R_32F) return static_cast<const float*>(x);
  const auto* bits = static_cast<const uint16_t*>(x);
  copy.resize(static_cast<size_t>(l.cols * l.ld));
  for (size_t i = 0; i < copy.size(); ++i)
    copy[i] = l.type == CUDA_R_16BF ? bf16_value(bits[i]) : fp16_value(bits[i]);
  return copy.data();
}

CBLAS_TRANSPOSE to_cblas(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
}

}  // namespace

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  static int the_handle;
  *handle = reinterpret_cast<cublasLtHandle_t>(&the_handle);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t /*handle*/) {
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (scale != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(new Desc{compute});
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete as<Desc>(desc);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t bytes) {
  if (bytes != sizeof(cublasOperation_t)) return CUBLAS_STATUS_INVALID_VALUE;
  const auto op = *static_cast<const cublasOperation_t*>(buf);
  if (attr == CUBLASLT_MATMUL_DESC_TRANSA) {
    as<Desc>(desc)->trans_a = op;
  } else if (attr == CUBLASLT_MATMUL_DESC_TRANSB) {
    as<Desc>(desc)->trans_b = op;
  } else {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  if (type != CUDA_R_32F && type != CUDA_R_16BF && type != CUDA_R_16F) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (ld < static_cast<int64_t>(rows)) return CUBLAS_STATUS_INVALID_VALUE;
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(
      new Layout{type, static_cast<int64_t>(rows), static_cast<int64_t>(cols), ld});
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete as<Layout>(layout);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  static int the_preference;
  *pref = reinterpret_cast<cublasLtMatmulPreference_t>(&the_preference);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t /*pref*/) {
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t /*pref*/,
                                                    cublasLtMatmulPreferenceAttributes_t /*attr*/,
                                                    const void* /*buf*/, size_t /*bytes*/) {
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t /*handle*/, cublasLtMatmulDesc_t /*desc*/,
                                              cublasLtMatrixLayout_t /*a*/, cublasLtMatrixLayout_t /*b*/,
                                              cublasLtMatrixLayout_t /*c*/, cublasLtMatrixLayout_t /*d*/,
                                              cublasLtMatmulPreference_t /*pref*/, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* found) {
  if (requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  *found = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t /*handle*/, cublasLtMatmulDesc_t desc_handle,
                              const void* alpha_p, const void* a_p, cublasLtMatrixLayout_t a_layout,
                              const void* b_p, cublasLtMatrixLayout_t b_layout, const void* beta_p,
                              const void* c_p, cublasLtMatrixLayout_t c_layout, void* d_p,
                              cublasLtMatrixLayout_t d_layout, const cublasLtMatmulAlgo_t* /*algo*/,
                              void* /*workspace*/, size_t /*workspace_bytes*/, cudaStream_t stream) {
  const Desc& desc = *as<Desc>(desc_handle);
  const Layout& la = *as<Layout>(a_layout);
  const Layout& lb = *as<Layout>(b_layout);
  const Layout& lc = *as<Layout>(c_layout);
  const Layout& ld = *as<Layout>(d_layout);
  if (c_p != d_p || lc.rows != ld.rows || lc.cols != ld.cols || lc.ld != ld.ld)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (la.type != lb.type || la.type != lc.type || lc.type != ld.type) return CUBLAS_STATUS_NOT_SUPPORTED;
  const int64_t m = lc.rows, n = lc.cols;
  const int64_t k = desc.trans_a == CUBLAS_OP_N ? la.cols : la.rows;
  const int64_t a_rows = desc.trans_a == CUBLAS_OP_N ? la.rows : la.cols;
  const int64_t b_rows = desc.trans_b == CUBLAS_OP_N ? lb.rows : lb.cols;
  const int64_t b_cols = desc.trans_b == CUBLAS_OP_N ? lb.cols : lb.rows;
  if (a_rows != m || b_rows != k || b_cols != n) return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return CUBLAS_STATUS_SUCCESS;
  // The scalars are read now (host pointer mode), the operands when the
  // stream runs the product.
  const float alpha = *static_cast<const float*>(alpha_p), beta = *static_cast<const float*>(beta_p);
  stowage::cuda_emulation::enqueue(stream, [=] {
    std::vector<float> a_wide, b_wide, c_wide, a_copy, b_copy;
    const float* a = as_operand(widened(a_p, la, a_wide), la, desc.compute, a_copy);
    const float* b = as_operand(widened(b_p, lb, b_wide), lb, desc.compute, b_copy);
    float* c =
        ld.type == CUDA_R_32F ? static_cast<float*>(d_p) : const_cast<float*>(widened(d_p, ld, c_wide));
    cblas_sgemm(CblasColMajor, to_cblas(desc.trans_a), to_cblas(desc.trans_b), static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a, static_cast<blasint>(la.ld), b,
                static_cast<blasint>(lb.ld), beta, c, static_cast<blasint>(ld.ld));
    if (ld.type != CUDA_R_32F) {  // D rounded back to its 16-bit type as it is stored
      auto* bits = static_cast<uint16_t*>(d_p);
      for (size_t i = 0; i < c_wide.size(); ++i) {
        bits[i] = ld.type == CUDA_R_16BF ? stowage::executor::bf16_bits(c_wide[i])
                                         : stowage::executor::fp16_bits(c_wide[i]);
      }
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}
