// `stowage memory` reports the simulator's peak for a placement's schedule:
// the check of issue 11 that it and `stowage simulate --placement` give the
// same peak per tier for every bundled model, machine and named placement,
// and that what it lists at the peak adds up to the peak.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/exit_codes.h"
#include "core/placement.h"
#include "core/profile_catalog.h"
#include "tests/cli/run_stowage.h"
#include "tests/core/test_profiles.h"

namespace stowage::cli {
namespace {

using nlohmann::json;
using testing::Outcome;
using testing::stowage;

const std::vector<std::string> kPlacements = {"all-gpu", "zero-offload", "zero-infinity"};

std::vector<std::string> names(core::ProfileKind kind) {
  return core::ProfileCatalog(STOWAGE_PROFILES_DIR).names(kind);
}

// The default (bf16) training, or fp16 where the GPU has no bf16 (V100, T4).
std::string training_for(const std::string& machine) {
  const Outcome probe = stowage({"memory", "--machine", machine, "--model", "tiny-gpt", "--placement", "all-gpu"});
  return probe.code == kExitOk ? "default" : "fp16-adam";
}

class MemoryAgreesWithSimulate : public ::testing::TestWithParam<std::string> {};

TEST_P(MemoryAgreesWithSimulate, SamePeakPerTierForEveryModelAndPlacement) {
  const std::string machine = GetParam();
  const std::string training = training_for(machine);
  for (const std::string& model : names(core::ProfileKind::kModel)) {
    for (const std::string& placement : kPlacements) {
      const std::string what = model + " on " + machine + ", " + placement;
      const Outcome m = stowage({"memory", "--machine", machine, "--model", model, "--training", training,
                                 "--placement", placement, "--json"});
      const Outcome s = stowage({"simulate", "--machine", machine, "--model", model, "--training", training,
                                 "--placement", placement, "--json"});
      ASSERT_EQ(m.code, kExitOk) << what << ": " << m.err;
      ASSERT_EQ(s.code, kExitOk) << what << ": " << s.err;
      const json mem = json::parse(m.out)["placements"][0];
      const json sim = json::parse(s.out);
      ASSERT_EQ(mem["source"], "simulated") << what;
      bool fits = true;
      for (const char* tier : {"gpu", "cpu", "nvme"}) {
        const int64_t peak = sim["memory"][tier]["peak_bytes"].get<int64_t>();
        const int64_t capacity = sim["memory"][tier]["capacity_bytes"].get<int64_t>();
        EXPECT_EQ(mem["tiers"][tier]["used_bytes"].get<int64_t>(), peak) << what << ", " << tier;
        EXPECT_EQ(mem["tiers"][tier]["capacity_bytes"].get<int64_t>(), capacity) << what << ", " << tier;
        fits = fits && peak <= capacity;
        int64_t listed = 0;
        for (const json& line : mem["lines"]) {
          if (line["tier"] == tier) listed += line["bytes"].get<int64_t>();
          EXPECT_NE(line["item"], "other") << what;
        }
        EXPECT_EQ(listed, peak) << what << ", " << tier << ": the lines at the peak add up to it";
      }
      EXPECT_EQ(mem["fits"].get<bool>(), fits) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryBundledMachine, MemoryAgreesWithSimulate,
                         ::testing::ValuesIn(names(core::ProfileKind::kMachine)),
                         core::testing::test_name_of);

// The text says its figures are the simulated peak (issue 11: a formula
// said a 33B GPT fits all-GPU on the DGX-2 at 33.76 GB where the simulator
// overflowed at 34.45 GB) and lists who holds each tier then.
TEST(CliMemory, TextShowsTheSimulatedPeakAndItsHolders) {
  const Outcome o = stowage({"memory", "--machine", "workstation-24gb-1nvme", "--model", "llama-2-13b",
                             "--placement", "zero-offload"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  EXPECT_NE(o.out.find("the simulated peak of each placement's schedule"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("what each tier holds at its peak (first reached at gpu "), std::string::npos) << o.out;
  // 12 B x 13,015,864,320 parameters of states rest in CPU RAM throughout.
  EXPECT_NE(o.out.find("optimizer states (master32 + adam_m + adam_v): 156.2 GB on cpu"), std::string::npos)
      << o.out;
}

// Every DeepSpeed placement by name (and a partial offload), accepted by
// memory and simulate, which report the same peak per tier.
TEST(CliMemory, EveryDeepSpeedPlacementAgreesWithSimulate) {
  std::vector<std::string> placements;
  for (const core::Placement& p : core::deepspeed_placements()) placements.push_back(p.name);
  placements.push_back("zero-3-optimizer-cpu-params-cpu-ratio-0.3");
  for (const char* machine : {"workstation-24gb-1nvme", "dgx-a100"}) {
    for (const char* model : {"tiny-gpt", "llama-2-7b", "mixtral-8x7b"}) {
      for (const std::string& placement : placements) {
        const std::string what = std::string(model) + " on " + machine + ", " + placement;
        const Outcome m = stowage({"memory", "--machine", machine, "--model", model, "--placement", placement, "--json"});
        const Outcome s = stowage({"simulate", "--machine", machine, "--model", model, "--placement", placement, "--json"});
        ASSERT_EQ(m.code, kExitOk) << what << ": " << m.err;
        ASSERT_EQ(s.code, kExitOk) << what << ": " << s.err;
        const json mem = json::parse(m.out)["placements"][0];
        const json sim = json::parse(s.out);
        EXPECT_EQ(mem["name"], placement);
        for (const char* tier : {"gpu", "cpu", "nvme"}) {
          EXPECT_EQ(mem["tiers"][tier]["used_bytes"].get<int64_t>(), sim["memory"][tier]["peak_bytes"].get<int64_t>())
              << what << ", " << tier;
        }
      }
    }
  }
}

// A partial offload keeps part of the states on the GPU: at ratio 0.3, the
// CPU holds less of them than with the whole optimizer offloaded, the GPU more.
TEST(CliMemory, PartialOffloadSplitsTheStates) {
  auto states_on = [](const json& placement, const char* tier) {
    int64_t sum = 0;
    for (const json& l : placement["lines"]) {
      if (l["tier"] == tier && (l["item"] == "master32" || l["item"] == "adam_m" || l["item"] == "adam_v"))
        sum += l["bytes"].get<int64_t>();
    }
    return sum;
  };
  const auto run = [](const char* placement) {
    const Outcome o = stowage({"memory", "--machine", "dgx-a100", "--model", "llama-2-7b", "--placement", placement,
                               "--json"});
    EXPECT_EQ(o.code, kExitOk) << o.err;
    return json::parse(o.out)["placements"][0];
  };
  const json full = run("zero-3-optimizer-cpu");
  const json part = run("zero-3-optimizer-cpu-ratio-0.3");
  EXPECT_LT(states_on(part, "cpu"), states_on(full, "cpu"));
  EXPECT_GT(states_on(part, "gpu"), states_on(full, "gpu"));
  EXPECT_EQ(states_on(full, "gpu"), 0);
}

// --placement deepspeed lists every DeepSpeed placement; with --convention
// deepspeed the ones its estimator has no formula for say so.
TEST(CliMemory, DeepSpeedConventionSaysWhichPlacementsItsEstimatorCovers) {
  const Outcome o = stowage({"memory", "--machine", "dgx-a100", "--model", "llama-2-7b", "--placement", "deepspeed",
                             "--convention", "deepspeed", "--model-states-only", "--json"});
  ASSERT_EQ(o.code, kExitOk) << o.err;
  const json placements = json::parse(o.out)["placements"];
  EXPECT_EQ(placements.size(), core::deepspeed_placements().size());
  int uncovered = 0;
  for (const json& p : placements) {
    if (p.contains("not_covered")) {
      ++uncovered;
      EXPECT_FALSE(p.contains("tiers")) << p.dump();
    } else {
      EXPECT_TRUE(p["tiers"].is_object()) << p.dump();
    }
  }
  EXPECT_EQ(uncovered, 7);
}

TEST(CliMemory, AnUnknownPlacementIsAUsageErrorNamingTheKnownOnes) {
  const Outcome o = stowage({"memory", "--machine", "dgx-a100", "--model", "llama-2-7b", "--placement", "zero-5"});
  EXPECT_EQ(o.code, kExitUsage);
  EXPECT_NE(o.err.find("unknown placement 'zero-5'"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("zero-3-optimizer-nvme-params-nvme"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace stowage::cli
