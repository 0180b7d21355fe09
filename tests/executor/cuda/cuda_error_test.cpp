// The checked calls and the presence check. These run without a device too:
// naming a failed call needs only the runtime's error strings.
#include "executor/cuda/cuda_error.h"

#include <gtest/gtest.h>

#include "executor/cuda/cuda_device.h"
#include "executor/cuda/pinned_buffer.h"
#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

TEST(CudaError, NamesTheCallTheErrorAndTheLine) {
  try {
    STOWAGE_CUDA(cudaErrorMemoryAllocation);
    FAIL() << "no CudaError";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.source(), CudaErrorSource::kRuntime);
    EXPECT_EQ(e.code(), static_cast<int>(cudaErrorMemoryAllocation));
    EXPECT_EQ(e.call(), "cudaErrorMemoryAllocation");
    const std::string what = e.what();
    EXPECT_NE(what.find("failed: out of memory (cudaErrorMemoryAllocation)"), std::string::npos) << what;
    EXPECT_NE(what.find("cuda_error_test.cpp:"), std::string::npos) << what;
  }
}

TEST(CudaError, SuccessPassesQuietly) {
  EXPECT_NO_THROW(STOWAGE_CUDA(cudaSuccess));
  EXPECT_NO_THROW(STOWAGE_CUBLAS(CUBLAS_STATUS_SUCCESS));
}

TEST(CudaError, NamesACublasLtStatus) {
  try {
    STOWAGE_CUBLAS(CUBLAS_STATUS_NOT_SUPPORTED);
    FAIL() << "no CudaError";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.source(), CudaErrorSource::kCublasLt);
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos) << e.what();
  }
}

TEST(CudaPresence, GivesAReasonExactlyWhenThereIsNoDevice) {
  const CudaPresence presence = cuda_presence();
  EXPECT_EQ(presence.present(), presence.devices > 0);
  EXPECT_EQ(presence.absent_because.empty(), presence.present()) << presence.absent_because;
  if (presence.present()) {
    EXPECT_FALSE(describe_device(0).empty());
  }
}

TEST(PinnedBuffer, WithoutADeviceFailsNamingCudaHostAlloc) {
  if (cuda_presence().present())
    GTEST_SKIP() << "a CUDA device is present: this checks the failure without one";
  try {
    PinnedBuffer buffer(4096);
    FAIL() << "cudaHostAlloc succeeded without a device";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("cudaHostAlloc("), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace stowage::executor::cuda
