// What the CUDA layers' matrix products round their fp32 operands to, and
// the cuBLASLt compute type that does it: one answer for the executor's
// GEMMs (row_major_gemm.h) and the probe that measures their rate
// (bench/gpu/cuda_probe.cu).
#pragma once

#include <cublas_api.h>

#include <cstdint>

namespace stowage::executor::cuda {

enum class ProductPrecision : uint8_t {
  kFp32,  // the CPU backend's products (no TF32)
  kBf16,  // operands rounded to bf16 on the tensor cores, sums in fp32
  kFp16,  // operands rounded to fp16 (whose range ends at 65504), sums in fp32
};
// cuBLASLt's fast modes allow the rounding rather than require it: where
// no tensor-core algorithm takes a shape (rows not 16-byte aligned), a
// 16-bit product may run in fp32 instead.

// "fp32", "bf16", "fp16": what the command line and errors call them.
[[nodiscard]] const char* product_precision_name(ProductPrecision precision);

// CUBLAS_COMPUTE_32F, _32F_FAST_16BF, _32F_FAST_16F: fp32 accumulation in
// each, on fp32 operands.
[[nodiscard]] cublasComputeType_t product_compute_type(ProductPrecision precision);

}  // namespace stowage::executor::cuda
