// Golden timelines for two small scenarios, lowered and simulated end to end
// and written as Chrome traces. A change to lowering or the cost model shows
// up here as a diff to review like code; regenerate with
// STOWAGE_UPDATE_GOLDEN=1 after checking it is intended.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/chrome_trace.h"
#include "core/lower.h"
#include "sim/simulator.h"
#include "tests/core/test_profiles.h"

namespace stowage::sim {
namespace {

using core::testing::bundled;
using core::testing::must;

std::string trace_of(const std::string& machine_name, const std::string& model_name, core::StandardPlacement which) {
  const core::MachineSpec machine = must(bundled().machine(machine_name));
  const core::TrainingSpec training = must(bundled().training("tiny"));
  const core::Workload w(must(bundled().model(model_name)), training.sequence_length);
  const core::Policy policy = core::policy_for(core::standard_placement(which, machine.gpu_count), w, training);
  const core::Schedule s = must(core::lower(policy, machine, w, training, {.steps = 2}));
  const Prediction p = simulate(s, machine);
  std::ostringstream out;
  core::write_chrome_trace(s, p.timeline, {.title = model_name + " on " + machine_name, .source = "predicted"}, out);
  return out.str();
}

void compare_with_golden(const std::string& name, const std::string& text) {
  const std::string path = std::string(STOWAGE_TEST_DATA_DIR) + "/golden/" + name;
  if (std::getenv("STOWAGE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path) << text;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing " << path << " (run with STOWAGE_UPDATE_GOLDEN=1)";
  std::stringstream golden;
  golden << in.rdbuf();
  EXPECT_TRUE(golden.str() == text) << path << " differs from this run's trace";
}

TEST(GoldenTrace, TinyGptZeroOffloadOnTheWorkstation) {
  compare_with_golden("tiny_gpt_zero_offload.json",
                      trace_of("workstation-24gb-1nvme", "tiny-gpt", core::StandardPlacement::kZeroOffload));
}

TEST(GoldenTrace, TinyLlamaZeroInfinityOnTheCloudT4) {
  compare_with_golden("tiny_llama_zero_infinity.json",
                      trace_of("cloud-t4-vm", "tiny-llama", core::StandardPlacement::kZeroInfinity));
}

}  // namespace
}  // namespace stowage::sim
