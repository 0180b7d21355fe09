// CudaError and the checked-call helpers.
#include "executor/cuda/cuda_error.h"

#include <string_view>
#include <utility>

namespace stowage::executor::cuda {
namespace {

// The path from the repository root: __FILE__ is absolute in CMake builds.
std::string_view short_path(const char* file) {
  const std::string_view path(file);
  const size_t at = path.rfind("executor/");
  return at == std::string_view::npos ? path : path.substr(at);
}

[[noreturn]] void fail(CudaErrorSource source, int code, const char* call, const std::string& what,
                       std::source_location where) {
  std::string message = std::string(call) + " failed: " + what + " at " +
                        std::string(short_path(where.file_name())) + ":" + std::to_string(where.line());
  throw CudaError(source, code, call, message);
}

}  // namespace

CudaError::CudaError(CudaErrorSource source, int code, std::string call, const std::string& message)
    : std::runtime_error(message), source_(source), code_(code), call_(std::move(call)) {}

std::string describe_cuda_error(cudaError_t status) {
  return std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")";
}

std::string describe_cublas_status(cublasStatus_t status) {
  return std::string(cublasLtGetStatusString(status)) + " (" + cublasLtGetStatusName(status) + ")";
}

void check_cuda(cudaError_t status, const char* call, std::source_location where) {
  if (status != cudaSuccess)
    fail(CudaErrorSource::kRuntime, static_cast<int>(status), call, describe_cuda_error(status), where);
}

void check_cublas(cublasStatus_t status, const char* call, std::source_location where) {
  if (status != CUBLAS_STATUS_SUCCESS)
    fail(CudaErrorSource::kCublasLt, static_cast<int>(status), call, describe_cublas_status(status), where);
}

void check_launch(const char* kernel, std::source_location where) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    const std::string call = std::string("launch of ") + kernel;
    fail(CudaErrorSource::kLaunch, static_cast<int>(status), call.c_str(), describe_cuda_error(status),
         where);
  }
}

}  // namespace stowage::executor::cuda
