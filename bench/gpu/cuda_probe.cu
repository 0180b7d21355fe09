// cuda_probe: what bench/gpu/check.sh measures of a GPU machine, as
// tables: host<->device bandwidth by size, pinned (cudaHostAlloc) and
// pageable (malloc), each direction; the bf16 GEMM rate through cuBLASLt
// (fp32 accumulation), and the CUDA backend's own products (fp32 operands
// under each --products) as shares of it; the HBM copy
// rate; and the Adam kernel's rate as a share of that copy, measured in the
// same run. The numbers are the H200 profile's to check: profiles/gpus, the
// PCIe lanes' calibration (bench/gpu/probe_calibration.py turns them into
// a machine profile's calibration section). Depends on cudart (static) and
// cuBLASLt only, so it runs on a machine with nothing but the driver and
// the toolkit.
//
// Exit status: 0 measured; 77 no CUDA device (the reason on stderr);
// 1 a CUDA call failed (named on stderr).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <type_traits>
#include <vector>

#include "executor/cuda/adam_kernel.h"
#include "executor/cuda/cuda_device.h"
#include "executor/cuda/cuda_error.h"
#include "executor/cuda/cuda_event.h"
#include "executor/cuda/device_memory.h"
#include "executor/cuda/pinned_buffer.h"
#include "executor/cuda/product_precision.h"

namespace stowage::executor::cuda {
namespace {

constexpr int kExitNoDevice = 77;

// Seconds per call of `body` (enqueued on `stream`): the mean
// of `reps` calls after one warm-up.
template <class Body>
double seconds_per_call(cudaStream_t stream, int reps, Body body) {
  body();
  CudaEvent start(EventTiming::kTimed);
  CudaEvent end(EventTiming::kTimed);
  start.record(stream);
  for (int i = 0; i < reps; ++i) body();
  end.record(stream);
  end.synchronize();
  return static_cast<double>(elapsed_ms(start, end)) / 1e3 / reps;
}

void print_bandwidth(cudaStream_t stream) {
  std::printf("%-10s %-9s %12s %12s\n", "size", "host", "h2d GB/s", "d2h GB/s");
  constexpr int64_t kSizes[] = {int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20, int64_t{256} << 20,
                                int64_t{1} << 30};
  for (const int64_t bytes : kSizes) {
    DeviceMemory device(bytes);
    PinnedBuffer pinned(bytes);
    std::unique_ptr<std::byte[]> pageable(new std::byte[static_cast<size_t>(bytes)]);
    std::memset(pageable.get(), 1, static_cast<size_t>(bytes));  // touch: no page faults in the timing
    std::memset(pinned.data(), 1, static_cast<size_t>(bytes));
    const int reps = bytes >= (int64_t{256} << 20) ? 5 : 20;
    for (std::byte* host : {pinned.data(), pageable.get()}) {
      const auto h2d = [&] {
        STOWAGE_CUDA(
            cudaMemcpyAsync(device.data(), host, static_cast<size_t>(bytes), cudaMemcpyHostToDevice, stream));
      };
      const auto d2h = [&] {
        STOWAGE_CUDA(
            cudaMemcpyAsync(host, device.data(), static_cast<size_t>(bytes), cudaMemcpyDeviceToHost, stream));
      };
      const double up = static_cast<double>(bytes) / seconds_per_call(stream, reps, h2d) / 1e9;
      const double down = static_cast<double>(bytes) / seconds_per_call(stream, reps, d2h) / 1e9;
      std::printf("%-10lld %-9s %12.2f %12.2f\n", static_cast<long long>(bytes >> 10),
                  host == pinned.data() ? "pinned" : "pageable", up, down);
    }
  }
  std::printf("(size in KiB)\n\n");
}

// x[i] = value for every i, as T (float or __nv_bfloat16).
template <class T>
__global__ void fill(T* x, int64_t n, float value) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    x[i] = T(value);
}

// Device-to-device copy of `bytes`: GB/s counting what is read and what is
// written (2 x bytes a copy), the way a streaming kernel's traffic counts.
double hbm_copy_rate(int64_t bytes, cudaStream_t stream) {
  DeviceMemory from(bytes), to(bytes);
  STOWAGE_CUDA(cudaMemsetAsync(from.data(), 1, static_cast<size_t>(bytes), stream));
  const double seconds = seconds_per_call(stream, 10, [&] {
    STOWAGE_CUDA(cudaMemcpyAsync(to.data(), from.data(), static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice,
                                 stream));
  });
  return 2.0 * static_cast<double>(bytes) / seconds / 1e9;
}

// One Adam step over n parameters, on buffers the probe fills with
// plausible values (gradients of 1/1024, moments at rest); params/s.
template <class Moment>
double adam_rate(int64_t n, cudaStream_t stream) {
  DeviceMemory master(n * 4), m(n * static_cast<int64_t>(sizeof(Moment))),
      v(n * static_cast<int64_t>(sizeof(Moment))), grad(n * 2), param16(n * 2);
  STOWAGE_CUDA(cudaMemsetAsync(master.data(), 0, static_cast<size_t>(n * 4), stream));
  STOWAGE_CUDA(cudaMemsetAsync(m.data(), 0, static_cast<size_t>(m.bytes()), stream));
  STOWAGE_CUDA(cudaMemsetAsync(v.data(), 0, static_cast<size_t>(v.bytes()), stream));
  fill<<<1024, 256, 0, stream>>>(reinterpret_cast<__nv_bfloat16*>(grad.data()), n, 1.0f / 1024);
  check_launch("fill");
  const AdamPartitionOf<Moment> partition{.master = reinterpret_cast<float*>(master.data()),
                                          .m = reinterpret_cast<Moment*>(m.data()),
                                          .v = reinterpret_cast<Moment*>(v.data()),
                                          .grad16 = reinterpret_cast<const uint16_t*>(grad.data()),
                                          .param16 = reinterpret_cast<uint16_t*>(param16.data()),
                                          .n = n};
  const core::AdamConfig config{
      .learning_rate = 1e-4, .beta1 = 0.9, .beta2 = 0.95, .eps = 1e-8, .weight_decay = 0.1};
  int64_t step = 0;
  const double seconds = seconds_per_call(stream, 10, [&] {
    launch_adam(partition, adam_step_constants(config, ++step, 1.0f), core::OptimizerKind::kAdamW,
                core::Precision::kBf16, stream);
  });
  return static_cast<double>(n) / seconds;
}

// The Adam kernel against the HBM copy measured here, moving the same
// bytes: the share of the streaming rate the kernel reaches.
void print_hbm_and_adam(cudaStream_t stream) {
  constexpr int64_t kCopyBytes = int64_t{4} << 30;
  const double copy = hbm_copy_rate(kCopyBytes, stream);
  std::printf("HBM copy (device to device, %lld MiB, read + written): %.0f GB/s\n\n",
              static_cast<long long>(kCopyBytes >> 20), copy);
  std::printf("%-22s %10s %8s %10s %14s\n", "Adam kernel (AdamW)", "params", "B/param", "Gparams/s",
              "of HBM copy");
  constexpr int64_t kParams = int64_t{256} << 20;
  const auto row = [&](const char* name, double rate, int64_t bytes_per_param) {
    std::printf("%-22s %9lldM %8lld %10.2f %14.3f\n", name, static_cast<long long>(kParams >> 20),
                static_cast<long long>(bytes_per_param), rate / 1e9,
                rate * static_cast<double>(bytes_per_param) / 1e9 / copy);
  };
  row("fp32 moments", adam_rate<float>(kParams, stream), kAdamKernelBytesPerParam<float>);
  row("bf16 moments", adam_rate<uint16_t>(kParams, stream), kAdamKernelBytesPerParam<uint16_t>);
  std::printf("\n");
}

template <class T, cublasStatus_t (*kDestroy)(T)>
struct LtDeleter {
  void operator()(T handle) const { (void)kDestroy(handle); }
};
template <class T, cublasStatus_t (*kDestroy)(T)>
using LtOwner = std::unique_ptr<std::remove_pointer_t<T>, LtDeleter<T, kDestroy>>;

// C[m,n] = A[m,k] B[k,n] with A, B and C of `type` (bf16 or fp32), fp32
// accumulation under `compute`; returns TFLOP/s.
double gemm_rate(cublasLtHandle_t lt, int64_t m, int64_t n, int64_t k, cudaDataType_t type,
                 cublasComputeType_t compute, cudaStream_t stream) {
  const int64_t element = type == CUDA_R_16BF ? 2 : 4;
  DeviceMemory a(m * k * element), b(k * n * element), c(m * n * element);
  constexpr int64_t kWorkspace = int64_t{64} << 20;
  DeviceMemory workspace(kWorkspace);
  for (DeviceMemory* operand : {&a, &b}) {
    const int64_t elements = operand->bytes() / element;
    if (type == CUDA_R_16BF) {
      fill<<<1024, 256, 0, stream>>>(reinterpret_cast<__nv_bfloat16*>(operand->data()), elements, 0.01f);
    } else {
      fill<<<1024, 256, 0, stream>>>(reinterpret_cast<float*>(operand->data()), elements, 0.01f);
    }
    check_launch("fill");
  }

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
  const double seconds = seconds_per_call(stream, 10, [&] {
    STOWAGE_CUBLAS(cublasLtMatmul(lt, op.get(), &alpha, a.data(), la, b.data(), lb, &beta, c.data(), lc,
                                  c.data(), lc, &heuristic.algo, workspace.data(), kWorkspace, stream));
  });
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / seconds / 1e12;
}

// Square ones for the peak; then a 1.3B model's layers at 2048 tokens
// (d_model 2048, ffn 8192), the shapes an offloaded step of it runs.
constexpr int64_t kGemmShapes[][3] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {8192, 2048, 8192},
                                      {2048, 2048, 2048}, {8192, 2048, 2048}, {2048, 2048, 8192}};

void print_gemm(cublasLtHandle_t lt, cudaStream_t stream) {
  std::printf("%-22s %12s\n", "bf16 GEMM m x n x k", "TFLOP/s");
  for (const auto& s : kGemmShapes) {
    const double rate = gemm_rate(lt, s[0], s[1], s[2], CUDA_R_16BF, CUBLAS_COMPUTE_32F, stream);
    std::printf("%5lld x %5lld x %5lld  %12.1f\n", static_cast<long long>(s[0]), static_cast<long long>(s[1]),
                static_cast<long long>(s[2]), rate);
  }
  std::printf("\n");
}

// The executor's products (row_major_gemm.h): fp32 operands, rounded on
// the tensor cores for --products bf16 and fp16, or multiplied in fp32,
// each as a share of the bf16 GEMM above on the same shape, the rate the
// simulator prices. Rows start with a word, so that parsers of the table
// above (torch_peer.py) do not read them as bf16 GEMMs.
void print_executor_products(cublasLtHandle_t lt, cudaStream_t stream) {
  std::printf(
      "the executor's products on fp32 operands (--products), TFLOP/s and share of the bf16 GEMM's\n");
  std::printf("%-28s %16s %16s %16s\n", "m x n x k", "bf16", "fp16", "fp32");
  for (const auto& s : kGemmShapes) {
    const double native = gemm_rate(lt, s[0], s[1], s[2], CUDA_R_16BF, CUBLAS_COMPUTE_32F, stream);
    std::printf("products %5lld x %5lld x %5lld", static_cast<long long>(s[0]), static_cast<long long>(s[1]),
                static_cast<long long>(s[2]));
    for (const ProductPrecision p :
         {ProductPrecision::kBf16, ProductPrecision::kFp16, ProductPrecision::kFp32}) {
      const double rate = gemm_rate(lt, s[0], s[1], s[2], CUDA_R_32F, product_compute_type(p), stream);
      std::printf(" %8.1f (%4.2f)", rate, rate / native);
    }
    std::printf("\n");
  }
}

int run() {
  const CudaPresence presence = cuda_presence();
  if (!presence.present()) {
    std::fprintf(stderr, "no CUDA device: %s\n", presence.absent_because.c_str());
    return kExitNoDevice;
  }
  std::printf("device 0: %s\n\n", describe_device(0).c_str());
  cudaStream_t stream = nullptr;
  STOWAGE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  print_bandwidth(stream);
  print_hbm_and_adam(stream);
  cublasLtHandle_t lt_raw = nullptr;
  STOWAGE_CUBLAS(cublasLtCreate(&lt_raw));
  {
    const LtOwner<cublasLtHandle_t, cublasLtDestroy> lt(lt_raw);
    print_gemm(lt.get(), stream);
    print_executor_products(lt.get(), stream);
  }
  STOWAGE_CUDA(cudaStreamDestroy(stream));
  return 0;
}

}  // namespace
}  // namespace stowage::executor::cuda

int main() {
  try {
    return stowage::executor::cuda::run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cuda_probe: %s\n", e.what());
    return 1;
  }
}
