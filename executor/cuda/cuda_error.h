// The one exception the CUDA code throws for what the device or driver did
// wrong (STYLE.md §7: environment failures are typed exceptions, caught once
// in cli/; the backend turns them into diagnostics, cuda_diagnostic.h).
// Its message names the call as written, the CUDA error's name and text,
// and the source line: "cudaMalloc(&base_, bytes) failed: out of memory
// (cudaErrorMemoryAllocation) at executor/cuda/device_memory.cpp:18".
// Every runtime and cuBLASLt call goes through STOWAGE_CUDA / STOWAGE_CUBLAS,
// every kernel launch is followed by check_launch.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <source_location>
#include <stdexcept>
#include <string>

namespace stowage::executor::cuda {

enum class CudaErrorSource : uint8_t { kRuntime, kCublasLt, kLaunch };

class CudaError : public std::runtime_error {
 public:
  CudaError(CudaErrorSource source, int code, std::string call, const std::string& message);

  [[nodiscard]] CudaErrorSource source() const { return source_; }
  // A cudaError_t (kRuntime, kLaunch) or a cublasStatus_t (kCublasLt).
  [[nodiscard]] int code() const { return code_; }
  [[nodiscard]] const std::string& call() const { return call_; }

 private:
  CudaErrorSource source_;
  int code_;
  std::string call_;
};

// "out of memory (cudaErrorMemoryAllocation)".
[[nodiscard]] std::string describe_cuda_error(cudaError_t status);
[[nodiscard]] std::string describe_cublas_status(cublasStatus_t status);

// Throws CudaError naming `call` unless `status` is success.
void check_cuda(cudaError_t status, const char* call,
                std::source_location where = std::source_location::current());
void check_cublas(cublasStatus_t status, const char* call,
                  std::source_location where = std::source_location::current());
// After a kernel launch: cudaGetLastError, naming the kernel. Launch
// failures (bad configuration, no kernel image for this device) show here;
// faults during the run show at the next synchronising call.
void check_launch(const char* kernel, std::source_location where = std::source_location::current());

}  // namespace stowage::executor::cuda

// The call's own text in the message, which is what one searches for.
#define STOWAGE_CUDA(call) ::stowage::executor::cuda::check_cuda((call), #call)
#define STOWAGE_CUBLAS(call) ::stowage::executor::cuda::check_cublas((call), #call)
