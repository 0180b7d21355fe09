// The CUDA runtime calls the emulated kernels and their owners make,
// served on the host (cuda_emulation.h): one "device" whose memory is host
// memory, copies that are memcpy, and work that has finished when it is
// enqueued. Each call does what the runtime documents for a valid
// argument; the few errors the owners rely on are returned as the runtime
// would (an unknown pointer freed, a zero-size allocation).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace {

struct Allocation {
  size_t bytes;
  cudaMemoryType type;
};

// Every live allocation, by its first byte: what cudaPointerGetAttributes
// answers and what a free must name.
std::mutex allocations_mutex;
std::map<const void*, Allocation>& allocations() {
  static std::map<const void*, Allocation> all;
  return all;
}

cudaError_t allocate(void** out, size_t bytes, cudaMemoryType type) {
  if (out == nullptr) return cudaErrorInvalidValue;
  // 256-byte aligned, as cudaMalloc's are; never null for zero bytes.
  void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  if (p == nullptr) return cudaErrorMemoryAllocation;
  const std::scoped_lock lock(allocations_mutex);
  allocations()[p] = {bytes, type};
  *out = p;
  return cudaSuccess;
}

cudaError_t release(void* p, cudaMemoryType type) {
  if (p == nullptr) return cudaSuccess;
  const std::scoped_lock lock(allocations_mutex);
  auto it = allocations().find(p);
  if (it == allocations().end() || it->second.type != type) return cudaErrorInvalidValue;
  allocations().erase(it);
  std::free(p);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMalloc(void** p, size_t bytes) { return allocate(p, bytes, cudaMemoryTypeDevice); }
cudaError_t cudaFree(void* p) { return release(p, cudaMemoryTypeDevice); }

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind /*kind*/) {
  if (bytes > 0) std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t /*stream*/) {
  if (bytes > 0) std::memset(dst, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaGetLastError() { return cudaSuccess; }

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (device != 0) return cudaErrorInvalidDevice;
  *prop = cudaDeviceProp{};
  std::strncpy(prop->name, "CUDA emulated on the host", sizeof(prop->name) - 1);
  prop->major = 9;
  prop->minor = 0;
  prop->totalGlobalMem = size_t{1} << 34;
  prop->multiProcessorCount = 1;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}
cudaError_t cudaRuntimeGetVersion(int* version) {
  *version = CUDART_VERSION;
  return cudaSuccess;
}

const char* cudaGetErrorName(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    default: return "cudaError (emulated)";
  }
}
const char* cudaGetErrorString(cudaError_t error) { return cudaGetErrorName(error); }

const char* cublasLtGetStatusName(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS (emulated)";
}
const char* cublasLtGetStatusString(cublasStatus_t status) { return cublasLtGetStatusName(status); }
