#include "executor/cuda/row_major_gemm.h"

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "executor/cuda/cuda_error.h"
#include "executor/cuda/lt_owner.h"

namespace stowage::executor::cuda {
namespace {

// cuBLASLt's own workspace: what its heuristics are allowed for fp32 products.
constexpr int64_t kWorkspaceBytes = int64_t{32} << 20;

using Layout = LtOwner<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;

// A column-major fp32 matrix of `rows` x `cols` as stored (before any transpose).
Layout layout(int64_t rows, int64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t raw = nullptr;
  STOWAGE_CUBLAS(cublasLtMatrixLayoutCreate(&raw, CUDA_R_32F, static_cast<uint64_t>(rows),
                                            static_cast<uint64_t>(cols), ld));
  return Layout(raw);
}

// The alignment a pointer guarantees, up to 256 bytes: a layer's products
// read heads at offsets of a few floats, and cuBLASLt's heuristic otherwise
// assumes 256-byte alignment (its default preference) and may pick an
// algorithm that needs more than the pointer has.
uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 4 && address % a != 0) a /= 2;
  return a;
}

using Preference = LtOwner<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

Preference preference(uint64_t workspace_bytes, const void* a, const void* b, const void* c) {
  cublasLtMatmulPreference_t raw = nullptr;
  STOWAGE_CUBLAS(cublasLtMatmulPreferenceCreate(&raw));
  Preference p(raw);
  STOWAGE_CUBLAS(cublasLtMatmulPreferenceSetAttribute(p.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace_bytes, sizeof workspace_bytes));
  const uint32_t alignments[] = {alignment_of(a), alignment_of(b), alignment_of(c), alignment_of(c)};
  const cublasLtMatmulPreferenceAttributes_t attributes[] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4; ++i) {
    STOWAGE_CUBLAS(cublasLtMatmulPreferenceSetAttribute(p.get(), attributes[i], &alignments[i], sizeof(uint32_t)));
  }
  return p;
}

}  // namespace

ColumnMajorProduct column_major_product(model::Transpose ta, model::Transpose tb, int64_t m, int64_t n, int64_t k,
                                        int64_t lda, int64_t ldb, int64_t ldc) {
  // A row-major X [r, c] with leading dimension ld is the column-major X^T
  // [c, r], ld. B is [k, n] row-major ([n, k] stored when transposed); A is
  // [m, k] ([k, m]).
  const bool a_t = ta == model::Transpose::kYes, b_t = tb == model::Transpose::kYes;
  return {.first = {.transposed = b_t, .rows = b_t ? k : n, .cols = b_t ? n : k, .ld = ldb},
          .second = {.transposed = a_t, .rows = a_t ? m : k, .cols = a_t ? k : m, .ld = lda},
          .c_rows = n,
          .c_cols = m,
          .ldc = ldc};
}

RowMajorGemm::RowMajorGemm(ProductPrecision precision) : precision_(precision), workspace_(kWorkspaceBytes) {
  STOWAGE_CUBLAS(cublasLtCreate(&handle_));
}

RowMajorGemm::~RowMajorGemm() {
  (void)cublasLtDestroy(handle_);
}

void RowMajorGemm::matmul(model::Transpose ta, model::Transpose tb, int64_t m, int64_t n, int64_t k, float alpha,
                          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                          int64_t ldc, cudaStream_t stream) {
  model::count_matmul_flops(m, n, k);
  if (m == 0 || n == 0) return;
  const ColumnMajorProduct call = column_major_product(ta, tb, m, n, k, lda, ldb, ldc);
  cublasLtMatmulDesc_t desc_raw = nullptr;
  STOWAGE_CUBLAS(cublasLtMatmulDescCreate(&desc_raw, product_compute_type(precision_), CUDA_R_32F));
  const LtOwner<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> desc(desc_raw);
  const cublasOperation_t first = call.first.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t second = call.second.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  STOWAGE_CUBLAS(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, &first, sizeof first));
  STOWAGE_CUBLAS(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, &second, sizeof second));
  const Layout lb = layout(call.first.rows, call.first.cols, call.first.ld);
  const Layout la = layout(call.second.rows, call.second.cols, call.second.ld);
  const Layout lc = layout(call.c_rows, call.c_cols, call.ldc);
  const ShapeKey key{call.second.transposed, call.first.transposed, m, n, k, lda, ldb, ldc,
                     alignment_of(a),         alignment_of(b),        alignment_of(c)};
  auto known = algorithms_.find(key);
  if (known == algorithms_.end()) {
    const Preference pref = preference(static_cast<uint64_t>(workspace_.bytes()), b, a, c);
    cublasLtMatmulHeuristicResult_t heuristic{};
    int found = 0;
    STOWAGE_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle_, desc.get(), lb.get(), la.get(), lc.get(), lc.get(),
                                                  pref.get(), 1, &heuristic, &found));
    if (found == 0)
      throw CudaError(CudaErrorSource::kCublasLt, 0, "cublasLtMatmulAlgoGetHeuristic",
                      std::string("no GEMM algorithm for fp32 operands with ") +
                          product_precision_name(precision_) + " products");
    known = algorithms_.emplace(key, heuristic.algo).first;
  }
  STOWAGE_CUBLAS(cublasLtMatmul(handle_, desc.get(), &alpha, b, lb.get(), a, la.get(), &beta, c, lc.get(), c,
                                lc.get(), &known->second, workspace_.data(), static_cast<size_t>(workspace_.bytes()),
                                stream));
}

}  // namespace stowage::executor::cuda
