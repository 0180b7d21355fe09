// Which OpenBLAS kernels Stowage asks for: only in place of the generic
// fallback, and only what the CPU can run.
#include "executor/model/blas_kernels.h"

#include <gtest/gtest.h>

namespace stowage::executor::model {
namespace {

TEST(BlasKernels, TheGenericFallbackGivesWayToTheWidestKernelsTheCpuRuns) {
  EXPECT_EQ(blas_kernels_to_request("Prescott", /*avx512=*/true, /*avx2=*/true), "SkylakeX");
  EXPECT_EQ(blas_kernels_to_request("Prescott", /*avx512=*/false, /*avx2=*/true), "Haswell");
}

TEST(BlasKernels, ACpuWithNothingWiderKeepsTheFallback) {
  EXPECT_EQ(blas_kernels_to_request("Prescott", false, false), std::nullopt);
}

TEST(BlasKernels, KernelsTheLibraryChoseForACpuItKnowsStand) {
  // Zen's or Haswell's kernels on an AVX-512 CPU are the library's choice
  // for a CPU it recognised, not a fallback.
  EXPECT_EQ(blas_kernels_to_request("Haswell", true, true), std::nullopt);
  EXPECT_EQ(blas_kernels_to_request("Zen", true, true), std::nullopt);
  EXPECT_EQ(blas_kernels_to_request("SkylakeX", true, true), std::nullopt);
}

TEST(BlasKernels, NamesTheKernelsThisProcessRuns) { EXPECT_FALSE(blas_kernels().empty()); }

}  // namespace
}  // namespace stowage::executor::model
