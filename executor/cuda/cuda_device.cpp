// cuda_presence, describe_device and device_name.
#include "executor/cuda/cuda_device.h"

#include <cuda_runtime_api.h>

#include <cstdio>

#include "executor/cuda/cuda_error.h"

namespace stowage::executor::cuda {

CudaPresence cuda_presence() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky copy of the error
    return {.devices = 0, .absent_because = "cudaGetDeviceCount: " + describe_cuda_error(status)};
  }
  if (count <= 0) return {.devices = 0, .absent_because = "cudaGetDeviceCount found no device"};
  return {.devices = count};
}

namespace {
std::string version_text(int version) {  // 13000 -> "13.0"
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}
}  // namespace

std::string device_name(int index) {
  cudaDeviceProp prop{};
  STOWAGE_CUDA(cudaGetDeviceProperties(&prop, index));
  return prop.name;
}

std::string describe_device(int index) {
  cudaDeviceProp prop{};
  STOWAGE_CUDA(cudaGetDeviceProperties(&prop, index));
  int driver = 0;
  int runtime = 0;
  STOWAGE_CUDA(cudaDriverGetVersion(&driver));
  STOWAGE_CUDA(cudaRuntimeGetVersion(&runtime));
  char gib[32];
  std::snprintf(gib, sizeof gib, "%.1f GiB",
                static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024 * 1024));
  return std::string(prop.name) + ", sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
         gib + ", driver " + version_text(driver) + ", runtime " + version_text(runtime);
}

}  // namespace stowage::executor::cuda
