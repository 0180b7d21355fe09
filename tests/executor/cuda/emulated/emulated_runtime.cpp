// The CUDA runtime calls the emulated kernels and their owners make,
// served on the host (cuda_emulation.h): one "device" whose memory is host
// memory, copies that are memcpy, and streams whose work runs when the host
// waits for it (emulated_streams.h). Each call does what the runtime
// documents for a valid argument; freeing a pointer that is not a live
// allocation of that kind returns cudaErrorInvalidValue. Every allocation
// ends at an inaccessible page, so that a kernel or copy running past its
// end faults here, where on a GPU it would read a neighbour's bytes (or
// fault only under compute-sanitizer). Only the calls the emulated programs
// make are here: another is a link error, not a silent gap.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "tests/executor/cuda/emulated/emulated_streams.h"

namespace {

namespace emulation = stowage::cuda_emulation;

struct Allocation {
  size_t bytes;
  cudaMemoryType type;
  void* mapping;  // the pages it lies in, the guard page last
  size_t mapped;
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
  // 256-byte aligned and rounded, as cudaMalloc's are; never null, even
  // for zero bytes. The rounded bytes end where the guard page starts: an
  // access past them faults, one into the rounding does not (nor on a GPU).
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t rounded = std::max<size_t>(256, (bytes + 255) / 256 * 256);
  const size_t usable = (rounded + page - 1) / page * page;
  void* mapping = ::mmap(nullptr, usable + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                         -1, 0);
  if (mapping == MAP_FAILED) return cudaErrorMemoryAllocation;
  char* guard = static_cast<char*>(mapping) + usable;
  if (::mprotect(guard, page, PROT_NONE) != 0) {
    ::munmap(mapping, usable + page);
    return cudaErrorMemoryAllocation;
  }
  void* p = guard - rounded;
  // Not the zeros a fresh mapping holds: the runtime promises nothing, and
  // 0xff bytes are NaN in fp32, bf16 and fp16, so a read before a write
  // shows. Up to 64 MiB, so that an arena of gigabytes stays unwritten.
  if (rounded <= (size_t{64} << 20)) std::memset(p, 0xff, rounded);
  const std::scoped_lock lock(allocations_mutex);
  allocations()[p] = {bytes, type, mapping, usable + page};
  *out = p;
  return cudaSuccess;
}

cudaError_t release(void* p, cudaMemoryType type) {
  if (p == nullptr) return cudaSuccess;
  const std::scoped_lock lock(allocations_mutex);
  auto it = allocations().find(p);
  if (it == allocations().end() || it->second.type != type) return cudaErrorInvalidValue;
  ::munmap(it->second.mapping, it->second.mapped);
  allocations().erase(it);
  return cudaSuccess;
}

// The allocation holding p, if any.
const std::pair<const void* const, Allocation>* holding(const void* p) {
  auto it = allocations().upper_bound(p);
  if (it == allocations().begin()) return nullptr;
  --it;
  const auto* first = static_cast<const char*>(it->first);
  return static_cast<const char*>(p) < first + std::max<size_t>(it->second.bytes, 1) ? &*it : nullptr;
}

// Is p host memory the runtime did not allocate (pageable)?
bool pageable(const void* p) {
  const std::scoped_lock lock(allocations_mutex);
  return holding(p) == nullptr;
}

// An event is its latest record: a point in a stream's work, and the host's
// time when the work before it had run.
struct Event {
  std::shared_ptr<emulation::StreamPoint> latest;  // null: never recorded
};
Event& event_of(cudaEvent_t event) {
  return *reinterpret_cast<Event*>(event);
}

}  // namespace

cudaError_t cudaMalloc(void** p, size_t bytes) {
  return allocate(p, bytes, cudaMemoryTypeDevice);
}
// cudaFree and cudaFreeHost wait for the device, as the runtime's do.
cudaError_t cudaFree(void* p) {
  emulation::run_all_streams();
  return release(p, cudaMemoryTypeDevice);
}

// On the legacy default stream, which does not wait for the project's
// (non-blocking) streams.
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind /*kind*/) {
  if (bytes > 0) std::memmove(dst, src, bytes);
  return cudaSuccess;
}

// As the runtime documents (API synchronization behavior): a copy into
// pageable memory is done when the call returns (the stream's work before
// it first); a copy from pageable memory is staged at once (the caller may
// reuse the source) and lands in stream order; between device and pinned
// memory it is the stream's work.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind /*kind*/,
                            cudaStream_t stream) {
  if (bytes == 0) return cudaSuccess;
  if (pageable(dst)) {
    emulation::run_stream(stream);
    std::memmove(dst, src, bytes);
  } else if (pageable(src)) {
    auto staged = std::make_shared<std::vector<std::byte>>(static_cast<const std::byte*>(src),
                                                           static_cast<const std::byte*>(src) + bytes);
    emulation::enqueue(stream, [dst, staged] { std::memcpy(dst, staged->data(), staged->size()); });
  } else {
    emulation::enqueue(stream, [dst, src, bytes] { std::memmove(dst, src, bytes); });
  }
  return cudaSuccess;
}

cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int /*flags*/) {
  return allocate(p, bytes, cudaMemoryTypeHost);
}
cudaError_t cudaFreeHost(void* p) {
  emulation::run_all_streams();
  return release(p, cudaMemoryTypeHost);
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* p) {
  *attributes = cudaPointerAttributes{};
  const std::scoped_lock lock(allocations_mutex);
  const auto* held = holding(p);
  attributes->type = held ? held->second.type : cudaMemoryTypeUnregistered;
  attributes->device = 0;
  if (held) {
    attributes->devicePointer = const_cast<void*>(p);
    if (held->second.type == cudaMemoryTypeHost) attributes->hostPointer = const_cast<void*>(p);
  }
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  *total = size_t{1} << 34;
  size_t used = 0;
  const std::scoped_lock lock(allocations_mutex);
  for (const auto& [p, a] : allocations()) used += a.type == cudaMemoryTypeDevice ? a.bytes : 0;
  *free = *total - std::min(used, *total);
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int /*flags*/) {
  *stream = emulation::create_stream();
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  emulation::destroy_stream(stream);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  emulation::run_stream(stream);
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int /*flags*/) {
  // The record as it is now: a later one does not change what is waited for.
  if (std::shared_ptr<emulation::StreamPoint> point = event_of(event).latest) {
    if (stream == nullptr) {
      emulation::run_until(point);
    } else {
      emulation::wait_for(stream, std::move(point));
    }
  }
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int /*flags*/) {
  *event = reinterpret_cast<cudaEvent_t>(new Event);
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  delete &event_of(event);  // a wait enqueued on it keeps its point
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  event_of(event).latest = emulation::mark(stream);
  return cudaSuccess;
}
// Not ready until the host has waited for the work before it (this device
// runs nothing unbidden).
cudaError_t cudaEventQuery(cudaEvent_t event) {
  const auto& point = event_of(event).latest;
  return point == nullptr || point->reached ? cudaSuccess : cudaErrorNotReady;
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  if (const auto& point = event_of(event).latest) emulation::run_until(point);
  return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  const auto& a = event_of(start).latest;
  const auto& b = event_of(end).latest;
  if (a == nullptr || b == nullptr) return cudaErrorInvalidResourceHandle;
  if (!a->reached || !b->reached) return cudaErrorNotReady;
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* dst, int value, size_t bytes, cudaStream_t stream) {
  if (bytes > 0) emulation::enqueue(stream, [dst, value, bytes] { std::memset(dst, value, bytes); });
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() {
  emulation::run_all_streams();
  return cudaSuccess;
}
cudaError_t cudaGetLastError() {
  return cudaSuccess;
}

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
    case cudaSuccess:
      return "cudaSuccess";
    case cudaErrorInvalidValue:
      return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation:
      return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice:
      return "cudaErrorInvalidDevice";
    case cudaErrorNotReady:
      return "cudaErrorNotReady";
    default:
      return "cudaError (emulated)";
  }
}
const char* cudaGetErrorString(cudaError_t error) {
  return cudaGetErrorName(error);
}

const char* cublasLtGetStatusName(cublasStatus_t status) {
  return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS (emulated)";
}
const char* cublasLtGetStatusString(cublasStatus_t status) {
  return cublasLtGetStatusName(status);
}
