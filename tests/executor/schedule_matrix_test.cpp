// One schedule, one meaning (issue 10): over precision x accumulation x
// activation checkpointing x placement x delayed update, on the tiny GPT,
// every run finishes (a short watchdog turns a hang into a failure), its
// loss curve equals the all-device run with the same settings bit for bit
// (placement never changes the math, fp16 included: every placement runs
// the same rounding), no loss is NaN, the predicted and measured traces
// list the same op ids on the same lanes, and the measured peak per tier is
// the predicted one to the byte: every op allocates exactly what it
// declares (the interpreter checks it) and the run applies the memory
// effects in the order of its prediction (core/memory_gate.h), which leaves
// that prediction as it was; and every buffer two lanes share is ordered
// between them by the backend's events, as a GPU's streams need
// (stream_order_checker.h).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/core/memory_by_class_check.h"
#include "core/chrome_trace.h"
#include "core/memory_replay.h"
#include "sim/simulator.h"
#include "tests/executor/stream_order_checker.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

using namespace testing;

struct Case {
  core::Precision precision;
  int64_t accumulation;
  bool checkpointing;
  std::string placement;
  bool delayed;
  core::StatePrecision states = core::StatePrecision::kFp32;

  [[nodiscard]] std::string name() const {
    return std::string(precision == core::Precision::kBf16 ? "bf16" : "fp16") + " accum" +
           std::to_string(accumulation) + (checkpointing ? " ckpt" : " no-ckpt") + " " + placement +
           (delayed ? " delayed" : "") + (states == core::StatePrecision::kBf16 ? " bf16-states" : "");
  }
};

core::PlanFile plan_for(const Case& c) {
  core::PlanFile plan = c.placement == "all-device"       ? plan_where(kAllDevice)
                        : c.placement == "optimizer-cpu"  ? plan_where(kCpuOffload)
                        : c.placement == "optimizer-nvme" ? plan_where(kNvmeOffload)
                        : c.placement == "params-nvme"    ? plan_where(kParamsOnNvme)
                                                          : three_tier_mix();
  plan.policy.delayed_update = c.delayed;
  plan.policy.activation_checkpointing = c.checkpointing;
  plan.policy.gradient_accumulation = c.accumulation;
  plan.policy.optimizer_state_precision = c.states;
  return plan;
}

// Ops by lane, as a trace file lists them.
std::map<std::string, std::set<int64_t>> ops_by_lane(const core::Schedule& s, const core::Timeline& t) {
  std::ostringstream text;
  core::write_chrome_trace(s, t, {.title = "matrix", .source = "test"}, text);
  std::map<std::string, std::set<int64_t>> lanes;
  // Named: a range-for over parse(...)["traceEvents"] iterates a temporary
  // that is already destroyed (it found no events, and the comparison of
  // two empty maps passed whatever the traces held).
  const nlohmann::json trace = nlohmann::json::parse(text.str());
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("ph", "") == "X") lanes[e["cat"].get<std::string>()].insert(e["args"]["id"].get<int64_t>());
  }
  return lanes;
}

bool same_spans(const core::Timeline& a, const core::Timeline& b) {
  if (a.spans.size() != b.spans.size()) return false;
  for (size_t i = 0; i < a.spans.size(); ++i) {
    if (a.spans[i].start != b.spans[i].start || a.spans[i].end != b.spans[i].end) return false;
  }
  return true;
}

struct Outcome {
  std::vector<double> losses;
  bool ran = false;
  bool same_ops = false;
  std::array<int64_t, 3> measured_peak{}, predicted_peak{};
  bool memory_as_scheduled = false;  // both peaks are the schedule's effects replayed over their timeline
};

Outcome run_case(const Case& c, const std::string& tag) {
  const Fixture& f = fixture();
  core::TrainingSpec training = f.training;
  training.precision = c.precision;
  training.loss_scaling.window = 2;  // fp16: the scale moves within a few steps
  auto b = backend(tag);
  StreamOrderChecker checked(*b);  // every edge across lanes is an event
  const core::PlanFile plan = plan_for(c);
  auto run = train(plan, f.machine, f.model, training, checked,
                   {.steps = 3,
                    .seed = 7,
                    .predict = [&](const core::Schedule& s) { return sim::simulate(s, f.machine).timeline; },
                    .watchdog = std::chrono::seconds(30)});
  EXPECT_TRUE(run) << c.name() << ": " << (run ? "" : core::to_string(run.error()));
  if (!run) return {};
  EXPECT_EQ(checked.violations(), "") << c.name();
  EXPECT_GT(checked.waits(), 0) << c.name();  // the setup's, at least
  for (double loss : run->losses) EXPECT_TRUE(std::isfinite(loss)) << c.name();
  // Every op ran once and kept to its lane's slots.
  for (const core::Op& op : run->schedule.ops) {
    const core::OpSpan& span = run->timeline.spans[static_cast<size_t>(op.id)];
    EXPECT_GT(span.end, 0) << c.name() << ": " << op.name;
    EXPECT_LT(span.slot, run->schedule.lane_slots[static_cast<size_t>(op.lane)])
        << c.name() << ": " << op.name;
  }
  const sim::Prediction predicted = sim::simulate(run->schedule, f.machine);
  // The memory order the run followed changes nothing in its prediction.
  EXPECT_FALSE(run->schedule.memory_order.empty()) << c.name();
  core::Schedule unordered = run->schedule;
  unordered.memory_order.clear();
  const sim::Prediction free_running = sim::simulate(unordered, f.machine);
  EXPECT_TRUE(same_spans(free_running.timeline, predicted.timeline)) << c.name();
  const auto predicted_lanes = ops_by_lane(run->schedule, predicted.timeline);
  std::set<core::Lane> lanes_used;
  for (const core::Op& op : run->schedule.ops) lanes_used.insert(op.lane);
  EXPECT_EQ(predicted_lanes.size(), lanes_used.size()) << c.name();
  const bool same_ops = predicted_lanes == ops_by_lane(run->schedule, run->timeline);
  EXPECT_TRUE(same_ops) << c.name();
  Outcome o{.losses = run->losses, .ran = true, .same_ops = same_ops};
  for (const core::MemorySample& m : run->timeline.memory) {
    int64_t& peak = o.measured_peak[static_cast<size_t>(m.tier)];
    peak = std::max(peak, m.bytes.count());
  }
  for (size_t t = 0; t < 3; ++t) o.predicted_peak[t] = predicted.engine.peak[t].count();
  // Every op allocated exactly what the schedule declares (the interpreter
  // checks each op, or the run fails) and the run started with exactly the
  // declared resident bytes; so the measured peak is the schedule's memory
  // in the order the run applied it, the predicted one's order, although
  // the lanes raced otherwise here (the simulator predicts another machine
  // than this CPU).
  const std::array<core::Bytes, 3> measured_replay = core::replay_peak(run->schedule, run->timeline);
  const std::array<core::Bytes, 3> predicted_replay = core::replay_peak(run->schedule, predicted.timeline);
  o.memory_as_scheduled = true;
  // The trace's memory by class (the same replay the simulator's trace
  // uses) sums to what this run measured at every instant.
  EXPECT_EQ(core::testing::classes_mismatch(run->schedule, run->timeline), "") << c.name();
  for (size_t t = 0; t < 3; ++t) {
    EXPECT_EQ(measured_replay[t].count(), o.measured_peak[t]) << c.name() << " tier " << t;
    EXPECT_EQ(predicted_replay[t].count(), o.predicted_peak[t]) << c.name() << " tier " << t;
    o.memory_as_scheduled &= measured_replay[t].count() == o.measured_peak[t] &&
                             predicted_replay[t].count() == o.predicted_peak[t];
    EXPECT_EQ(o.measured_peak[t], o.predicted_peak[t]) << c.name() << " tier " << t;
  }
  return o;
}

TEST(ScheduleMatrix, EveryCaseFinishesWithTheAllDeviceLossesAndTheSameOps) {
  const std::vector<std::string> placements = {"all-device", "optimizer-cpu", "optimizer-nvme",
                                               "mixed-three-tier", "params-nvme"};
  int cases = 0;
  for (core::Precision precision : {core::Precision::kBf16, core::Precision::kFp16}) {
    for (int64_t accumulation : {1, 3}) {
      for (bool checkpointing : {false, true}) {
        for (bool delayed : {false, true}) {
          std::vector<double> reference;
          for (const std::string& placement : placements) {
            const Case c{precision, accumulation, checkpointing, placement, delayed};
            const Outcome o = run_case(c, "matrix-" + std::to_string(cases++));
            if (o.ran && placement == "all-device") reference = o.losses;
            EXPECT_EQ(o.losses, reference) << c.name() << " against all-device";
            // The table for the record (the closing note's): measured and
            // predicted peaks per tier in bytes, "=" where they are equal.
            auto peak = [&](size_t t) {
              const int64_t m = o.measured_peak[t], p = o.predicted_peak[t];
              return m == p ? std::to_string(m) + " =" : std::to_string(m) + " / " + std::to_string(p);
            };
            std::printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.name().c_str(), o.ran ? "yes" : "NO",
                        o.ran && o.losses == reference ? "yes" : "NO", o.memory_as_scheduled ? "yes" : "NO",
                        peak(0).c_str(), peak(1).c_str(), peak(2).c_str(), o.same_ops ? "yes" : "NO");
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 80);
}

// bf16 optimizer states (issue 16, item 3) on the placements that hold
// states on every tier: four runs of three steps, not the whole matrix (CI
// time). Each passes run_case's checks (measured peak per tier = predicted,
// to the byte; the same ops), and placement still never changes the math.
TEST(ScheduleMatrix, Bf16StatesKeepPeaksAsPredictedOnEveryTier) {
  std::vector<double> reference;
  int cases = 0;
  const std::vector<std::string> placements = {"all-device", "optimizer-cpu", "optimizer-nvme", "mixed-three-tier"};
  for (const std::string& placement : placements) {
    const Case c{core::Precision::kBf16, 1, true, placement, false, core::StatePrecision::kBf16};
    const Outcome o = run_case(c, "matrix-bf16-states-" + std::to_string(cases++));
    ASSERT_TRUE(o.ran) << c.name();
    if (placement == "all-device") reference = o.losses;
    EXPECT_EQ(o.losses, reference) << c.name() << " against all-device";
    EXPECT_TRUE(o.memory_as_scheduled) << c.name();
  }
}

// The prediction printed beside a run is the simulation of the ops that
// ran, checkpoints included: checkpoints after every step leave the
// predicted step time as it is without them (they hold back only each
// partition's next update, which waits for that partition anyway).
TEST(ScheduleMatrix, CheckpointsDoNotChangeThePredictedStep) {
  const Fixture& f = fixture();
  for (bool delayed : {false, true}) {
    core::PlanFile plan = plan_where(kNvmeOffload);
    plan.policy.delayed_update = delayed;
    auto plain = backend("predict-plain");
    auto with = backend("predict-ckpt");
    StreamOrderChecker checked(*with);  // snapshots read homes behind every lane
    auto a = train_plan(plan, *plain, {.steps = 8, .seed = 7});
    auto b = train_plan(
        plan, checked,
        {.steps = 8, .seed = 7, .checkpoint_root = scratch("predict") / "c", .checkpoint_every = 1});
    ASSERT_TRUE(a && b);
    EXPECT_EQ(checked.violations(), "");
    EXPECT_EQ(b->checkpoints.size(), 8u);
    EXPECT_EQ(a->losses, b->losses);
    const double without = sim::simulate(a->schedule, f.machine).summary.step_time.value();
    const double checkpointed = sim::simulate(b->schedule, f.machine).summary.step_time.value();
    EXPECT_NEAR(checkpointed, without, without * 0.01) << "delayed " << delayed;
  }
}

}  // namespace
}  // namespace stowage::executor
