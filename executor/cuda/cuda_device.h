// Whether this process can use a CUDA device, and why not: GPU tests skip
// with the reason ("no CUDA device: CUDA driver version is insufficient ...
// (cudaErrorInsufficientDriver)") and the backend reports it instead of
// failing deep inside its first allocation.
#pragma once

#include <string>

namespace stowage::executor::cuda {

struct CudaPresence {
  int devices = 0;
  std::string absent_because;  // empty when devices > 0
  [[nodiscard]] bool present() const { return devices > 0; }
};

// cudaGetDeviceCount; an error (no driver, no device, a driver older than
// the runtime) counts as no device, with the error as the reason. Never throws.
[[nodiscard]] CudaPresence cuda_presence();

// "NVIDIA H200, sm_90, 139.8 GiB, driver 13.0, runtime 13.0" for device `index`;
// throws CudaError.
[[nodiscard]] std::string describe_device(int index);

// The driver's name of device `index` ("NVIDIA H200"), which GPU profiles
// list as device_names; throws CudaError.
[[nodiscard]] std::string device_name(int index);

}  // namespace stowage::executor::cuda
