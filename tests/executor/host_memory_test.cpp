// A run is refused before it allocates anything when its homes in host
// memory alone need more than the host has free, and before its first step
// when its predicted peak needs more than the setup left: the kernel would
// otherwise kill it partway (executor/host_memory.h).
#include "executor/host_memory.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <tuple>

#include "core/lower.h"
#include "executor/forwarding_backend.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

using testing::backend;
using testing::fixture;
using testing::plan_where;

TEST(MemAvailable, ReadsTheKernelsEstimateInBytes) {
  EXPECT_EQ(mem_available("MemTotal:       24683772 kB\nMemFree:  1 kB\nMemAvailable:   23960992 kB\n"),
            int64_t{23960992} * 1024);
  EXPECT_EQ(mem_available("MemAvailable: 0 kB\n"), 0);
  EXPECT_EQ(mem_available("MemTotal: 5 kB\n"), std::nullopt);
  EXPECT_EQ(mem_available("MemAvailable: lots\n"), std::nullopt);
  EXPECT_EQ(mem_available("MemAvailable: 12 MB\n"), std::nullopt) << "a unit the kernel does not write";
  EXPECT_EQ(mem_available("XMemAvailable: 12 kB\n"), std::nullopt) << "only a whole key";
  EXPECT_EQ(mem_available(""), std::nullopt);
}

// On a Linux host the kernel says; what the check compares against.
TEST(MemAvailable, ThisHostHasSome) {
  const std::optional<int64_t> here = available_host_memory();
  ASSERT_TRUE(here.has_value());
  EXPECT_GT(*here, 0);
}

core::Schedule one_step(const core::PlanFile& plan) {
  const testing::Fixture& f = fixture();
  return *core::lower(
      plan.policy, f.machine, core::Workload(f.model, f.training.sequence_length), f.training,
      {.steps = 1, .buffers = {.gpu_reserve = core::Bytes(0), .host_reserve = core::Bytes(0)}});
}

// The CUDA backend's device tier is the GPU's memory: only its cpu tier counts.
class DeviceOnTheGpu final : public ForwardingBackend {
 public:
  using ForwardingBackend::ForwardingBackend;
  [[nodiscard]] bool in_host_memory(core::Tier tier) const override { return tier == core::Tier::kCpu; }
};

// The CPU backend holds the device and cpu tiers in host memory; at exactly
// what they need the run goes ahead, a byte less and it is refused, saying
// how much of each tier and how much is free.
TEST(HostMemory, CountsTheTiersTheBackendKeepsInHostMemory) {
  const core::Schedule s = one_step(plan_where(testing::kCpuOffload));
  const int64_t gpu = s.resident[0].count(), cpu = s.resident[1].count();
  ASSERT_GT(gpu, 0);
  ASSERT_GT(cpu, 0);
  auto b = backend("host-memory");
  EXPECT_TRUE(check_host_memory(s, *b, gpu + cpu).empty());
  const core::Diagnostics refused = check_host_memory(s, *b, gpu + cpu - 1);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_TRUE(refused[0].what.starts_with("host memory: ")) << refused[0].what;
  EXPECT_NE(refused[0].what.find("on the cpu backend (gpu tier " + core::format_bytes(core::Bytes(gpu)) +
                                 ", cpu tier " + core::format_bytes(core::Bytes(cpu)) + ")"),
            std::string::npos)
      << refused[0].what;
  const DeviceOnTheGpu cuda_like(*b);
  EXPECT_TRUE(check_host_memory(s, cuda_like, cpu).empty());
  EXPECT_FALSE(check_host_memory(s, cuda_like, cpu - 1).empty());
}

// A device tier capped below what the plan rests there fails at its cap
// (device memory exhausted), so only the cap is host memory the run takes.
TEST(HostMemory, ADeviceTierCountsNoMoreThanItsCap) {
  const core::Schedule s = one_step(plan_where(testing::kAllDevice));
  const int64_t gpu = s.resident[0].count(), cpu = s.resident[1].count();
  ASSERT_GT(gpu, 4096);
  auto capped = backend("host-memory-capped", 4096);
  EXPECT_TRUE(check_host_memory(s, *capped, 4096 + cpu).empty());
  EXPECT_FALSE(check_host_memory(s, *capped, 4095 + cpu).empty());
}

// train() asks before it allocates: refused, the backend holds nothing.
TEST(HostMemory, TrainRefusesBeforeAllocating) {
  auto b = backend("host-memory-train");
  auto run =
      testing::train_plan(plan_where(testing::kCpuOffload), *b,
                          {.steps = 2, .host_memory_available = [] { return std::optional<int64_t>(1024); }});
  ASSERT_FALSE(run);
  EXPECT_TRUE(run.error()[0].what.starts_with("host memory: ")) << core::to_string(run.error());
  for (core::Tier t : core::kAllTiers) EXPECT_EQ(b->in_use(t), 0) << core::to_string(t);
  EXPECT_EQ(b->fresh_blocks(core::Tier::kGpu) + b->fresh_blocks(core::Tier::kCpu), 0);
  auto enough = testing::train_plan(plan_where(testing::kCpuOffload), *b,
                                    {.steps = 2, .host_memory_available = available_host_memory});
  EXPECT_TRUE(enough) << core::to_string(enough.error());
}

// The peak is the most the host tiers hold at once, not the sum of each
// tier's own peak: here gpu peaks at 50 while cpu holds 10, and cpu at 40
// while gpu holds 20.
core::Timeline timeline_of(std::initializer_list<std::tuple<core::SimTime, core::Tier, int64_t>> samples) {
  core::Timeline t;
  for (const auto& [time, tier, bytes] : samples) t.memory.push_back({time, tier, core::Bytes(bytes)});
  return t;
}

TEST(HostMemoryPeak, IsTheMostTheHostTiersHoldAtOnce) {
  using core::Tier;
  const core::Timeline t = timeline_of({{0, Tier::kGpu, 0},
                                        {0, Tier::kCpu, 10},
                                        {0, Tier::kNvme, 1000},
                                        {1, Tier::kGpu, 50},
                                        {2, Tier::kGpu, 20},
                                        {3, Tier::kCpu, 40},
                                        {4, Tier::kNvme, 5000}});
  auto b = backend("host-memory-peak");
  EXPECT_EQ(host_memory_peak(t, *b), 60);  // gpu 20 + cpu 40; the NVMe tier is not host memory
  const DeviceOnTheGpu cuda_like(*b);
  EXPECT_EQ(host_memory_peak(t, cuda_like), 40);
  auto capped = backend("host-memory-peak-capped", 16);
  EXPECT_EQ(host_memory_peak(t, *capped), 56);  // the device tier fails past its cap of 16
  // Beyond what the backend holds now: at exactly that the run goes ahead.
  EXPECT_TRUE(check_host_memory_peak(t, *b, 60).empty());
  const core::Diagnostics refused = check_host_memory_peak(t, *b, 59);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_TRUE(refused[0].what.starts_with("host memory: the run's predicted peak")) << refused[0].what;
  auto held = b->allocate(Tier::kCpu, 25, "held");
  ASSERT_TRUE(held);
  EXPECT_TRUE(check_host_memory_peak(t, *b, 35).empty());
  EXPECT_FALSE(check_host_memory_peak(t, *b, 34).empty());
  b->release(*held);
}

}  // namespace
}  // namespace stowage::executor
