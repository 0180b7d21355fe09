#include "executor/cuda/device_probe.h"

#include <cstring>
#include <memory>
#include <type_traits>

#include "executor/cuda/cuda_device.h"
#include "executor/cuda/cuda_error.h"
#include "executor/cuda/cuda_event.h"
#include "executor/cuda/cuda_stream.h"
#include "executor/cuda/device_memory.h"
#include "executor/cuda/lt_owner.h"
#include "executor/cuda/pinned_buffer.h"

namespace stowage::executor::cuda {
namespace {

// Bytes that make a small plain value of every element whatever the type:
// 0.0115 in bf16 (0x3C3C) and fp32 (0x3C3C3C3C), 1.06 in fp16.
constexpr int kOperandByte = 0x3C;

}  // namespace

double seconds_per_call(cudaStream_t stream, int reps, const std::function<void()>& body) {
  body();
  const CudaEvent start(EventTiming::kTimed);
  const CudaEvent end(EventTiming::kTimed);
  start.record(stream);
  for (int i = 0; i < reps; ++i) body();
  end.record(stream);
  end.synchronize();
  return static_cast<double>(elapsed_ms(start, end)) / 1e3 / reps;
}

double copy_rate(cudaStream_t stream, std::byte* host, std::byte* device, int64_t bytes,
                 cudaMemcpyKind direction, int reps) {
  const bool up = direction == cudaMemcpyHostToDevice;
  const double seconds = seconds_per_call(stream, reps, [&] {
    STOWAGE_CUDA(cudaMemcpyAsync(up ? static_cast<void*>(device) : host,
                                 up ? static_cast<void*>(host) : device, static_cast<size_t>(bytes),
                                 direction, stream));
  });
  return static_cast<double>(bytes) / seconds;
}

double hbm_copy_rate(int64_t bytes, cudaStream_t stream, int reps) {
  const DeviceMemory from(bytes), to(bytes);
  STOWAGE_CUDA(cudaMemsetAsync(from.data(), 1, static_cast<size_t>(bytes), stream));
  const double seconds = seconds_per_call(stream, reps, [&] {
    STOWAGE_CUDA(cudaMemcpyAsync(to.data(), from.data(), static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                                 stream));
  });
  return 2.0 * static_cast<double>(bytes) / seconds;
}

double gemm_rate(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, cudaDataType_t type,
                 cublasComputeType_t compute, cudaStream_t stream, int reps) {
  const int64_t element = type == CUDA_R_32F ? 4 : 2;
  const DeviceMemory a(m * k * element), b(k * n * element), c(m * n * element);
  constexpr int64_t kWorkspace = int64_t{64} << 20;
  const DeviceMemory workspace(kWorkspace);
  for (const DeviceMemory* operand : {&a, &b})
    STOWAGE_CUDA(
        cudaMemsetAsync(operand->data(), kOperandByte, static_cast<size_t>(operand->bytes()), stream));

  cublasLtMatmulDesc_t op_raw = nullptr;
  STOWAGE_CUBLAS(cublasLtMatmulDescCreate(&op_raw, compute, CUDA_R_32F));
  const LtOwner<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy> op(op_raw);
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  STOWAGE_CUBLAS(
      cublasLtMatrixLayoutCreate(&la, type, static_cast<uint64_t>(m), static_cast<uint64_t>(k), m));
  const LtOwner<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> own_a(la);
  STOWAGE_CUBLAS(
      cublasLtMatrixLayoutCreate(&lb, type, static_cast<uint64_t>(k), static_cast<uint64_t>(n), k));
  const LtOwner<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> own_b(lb);
  STOWAGE_CUBLAS(
      cublasLtMatrixLayoutCreate(&lc, type, static_cast<uint64_t>(m), static_cast<uint64_t>(n), m));
  const LtOwner<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy> own_c(lc);
  cublasLtMatmulPreference_t pref_raw = nullptr;
  STOWAGE_CUBLAS(cublasLtMatmulPreferenceCreate(&pref_raw));
  const LtOwner<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy> pref(pref_raw);
  const uint64_t workspace_bytes = kWorkspace;
  STOWAGE_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      &workspace_bytes, sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  STOWAGE_CUBLAS(
      cublasLtMatmulAlgoGetHeuristic(lt, op.get(), la, lb, lc, lc, pref.get(), 1, &heuristic, &found));
  if (found == 0)
    throw CudaError(CudaErrorSource::kCublasLt, 0, "cublasLtMatmulAlgoGetHeuristic", "no GEMM algorithm");
  const float alpha = 1.0f, beta = 0.0f;
  const double seconds = seconds_per_call(stream, reps, [&] {
    STOWAGE_CUBLAS(cublasLtMatmul(lt, op.get(), &alpha, a.data(), la, b.data(), lb, &beta, c.data(), lc,
                                  c.data(), lc, &heuristic.algo, workspace.data(), kWorkspace, stream));
  });
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / seconds;
}

GpuProbeSizes gpu_probe_sizes(bool quick) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  if (quick)
    return {.copy_bytes = {16 * kMiB, 256 * kMiB},
            .hbm_copy_bytes = 1024 * kMiB,
            .gemms = {{4096, 4096, 4096}, {8192, 2048, 8192}},
            .reps = 5};
  // cuda_probe's: square GEMMs for the peak, then a 1.3B model's layers at
  // 2048 tokens (d_model 2048, ffn 8192), the shapes an offloaded step runs.
  return {.copy_bytes = {16 * kMiB, 256 * kMiB, 1024 * kMiB},
          .hbm_copy_bytes = 4096 * kMiB,
          .gemms = {{4096, 4096, 4096},
                    {8192, 8192, 8192},
                    {8192, 2048, 8192},
                    {2048, 2048, 2048},
                    {8192, 2048, 2048},
                    {2048, 2048, 8192}},
          .reps = 10};
}

GpuRates measure_gpu(const GpuProbeSizes& sizes) {
  GpuRates out{.device = device_name(0)};
  const CudaStream stream;
  for (const int64_t bytes : sizes.copy_bytes) {
    const DeviceMemory device(bytes);
    const PinnedBuffer pinned(bytes);
    std::memset(pinned.data(), 1, static_cast<size_t>(bytes));
    out.pinned.push_back({.bytes = bytes,
                          .h2d = copy_rate(stream.get(), pinned.data(), device.data(), bytes,
                                           cudaMemcpyHostToDevice, sizes.reps),
                          .d2h = copy_rate(stream.get(), pinned.data(), device.data(), bytes,
                                           cudaMemcpyDeviceToHost, sizes.reps)});
  }
  out.hbm_copy = hbm_copy_rate(sizes.hbm_copy_bytes, stream.get(), sizes.reps);
  cublasLtHandle_t lt_raw = nullptr;
  STOWAGE_CUBLAS(cublasLtCreate(&lt_raw));
  const LtOwner<cublasLtHandle_t, cublasLtDestroy> lt(lt_raw);
  const cudaDataType_t type = sizes.bf16 ? CUDA_R_16BF : CUDA_R_16F;
  for (const GemmShape& s : sizes.gemms) {
    out.gemms.push_back({.shape = s,
                         .flops_per_s = gemm_rate(lt.get(), s.m, s.n, s.k, type, CUBLAS_COMPUTE_32F,
                                                  stream.get(), sizes.reps)});
  }
  return out;
}

}  // namespace stowage::executor::cuda
