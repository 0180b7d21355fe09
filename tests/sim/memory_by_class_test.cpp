// Memory by class (core/memory_by_class.h) on simulated timelines: every
// bundled model under each standard placement on every bundled machine, one
// step. What it bounds: the classes must sum to the bytes the simulator
// recorded at every instant, and lowering must name every buffer so that
// none falls in "other".
#include "core/memory_by_class.h"

#include <gtest/gtest.h>

#include "core/lower.h"
#include "sim/simulator.h"
#include "tests/core/memory_by_class_check.h"
#include "tests/core/test_profiles.h"

namespace stowage::core {
namespace {

using testing::bundled;
using testing::must;

TEST(MemoryClass, NamesLoweringGivesMapToTheirClass) {
  EXPECT_EQ(memory_class_of("param16 at rest"), MemoryClass::kParam16);
  EXPECT_EQ(memory_class_of("optimizer states at rest (master32, adam_m, adam_v)"), MemoryClass::kOptimizerStates);
  EXPECT_EQ(memory_class_of("rollback copy layers.3"), MemoryClass::kOptimizerStates);
  EXPECT_EQ(memory_class_of("fetched param16 layers.3"), MemoryClass::kParam16);
  EXPECT_EQ(memory_class_of("grad16 layers.3 cpu"), MemoryClass::kGrad16);
  EXPECT_EQ(memory_class_of("activations layers.2 s0 m0"), MemoryClass::kActivation);
  EXPECT_EQ(memory_class_of("scratch fwd layers.2 s0 m0"), MemoryClass::kWorkspace);
  EXPECT_EQ(memory_class_of("pinned staging buffers"), MemoryClass::kStaging);
  EXPECT_EQ(memory_class_of("runtime reserve"), MemoryClass::kReserve);
  EXPECT_EQ(memory_class_of("param16s"), MemoryClass::kOther);  // whole words only
}

TEST(MemoryByClass, SumsToTheSimulatedMemoryForEveryBundledModelAndMachine) {
  const TrainingSpec training = must(bundled().training("tiny"));
  int cases = 0;
  for (const std::string& machine_name : bundled().names(ProfileKind::kMachine)) {
    const MachineSpec machine = must(bundled().machine(machine_name));
    for (const std::string& model_name : bundled().names(ProfileKind::kModel)) {
      const Workload w(must(bundled().model(model_name)), training.sequence_length);
      for (const StandardPlacement which :
           {StandardPlacement::kAllGpu, StandardPlacement::kZeroOffload, StandardPlacement::kZeroInfinity}) {
        const Policy policy = policy_for(standard_placement(which, machine.gpu_count), w, training);
        const Result<Schedule> s = lower(policy, machine, w, training, {.steps = 1});
        if (!s) continue;  // a placement this machine cannot lower
        const sim::Prediction p = sim::simulate(*s, machine);
        const std::string where = model_name + " on " + machine_name;
        EXPECT_EQ(testing::classes_mismatch(*s, p.timeline), "") << where;
        for (const Op& op : s->ops) {
          for (const auto* effects : {&op.allocs, &op.frees}) {
            for (const MemoryEffect& e : *effects)
              EXPECT_NE(memory_class_of(e.tensor), MemoryClass::kOther) << where << ": " << e.tensor;
          }
        }
        for (const MemoryEffect& e : s->resident_items)
          EXPECT_NE(memory_class_of(e.tensor), MemoryClass::kOther) << where << ": " << e.tensor;
        ++cases;
      }
    }
  }
  EXPECT_GT(cases, 10);
}

}  // namespace
}  // namespace stowage::core
