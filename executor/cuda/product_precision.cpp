#include "executor/cuda/product_precision.h"

namespace stowage::executor::cuda {

const char* product_precision_name(ProductPrecision precision) {
  switch (precision) {
    case ProductPrecision::kFp32:
      return "fp32";
    case ProductPrecision::kBf16:
      return "bf16";
    case ProductPrecision::kFp16:
      return "fp16";
  }
  return "?";
}

cublasComputeType_t product_compute_type(ProductPrecision precision) {
  switch (precision) {
    case ProductPrecision::kFp32:
      return CUBLAS_COMPUTE_32F;
    case ProductPrecision::kBf16:
      return CUBLAS_COMPUTE_32F_FAST_16BF;
    case ProductPrecision::kFp16:
      return CUBLAS_COMPUTE_32F_FAST_16F;
  }
  return CUBLAS_COMPUTE_32F;
}

}  // namespace stowage::executor::cuda
