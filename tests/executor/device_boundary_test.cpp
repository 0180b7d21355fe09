// The executor never touches device memory (issue 15, the seam): only the
// backend dereferences a device buffer. The executor's tests all run on a
// CPU backend whose device pointers are not host addresses
// (opaque_device_memory, tiny_gpt_fixture.h), so any such access would
// fault there. A compute op's layer code (the model's sequence of
// primitives) gets the device buffers too and reaches them only through
// the layer kernels the backend installs (model/layer_kernels.h), as a GPU
// backend's would run on device memory. This file shows the boundary is
// real (a dereference outside the backend, or in a layer's own code, dies)
// and that it changes nothing in the math.
#include <gtest/gtest.h>

#include "executor/cpu_backend.h"
#include "executor/model/kernel_scratch.h"
#include "executor/model/layer_kernels.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

using namespace testing;

std::unique_ptr<CpuBackend> plain_backend(const std::string& name) {
  CpuBackendOptions o{.lock_host_memory = false};
  o.nvme = BlockStoreOptions{.directories = {scratch(name) / "nvme"},
                             .block_bytes = core::Bytes(64 << 10),
                             .queue_depth = 4,
                             .allow_buffered = true};
  auto b = CpuBackend::create(std::move(o));
  EXPECT_TRUE(b);
  return std::move(*b);
}

TEST(DeviceBoundaryDeathTest, ReadingADeviceBufferOutsideTheBackendFaults) {
  auto b = backend("opaque-death");
  auto device = b->allocate(core::Tier::kGpu, 64, "device");
  ASSERT_TRUE(device);
  auto host = b->allocate(core::Tier::kCpu, 64, "host");
  ASSERT_TRUE(host);
  // Through the backend both work.
  ASSERT_TRUE(b->zero(core::Lane::kGpuCompute, *device));
  ASSERT_TRUE(b->copy(core::Lane::kPcieD2h, *host, 0, *device, 0, 64));
  EXPECT_EQ(host->as<const std::byte>()[7], std::byte{0});
  // Outside it, the device pointer is not an address.
  EXPECT_DEATH({ [[maybe_unused]] volatile std::byte x = device->as<const std::byte>()[7]; }, "");
  b->release(*device);
  b->release(*host);
}

// A compute op's layer runs over its device buffers through the backend's
// kernels: filling and copying through them works, temporaries included,
// and reading the workspace in the layer's own code faults.
TEST(DeviceBoundaryDeathTest, ALayerReachesItsWorkspaceOnlyThroughTheBackendsKernels) {
  auto b = backend("opaque-layer");
  auto params = b->allocate(core::Tier::kGpu, 4 * 64, "params");
  auto scratch = b->allocate(core::Tier::kGpu, 4 * 64, "scratch");
  auto host = b->allocate(core::Tier::kCpu, 4 * 64, "host");
  ASSERT_TRUE(params && scratch && host);
  ASSERT_TRUE(b->compute(core::Lane::kGpuCompute, "through the kernels", {.params32 = &*params, .scratch = &*scratch},
                         [](const LayerWorkspace& w) {
                           const model::ScratchRegion region(w.scratch);
                           model::LayerKernels& k = model::layer_kernels();
                           model::Temporary t(64);  // zeroed by the kernels
                           k.fill(w.params32.data(), 2.5f, 64);
                           k.add_into(w.params32.data(), t.data(), 64);
                         }));
  ASSERT_TRUE(b->copy(core::Lane::kPcieD2h, *host, 0, *params, 0, 4 * 64));
  EXPECT_EQ(host->as<const float>()[63], 2.5f);
  EXPECT_DEATH(
      {
        (void)b->compute(core::Lane::kGpuCompute, "in its own code", {.params32 = &*params},
                         [](const LayerWorkspace& w) { [[maybe_unused]] volatile float x = w.params32[7]; });
      },
      "");
  b->release(*params);
  b->release(*scratch);
  b->release(*host);
}

// The same run on a backend with ordinary device pointers gives the same
// losses: the boundary moves no arithmetic.
TEST(DeviceBoundary, OpaqueDevicePointersChangeNoLoss) {
  for (const core::PartitionPolicy where : {kAllDevice, kCpuOffload, kNvmeOffload}) {
    const core::PlanFile plan = plan_where(where);
    auto plain = plain_backend("plain-" + std::to_string(static_cast<int>(where.optimizer_states)));
    auto opaque = backend("opaque-" + std::to_string(static_cast<int>(where.optimizer_states)));
    auto a = train_plan(plan, *plain, {.steps = 3, .seed = 7});
    auto b = train_plan(plan, *opaque, {.steps = 3, .seed = 7});
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->losses, b->losses);
  }
}

}  // namespace
}  // namespace stowage::executor
