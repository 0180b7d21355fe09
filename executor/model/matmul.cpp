// matmul.h on cblas_sgemm.
#include "executor/model/matmul.h"

#include <cblas.h>

#include "executor/model/linear.h"

namespace stowage::executor::model {

namespace {
thread_local int64_t flops_on_this_thread = 0;

CBLAS_TRANSPOSE to_cblas(Transpose t) {
  return t == Transpose::kYes ? CblasTrans : CblasNoTrans;
}
}  // namespace

void matmul(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
            int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, to_cblas(ta), to_cblas(tb), blas_int(m), blas_int(n), blas_int(k), alpha, a,
              blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
  count_matmul_flops(m, n, k);
}

void count_matmul_flops(int64_t m, int64_t n, int64_t k) {
  flops_on_this_thread += 2 * m * n * k;
}

int64_t matmul_flops_on_this_thread() {
  return flops_on_this_thread;
}

}  // namespace stowage::executor::model
