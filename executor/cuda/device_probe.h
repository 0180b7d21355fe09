// What a GPU does, measured: copies between the host and the device by
// size (pinned or pageable host memory), the device-to-device copy rate,
// and GEMM rates through cuBLASLt. bench/gpu/cuda_probe prints them as
// tables; `stowage profile --gpu auto` turns them into a machine profile's
// calibration (probe/gpu_calibration.h). Each rate is the mean of `reps`
// calls after one warm-up, timed by CUDA events on one stream.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stowage::executor::cuda {

// Seconds per call of `body`, which enqueues its work on `stream`.
[[nodiscard]] double seconds_per_call(cudaStream_t stream, int reps, const std::function<void()>& body);

// Bytes per second of copying `bytes` from the host to the device (h2d)
// or back, between a buffer of the device and `host` (at least `bytes`).
[[nodiscard]] double copy_rate(cudaStream_t stream, std::byte* host, std::byte* device, int64_t bytes,
                               cudaMemcpyKind direction, int reps);

// Device-to-device copy of `bytes`: bytes per second counting what is read
// and what is written (2 x bytes a copy), as a streaming kernel's traffic
// counts, so that it compares with the GPU's memory bandwidth.
[[nodiscard]] double hbm_copy_rate(int64_t bytes, cudaStream_t stream, int reps = 10);

// C[m,n] = A[m,k] B[k,n], A, B and C of `type` (bf16, fp16 or fp32)
// holding one small value everywhere, summed under `compute`: FLOP per
// second.
[[nodiscard]] double gemm_rate(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, cudaDataType_t type,
                               cublasComputeType_t compute, cudaStream_t stream, int reps = 10);

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};

// What `stowage profile --gpu auto` measures of device 0.
struct GpuProbeSizes {
  std::vector<int64_t> copy_bytes;  // pinned copies, each direction
  int64_t hbm_copy_bytes = 0;
  std::vector<GemmShape> gemms;
  bool bf16 = true;  // the GEMMs' operands bf16, else fp16 (a GPU without bf16: V100, T4)
  int reps = 10;
};

struct CopyRates {
  int64_t bytes = 0;
  double h2d = 0, d2h = 0;  // B/s, pinned host memory
};

struct GemmRate {
  GemmShape shape;
  double flops_per_s = 0;
};

struct GpuRates {
  std::string device;  // the driver's name (device_name(0))
  std::vector<CopyRates> pinned;
  double hbm_copy = 0;          // B/s, read + written
  std::vector<GemmRate> gemms;  // bf16 or fp16 operands, as GpuProbeSizes::bf16 says; fp32 sums
};

// Sizes under a second or two on a data-centre GPU (`quick`), or the
// bench's (cuda_probe's sizes: copies up to 1 GiB, a 4 GiB HBM copy,
// GEMMs up to 8192 cubed).
[[nodiscard]] GpuProbeSizes gpu_probe_sizes(bool quick);

// Measures device 0; throws CudaError naming the call that failed.
[[nodiscard]] GpuRates measure_gpu(const GpuProbeSizes& sizes);

}  // namespace stowage::executor::cuda
