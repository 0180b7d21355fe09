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
#include "executor/cuda/device_probe.h"
#include "executor/cuda/lt_owner.h"
#include "executor/cuda/pinned_buffer.h"
#include "executor/cuda/product_precision.h"

namespace stowage::executor::cuda {
namespace {

constexpr int kExitNoDevice = 77;

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
      const double up = copy_rate(stream, host, device.data(), bytes, cudaMemcpyHostToDevice, reps) / 1e9;
      const double down = copy_rate(stream, host, device.data(), bytes, cudaMemcpyDeviceToHost, reps) / 1e9;
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
  const double copy = hbm_copy_rate(kCopyBytes, stream) / 1e9;
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

// TFLOP/s of device_probe.h's GEMM of shape `s`.
double tflops(cublasLtHandle_t lt, const GemmShape& s, cudaDataType_t type, cublasComputeType_t compute,
              cudaStream_t stream) {
  return gemm_rate(lt, s.m, s.n, s.k, type, compute, stream) / 1e12;
}

// The shapes `stowage profile --gpu auto` measures without --quick.
const std::vector<GemmShape> kGemmShapes = gpu_probe_sizes(false).gemms;

void print_gemm(cublasLtHandle_t lt, cudaStream_t stream) {
  std::printf("%-22s %12s\n", "bf16 GEMM m x n x k", "TFLOP/s");
  for (const GemmShape& s : kGemmShapes) {
    const double rate = tflops(lt, s, CUDA_R_16BF, CUBLAS_COMPUTE_32F, stream);
    std::printf("%5lld x %5lld x %5lld  %12.1f\n", static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), rate);
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
  for (const GemmShape& s : kGemmShapes) {
    const double native = tflops(lt, s, CUDA_R_16BF, CUBLAS_COMPUTE_32F, stream);
    std::printf("products %5lld x %5lld x %5lld", static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k));
    for (const ProductPrecision p :
         {ProductPrecision::kBf16, ProductPrecision::kFp16, ProductPrecision::kFp32}) {
      const double rate = tflops(lt, s, CUDA_R_32F, product_compute_type(p), stream);
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
