// linear.h on matmul (matmul.h). Row-major throughout: with W stored [out, in],
// x W^T is sgemm(NoTrans, Trans) and the weight gradient dy^T x is
// sgemm(Trans, NoTrans).
#include "executor/model/linear.h"

#include <cblas.h>

#include <climits>
#include <stdexcept>
#include <string>

#include "executor/model/matmul.h"

namespace stowage::executor::model {

int blas_int(int64_t n) {
  if (n < 0 || n > INT_MAX)
    throw std::length_error("matrix dimension " + std::to_string(n) + " exceeds cblas's int");
  return static_cast<int>(n);
}

void set_blas_threads(int threads) {
  if (threads < 1) throw std::invalid_argument("set_blas_threads: threads must be >= 1");
  openblas_set_num_threads(threads);
}

int blas_threads() {
  return openblas_get_num_threads();
}

void linear_forward(const float* x, const float* w, const float* b, float* y, const LinearShape& s) {
  matmul(Transpose::kNo, Transpose::kYes, s.rows, s.out, s.in, 1.0f, x, s.in, w, s.in, 0.0f, y, s.out);
  if (b == nullptr) return;
  for (int64_t r = 0; r < s.rows; ++r) {
    float* row = y + r * s.out;
    for (int64_t o = 0; o < s.out; ++o) row[o] += b[o];
  }
}

void linear_backward(const float* x, const float* w, const float* dy, float* dx, float* dw, float* db,
                     const LinearShape& s) {
  // dx [rows, in] += dy [rows, out] W [out, in]
  matmul(Transpose::kNo, Transpose::kNo, s.rows, s.in, s.out, 1.0f, dy, s.out, w, s.in, 1.0f, dx, s.in);
  // dw [out, in] += dy^T [out, rows] x [rows, in]
  matmul(Transpose::kYes, Transpose::kNo, s.out, s.in, s.rows, 1.0f, dy, s.out, x, s.in, 1.0f, dw, s.in);
  if (db == nullptr) return;
  for (int64_t r = 0; r < s.rows; ++r) {
    const float* row = dy + r * s.out;
    for (int64_t o = 0; o < s.out; ++o) db[o] += row[o];
  }
}

}  // namespace stowage::executor::model
