// The column-major call a row-major product becomes (row_major_gemm.h),
// checked without a GPU: a column-major product computed as cuBLASLt
// defines it, from the operands as column_major_product describes them,
// against cblas's row-major product, for every pair of transposes, odd
// sizes and padded leading dimensions. The two sums take the same products
// in the same order, so they agree to the bit.
#include "executor/cuda/row_major_gemm.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

using model::Transpose;

// Element (i, j) of a stored matrix, row-major or column-major.
float row_major_at(const std::vector<float>& x, int64_t ld, int64_t i, int64_t j) { return x[i * ld + j]; }
float column_major_at(const std::vector<float>& x, int64_t ld, int64_t i, int64_t j) { return x[i + j * ld]; }

// op(X)[i][t] of an operand as the column-major call describes it.
float operand_at(const std::vector<float>& x, const ColumnMajorOperand& o, int64_t i, int64_t t) {
  return o.transposed ? column_major_at(x, o.ld, t, i) : column_major_at(x, o.ld, i, t);
}

TEST(RowMajorGemm, TheColumnMajorCallComputesTheRowMajorProduct) {
  const int64_t m = 5, n = 7, k = 3;
  for (const Transpose ta : {Transpose::kNo, Transpose::kYes}) {
    for (const Transpose tb : {Transpose::kNo, Transpose::kYes}) {
      SCOPED_TRACE(std::string(ta == Transpose::kYes ? "A^T" : "A") + (tb == Transpose::kYes ? " B^T" : " B"));
      const bool a_t = ta == Transpose::kYes, b_t = tb == Transpose::kYes;
      // Stored row-major with padding beyond each row.
      const int64_t lda = (a_t ? m : k) + 2, ldb = (b_t ? k : n) + 1, ldc = n + 3;
      const std::vector<float> a = random_floats((a_t ? k : m) * lda, -1, 1, 1);
      const std::vector<float> b = random_floats((b_t ? n : k) * ldb, -1, 1, 2);
      const ColumnMajorProduct call = column_major_product(ta, tb, m, n, k, lda, ldb, ldc);
      ASSERT_EQ(call.c_rows, n);
      ASSERT_EQ(call.c_cols, m);
      // The stored shapes fit the arrays: every element the call may read exists.
      EXPECT_LE((call.first.cols - 1) * call.first.ld + call.first.rows, static_cast<int64_t>(b.size()));
      EXPECT_LE((call.second.cols - 1) * call.second.ld + call.second.rows, static_cast<int64_t>(a.size()));
      EXPECT_GE(call.first.ld, call.first.rows);
      EXPECT_GE(call.second.ld, call.second.rows);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          float row_major = 0, column_major = 0;
          for (int64_t t = 0; t < k; ++t) {
            row_major += (a_t ? row_major_at(a, lda, t, i) : row_major_at(a, lda, i, t)) *
                         (b_t ? row_major_at(b, ldb, j, t) : row_major_at(b, ldb, t, j));
            // C^T [j][i] = sum over t of op(first)[j][t] op(second)[t][i]
            column_major += operand_at(b, call.first, j, t) * operand_at(a, call.second, t, i);
          }
          // C^T's (j, i) is stored at j + i * ldc: the row-major C's (i, j).
          ASSERT_EQ(column_major, row_major) << "i " << i << " j " << j;
          ASSERT_EQ(j + i * call.ldc, i * ldc + j);
        }
      }
    }
  }
}

}  // namespace
}  // namespace stowage::executor::cuda
