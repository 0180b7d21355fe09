// The CUDA backend trains the tiny GPT under every placement (device, CPU
// and NVMe states, a three-tier mix, parameters on NVMe), in bf16 and
// fp16, with and without gradient accumulation and activation
// checkpointing. With the layers on host mirrors (LayersOn::kHostMirrors,
// the CPU's layer kernels) its losses are the CPU backend's bit for bit:
// the element-wise kernels and the device Adam give the CPU twins' bits,
// so any difference is a byte the backend moved wrongly or a gradient it
// lost. With the layers on the device (cuBLASLt and CUDA kernels, the
// default) they are the CPU's to within the layer kernels' rounding
// (cuda_layer_kernels_test.cpp): each loss within 1e-3 of the CPU's,
// relative, over 3 steps (a gradient's fp32 difference of ~1e-6 may move
// a bf16 parameter by one ulp, 2^-8, which moves the loss far less). The
// device pointers are real device addresses, so a run finishing also
// shows that neither the interpreter nor the layers' own code dereference
// device memory. Runs where a GPU is present (label gpu); without one,
// only the refusal is checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "executor/cuda/cuda_backend.h"
#include "executor/cuda/cuda_device.h"
#include "executor/cuda/product_precision.h"
#include "tests/core/memory_by_class_check.h"
#include "tests/executor/stream_order_checker.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor::cuda {
namespace {

using namespace executor::testing;

#define STOWAGE_REQUIRE_CUDA_DEVICE()                                                       \
  do {                                                                                      \
    const CudaPresence presence_ = cuda_presence();                                         \
    if (!presence_.present()) GTEST_SKIP() << "no CUDA device: " << presence_.absent_because; \
  } while (0)

std::unique_ptr<CudaBackend> cuda_backend(const std::string& name, int64_t device_cap = int64_t{1} << 30,
                                          LayersOn layers = LayersOn::kHostMirrors, bool enqueue_only = false,
                                          ProductPrecision products = ProductPrecision::kFp32) {
  CudaBackendOptions o{.layers = layers, .products = products, .enqueue_only = enqueue_only};
  o.capacity[0] = device_cap;
  o.nvme = BlockStoreOptions{.directories = {scratch(name) / "nvme"},
                             .block_bytes = core::Bytes(64 << 10),
                             .queue_depth = 4,
                             .allow_buffered = true};
  auto b = CudaBackend::create(std::move(o));
  EXPECT_TRUE(b) << (b ? "" : core::to_string(b.error()));
  return b ? std::move(*b) : nullptr;
}

struct Case {
  std::string placement;
  core::PlanFile plan;
  core::Precision precision = core::Precision::kBf16;
};

std::vector<Case> cases() {
  const std::vector<std::pair<std::string, core::PlanFile>> placements = {
      {"all-device", plan_where(kAllDevice)},
      {"optimizer-cpu", plan_where(kCpuOffload)},
      {"optimizer-nvme", plan_where(kNvmeOffload)},
      {"params-nvme", plan_where(kParamsOnNvme)},
      {"mixed-three-tier", three_tier_mix()}};
  std::vector<Case> out;
  for (core::Precision precision : {core::Precision::kBf16, core::Precision::kFp16}) {
    for (int64_t accumulation : {1, 3}) {
      for (const auto& [name, plan] : placements) {
        Case c{.placement = name, .plan = plan, .precision = precision};
        c.plan.policy.gradient_accumulation = accumulation;
        c.plan.policy.activation_checkpointing = accumulation > 1;
        c.plan.policy.delayed_update = name == "optimizer-cpu" && accumulation == 1;
        c.placement += std::string(precision == core::Precision::kBf16 ? " bf16" : " fp16") + " accum" +
                       std::to_string(accumulation);
        out.push_back(std::move(c));
      }
    }
  }
  return out;
}

// The cases the tests with the layers on the device train. Under the host
// emulation of CUDA (tests/executor/cuda/emulated), where every barrier of
// a row kernel costs a fiber switch for each of a block's threads, every
// sixth: four placements, both precisions, both accumulations (20 cases
// took 105 s there, these about a fifth of it); the emulated
// TrainsWithTheCpuBackendsLossesUnderEveryPlacement still runs all 20.
std::vector<Case> device_layer_cases() {
  std::vector<Case> all = cases();
#if defined(STOWAGE_CUDA_EMULATED)
  std::vector<Case> some;
  for (size_t i = 0; i < all.size(); i += 6) some.push_back(std::move(all[i]));
  return some;
#else
  return all;
#endif
}

core::Result<TrainingRun> run_on(Backend& b, const Case& c) {
  const Fixture& f = fixture();
  core::TrainingSpec training = f.training;
  training.precision = c.precision;
  training.loss_scaling.window = 2;  // fp16: the scale moves within the run
  return train(c.plan, f.machine, f.model, training, b,
               {.steps = 3, .seed = 7, .watchdog = std::chrono::seconds(60)});
}

// The same case on the CPU backend and the CUDA backend: their losses (the
// same bits with the layers on host mirrors, within 1e-3 relative with
// them on the device), and every op of the CUDA run having run.
void expect_the_cpu_backends_losses(const Case& c, const std::string& tag,
                                    LayersOn layers = LayersOn::kHostMirrors) {
  SCOPED_TRACE(c.placement);
  auto cpu = backend(tag + "-cpu");
  auto gpu = cuda_backend(tag + "-cuda", int64_t{1} << 30, layers);
  ASSERT_NE(gpu, nullptr);
  auto expected = run_on(*cpu, c);
  auto got = run_on(*gpu, c);
  ASSERT_TRUE(expected) << core::to_string(expected.error());
  ASSERT_TRUE(got) << core::to_string(got.error());
  ASSERT_EQ(got->losses.size(), expected->losses.size());
  double worst = 0;
  for (size_t i = 0; i < got->losses.size(); ++i) {
    const double relative = std::fabs(got->losses[i] - expected->losses[i]) / std::fabs(expected->losses[i]);
    worst = std::max(worst, relative);
    if (layers == LayersOn::kHostMirrors) {
      EXPECT_EQ(got->losses[i], expected->losses[i]) << "step " << i + 1;
    } else {
      EXPECT_LE(relative, 1e-3) << "step " << i + 1 << ": " << got->losses[i] << " against " << expected->losses[i];
    }
  }
  for (const core::Op& op : got->schedule.ops) EXPECT_GT(got->timeline.spans[static_cast<size_t>(op.id)].end, 0);
  std::printf("| %s | %s | %.6f | %.6f | %s |\n", c.placement.c_str(),
              layers == LayersOn::kDevice ? "device" : "host mirrors", got->losses.back(), expected->losses.back(),
              got->losses == expected->losses ? "bit-identical"
                                              : ("largest relative difference " + std::to_string(worst)).c_str());
}

TEST(CudaBackend, TrainsWithTheCpuBackendsLossesUnderEveryPlacement) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  int index = 0;
  for (const Case& c : cases()) expect_the_cpu_backends_losses(c, "placement-" + std::to_string(index++));
}

TEST(CudaBackend, TrainsCloseToTheCpuBackendWithTheLayersOnTheDevice) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  int index = 0;
  for (const Case& c : device_layer_cases()) {
    expect_the_cpu_backends_losses(c, "device-layers-" + std::to_string(index++), LayersOn::kDevice);
  }
}

// The host only enqueuing (CudaBackendOptions::enqueue_only): the same
// kernels in the same order on each stream, ordered across streams by the
// schedule's events alone and with released memory reused only behind the
// work before it, give the bits of the run in which every call waits for
// its stream. A missing event or an early reuse is a race that changes
// them (or a number). The run goes through the stream-order checker too,
// and its ops are timed by events on their streams.
TEST(CudaBackend, EnqueuingOnlyTrainsAsSynchronisingDoes) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  int index = 0;
  for (const Case& c : device_layer_cases()) {
    SCOPED_TRACE(c.placement);
    const std::string tag = "enqueue-only-" + std::to_string(index++);
    auto waiting = cuda_backend(tag + "-sync", int64_t{1} << 30, LayersOn::kDevice, false);
    auto enqueuing = cuda_backend(tag + "-async", int64_t{1} << 30, LayersOn::kDevice, true);
    ASSERT_TRUE(waiting && enqueuing);
    StreamOrderChecker checked(*enqueuing);
    auto expected = run_on(*waiting, c);
    auto got = run_on(checked, c);
    ASSERT_TRUE(expected) << core::to_string(expected.error());
    ASSERT_TRUE(got) << core::to_string(got.error());
    EXPECT_EQ(got->losses, expected->losses);
    EXPECT_EQ(got->held_out_loss, expected->held_out_loss);
    EXPECT_EQ(checked.violations(), "");
    EXPECT_EQ(enqueuing->in_use(core::Tier::kGpu), waiting->in_use(core::Tier::kGpu));
    // Every op timed by events on its stream (Backend::mark), the memory
    // samples replayed over those times.
    for (const core::Op& op : got->schedule.ops) {
      const core::OpSpan& span = got->timeline.spans[static_cast<size_t>(op.id)];
      EXPECT_GT(span.start, 0) << op.name;
      EXPECT_GE(span.end, span.start) << op.name;
    }
    EXPECT_EQ(core::testing::classes_mismatch(got->schedule, got->timeline), "");
  }
}

TEST(CudaBackend, BfloatStatesOnTheDeviceTrainAsOnTheCpu) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const auto& [name, where] : {std::pair{"all-device", kAllDevice}, std::pair{"optimizer-cpu", kCpuOffload}}) {
    Case c{.placement = std::string(name) + " bf16-states", .plan = plan_where(where)};
    c.plan.policy.optimizer_state_precision = core::StatePrecision::kBf16;
    expect_the_cpu_backends_losses(c, std::string("bf16-states-") + name);
  }
}

// 16-bit products (`stowage run --products`, the plan's precision by
// default on the device): the training stays within bench/gpu/check.sh's
// bound of the CPU backend's fp32 products, 2^-8 relative at every step,
// and moves off the fp32-product run's bits (the option reaches the
// GEMMs). Rounding OpenBLAS's operands the same way moved the tiny plan's
// 10 steps by at most 5.2e-4 (bf16) and 6.5e-5 (fp16).
TEST(CudaBackend, HalfPrecisionProductsTrainWithinTheirBoundOfTheCpu) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const auto& [precision, products] : {std::pair{core::Precision::kBf16, ProductPrecision::kBf16},
                                            std::pair{core::Precision::kFp16, ProductPrecision::kFp16}}) {
    const Case c{.placement = std::string("all-device, ") + product_precision_name(products) + " products",
                 .plan = plan_where(kAllDevice),
                 .precision = precision};
    SCOPED_TRACE(c.placement);
    const std::string tag = std::string("products-") + product_precision_name(products);
    auto cpu = backend(tag + "-cpu");
    auto fp32 = cuda_backend(tag + "-fp32", int64_t{1} << 30, LayersOn::kDevice);
    auto half = cuda_backend(tag + "-half", int64_t{1} << 30, LayersOn::kDevice, false, products);
    ASSERT_TRUE(fp32 && half);
    auto expected = run_on(*cpu, c);
    auto exact = run_on(*fp32, c);
    auto got = run_on(*half, c);
    ASSERT_TRUE(expected && exact && got);
    ASSERT_EQ(got->losses.size(), expected->losses.size());
    for (size_t i = 0; i < got->losses.size(); ++i) {
      EXPECT_LE(std::fabs(got->losses[i] - expected->losses[i]), 0x1.0p-8 * std::fabs(expected->losses[i]))
          << "step " << i + 1 << ": " << got->losses[i] << " against " << expected->losses[i];
    }
    EXPECT_NE(got->losses, exact->losses);
  }
}

TEST(CudaBackend, ADeviceCapTooSmallFailsAtTheAllocationThatDoesNotFit) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  auto gpu = cuda_backend("cuda-capped", 256 << 10);
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->capacity(core::Tier::kGpu), 256 << 10);
  auto run = run_on(*gpu, {.placement = "all-device", .plan = plan_where(kAllDevice)});
  ASSERT_FALSE(run);
  EXPECT_NE(core::to_string(run.error()).find("gpu memory exhausted"), std::string::npos)
      << core::to_string(run.error());
}

TEST(CudaBackend, HostTierBuffersArePageLockedAndDeviceBuffersAreDeviceMemory) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  auto gpu = cuda_backend("cuda-kinds");
  ASSERT_NE(gpu, nullptr);
  auto host = gpu->allocate(core::Tier::kCpu, 12345, "host");
  auto device = gpu->allocate(core::Tier::kGpu, 12345, "device");
  ASSERT_TRUE(host && device);
  cudaPointerAttributes a{};
  ASSERT_EQ(cudaPointerGetAttributes(&a, host->data), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeHost);
  ASSERT_EQ(cudaPointerGetAttributes(&a, device->data), cudaSuccess);
  EXPECT_EQ(a.type, cudaMemoryTypeDevice);
  EXPECT_EQ(gpu->in_use(core::Tier::kCpu), 12345);
  EXPECT_EQ(gpu->in_use(core::Tier::kGpu), 12345);
  gpu->release(*host);
  gpu->release(*device);
  EXPECT_EQ(gpu->in_use(core::Tier::kCpu), 0);
  EXPECT_EQ(gpu->in_use(core::Tier::kGpu), 0);
}

// The page-locked blocks kept for reuse go back to the system when the
// steps are over (Trainer calls give_back_kept before the held-out
// evaluation): a released host buffer stays page-locked, kept, until then,
// and so do the host mirrors a run's layers were computed on. Under
// enqueue_only a release is parked behind the streams' work first; it is
// given back too.
TEST(CudaBackend, GivesTheKeptPageLockedBlocksBackWhenAsked) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const bool enqueue_only : {false, true}) {
    SCOPED_TRACE(enqueue_only ? "enqueue only" : "synchronising");
    auto gpu = cuda_backend(enqueue_only ? "cuda-give-back-enqueue" : "cuda-give-back-sync", int64_t{1} << 30,
                            LayersOn::kHostMirrors, enqueue_only);
    ASSERT_NE(gpu, nullptr);
    ASSERT_TRUE(run_on(*gpu, cases()[1]));  // optimizer states on the CPU: host buffers and mirrors
    if (!enqueue_only) {
      EXPECT_GT(gpu->kept_host_bytes(), 0);  // the evaluation's, kept after it
    }
    auto host = gpu->allocate(core::Tier::kCpu, 12345, "host");
    ASSERT_TRUE(host);
    std::byte* const released = host->data;
    gpu->release(*host);
    cudaPointerAttributes a{};
    ASSERT_EQ(cudaPointerGetAttributes(&a, released), cudaSuccess);
    EXPECT_EQ(a.type, cudaMemoryTypeHost);  // kept (or parked), not freed
    gpu->give_back_kept();
    EXPECT_EQ(gpu->kept_host_bytes(), 0);
    ASSERT_EQ(cudaPointerGetAttributes(&a, released), cudaSuccess);
    EXPECT_EQ(a.type, cudaMemoryTypeUnregistered);
  }
}

// Runs everywhere: without a device the backend says why, instead of
// failing deep inside its first allocation.
TEST(CudaBackend, WithoutADeviceCreationSaysWhy) {
  if (cuda_presence().present()) GTEST_SKIP() << "a CUDA device is present";
  auto b = CudaBackend::create({});
  ASSERT_FALSE(b);
  EXPECT_NE(core::to_string(b.error()).find("no CUDA device: "), std::string::npos) << core::to_string(b.error());
}

}  // namespace
}  // namespace stowage::executor::cuda
