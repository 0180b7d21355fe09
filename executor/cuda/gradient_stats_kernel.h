// A step's gradient verdict from a device buffer of 16-bit gradients: all
// finite?, and the order-free sum of squares (executor/square_sum.h). The
// kernel bins M^2 by exponent with 64-bit integer atomics
// (executor/square_sum_bins.h); SquareSum::add_bins shifts each bin once on
// the host. Integer sums do not depend on the order of their terms, so the
// result is the CPU backend's to the bit, whatever the GPU's scheduling
// (tests/executor/cuda/gradient_stats_kernel_test.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/training_spec.h"
#include "executor/square_sum_bins.h"

namespace stowage::executor::cuda {

// Adds the terms of grad16[0, n) into *bins (device memory, zeroed by the
// caller or holding earlier buffers' terms). n < 2^42 (no bin can wrap).
// Throws CudaError when the launch fails.
void launch_square_sum_bins(const uint16_t* grad16, int64_t n, core::Precision precision, SquareSumBins* bins,
                            cudaStream_t stream);

}  // namespace stowage::executor::cuda
