// A run lowered as several schedules, one after another (so that its
// memory stays bounded however many steps it trains), is the run of one
// schedule: the same losses bit for bit on placements where a boundary
// could break that (a delayed update's second parameter version, the fp16
// loss scaler and its skipped steps, speculative updates and their
// replays, states on NVMe), its checkpoints where they were asked for and
// resumable, a stop that lands between schedules checkpointed once, and
// the measured peak over every schedule the predicted one to the byte.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "core/lower.h"
#include "core/plan_file.h"
#include "core/profile_catalog.h"
#include "executor/trainer.h"
#include "sim/simulator.h"
#include "tests/executor/stream_order_checker.h"
#include "tests/executor/tiny_gpt_fixture.h"

namespace stowage::executor {
namespace {

namespace fs = std::filesystem;
using namespace testing;

struct Setting {
  std::string what;
  core::PlanFile plan;
  core::TrainingSpec training;
};

std::vector<Setting> settings() {
  const Fixture& f = fixture();
  std::vector<Setting> out;
  out.push_back({"three tiers, bf16", three_tier_mix(), f.training});
  core::PlanFile delayed = plan_where(kNvmeOffload);
  delayed.policy.delayed_update = true;
  out.push_back({"delayed update, states on NVMe", delayed, f.training});
  core::TrainingSpec fp16 = f.training;
  fp16.precision = core::Precision::kFp16;
  // Two steps without overflow double the scale, and 2^17 overflows: the
  // 7 steps go taken, taken, skipped, skipped, taken, taken, skipped, so
  // every boundary cuts through the scaler's count of good steps or of
  // overflows left to tolerate.
  fp16.loss_scaling.initial_scale = 1 << 16;
  fp16.loss_scaling.window = 2;
  fp16.gradient_accumulation = 2;
  out.push_back({"fp16 with skipped steps, CPU optimizer", plan_where(kCpuOffload), fp16});
  core::PlanFile speculative = plan_where(kParamsOnNvme);
  speculative.policy.speculative_update = true;
  core::TrainingSpec clipped = f.training;
  clipped.max_grad_norm = 0.05;  // every check fails: each update is rolled back and replayed
  out.push_back({"speculative updates replayed, params on NVMe", speculative, clipped});
  return out;
}

struct Trained {
  TrainingRun run;
  int64_t skipped_total = 0;  // as the last step's report says
};

Trained train_in_schedules(const Setting& s, int64_t steps, int64_t per_schedule, const std::string& tag,
                           TrainerOptions options = {}) {
  const Fixture& f = fixture();
  auto b = backend(tag);
  StreamOrderChecker checked(*b);  // every schedule's buffers ordered across lanes
  Trained out;
  options.steps = steps;
  options.steps_per_schedule = per_schedule;
  options.seed = 7;
  options.predict = [&](const core::Schedule& schedule) {
    return sim::simulate(schedule, f.machine).timeline;
  };
  options.on_step = [&](const StepReport& r) {
    out.skipped_total = std::max(out.skipped_total, r.skipped_total);
  };
  auto run = train(s.plan, f.machine, f.model, s.training, checked, options);
  EXPECT_TRUE(run) << s.what << ": " << (run ? "" : core::to_string(run.error()));
  EXPECT_EQ(checked.violations(), "") << s.what;
  if (run) out.run = std::move(*run);
  return out;
}

TEST(ScheduleBoundaries, ChangeNoLossOnAnyPlacement) {
  for (const Setting& s : settings()) {
    const Trained one = train_in_schedules(s, 7, 0, "one");
    ASSERT_EQ(one.run.schedules, 1) << s.what;
    ASSERT_EQ(one.run.losses.size(), 7u) << s.what;
    for (const int64_t per : {3, 1}) {
      const Trained split = train_in_schedules(s, 7, per, "split");
      EXPECT_EQ(split.run.schedules, (7 + per - 1) / per) << s.what;
      EXPECT_EQ(split.run.losses, one.run.losses) << s.what << ", " << per << " steps a schedule";
      EXPECT_EQ(split.run.held_out_loss, one.run.held_out_loss) << s.what;
      EXPECT_EQ(split.skipped_total, one.skipped_total) << s.what;
      EXPECT_EQ(split.run.replayed_steps, one.run.replayed_steps) << s.what;
      // Only the first schedule is kept, whole.
      EXPECT_EQ(split.run.schedule.steps, per) << s.what;
      EXPECT_EQ(split.run.timeline.spans.size(), split.run.schedule.ops.size()) << s.what;
      // Each schedule ran its memory in its prediction's order: the peaks
      // over all of them are the predicted ones to the byte.
      ASSERT_TRUE(split.run.predicted_peak) << s.what;
      EXPECT_EQ(split.run.peak, *split.run.predicted_peak) << s.what;
    }
    if (s.training.precision == core::Precision::kFp16) {
      EXPECT_GT(one.skipped_total, 0) << "the scaler's state crossed a boundary";
    }
    if (s.plan.policy.speculative_update) {
      EXPECT_GT(one.run.replayed_steps, 0) << "replays crossed a boundary";
    }
  }
}

// Checkpoints fall at the steps asked for, whichever schedule holds them,
// and one at a schedule's end resumes to the uninterrupted run's losses.
TEST(ScheduleBoundaries, CheckpointsFallWhereAskedAndResume) {
  const Setting s = settings()[1];  // the delayed update: two parameter versions to carry
  const Trained straight = train_in_schedules(s, 7, 0, "straight");
  const fs::path root = scratch("boundary") / "checkpoints";
  TrainerOptions options;
  options.checkpoint_root = root;
  options.checkpoint_every = 2;
  const Trained split = train_in_schedules(s, 7, 3, "checkpointed", options);
  EXPECT_EQ(split.run.losses, straight.run.losses);
  std::vector<std::string> names;
  for (const std::string& dir : split.run.checkpoints) names.push_back(fs::path(dir).filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"step-000002", "step-000004", "step-000006", "step-000007"}));
  for (const char* from : {"step-000006", "step-000004"}) {  // at a schedule's end, inside one
    TrainerOptions resume;
    resume.resume = root / from;
    const Trained tail = train_in_schedules(s, 7, 2, std::string("resumed-") + from, resume);
    const auto first = static_cast<std::ptrdiff_t>(tail.run.first_step);
    EXPECT_EQ(tail.run.losses,
              std::vector<double>(straight.run.losses.begin() + first, straight.run.losses.end()))
        << from;
  }
}

// Without checkpoint_every, a run checkpoints at its end alone, resumed or
// not (a resumed run took its length for the interval and checkpointed at
// global multiples of it too: step 4 of a run resumed at 2).
TEST(ScheduleBoundaries, WithoutAnIntervalOnlyTheEndIsCheckpointed) {
  const Setting s = settings()[0];
  const fs::path root = scratch("at-the-end") / "checkpoints";
  TrainerOptions first;
  first.checkpoint_root = root;
  const Trained head = train_in_schedules(s, 2, 0, "head", first);
  ASSERT_EQ(head.run.checkpoints.size(), 1u);
  TrainerOptions resumed;
  resumed.checkpoint_root = root;
  resumed.resume = root / "step-000002";
  const Trained tail = train_in_schedules(s, 6, 0, "tail", resumed);
  std::vector<std::string> names;
  for (const std::string& dir : tail.run.checkpoints) names.push_back(fs::path(dir).filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"step-000006"});
}

// A stop asked for in the third step, the last of the first schedule: the
// run ends after a whole step, with one checkpoint of it (the one the stop
// writes, or the schedule's own: never both), and resuming it gives the
// losses of the run that was never stopped.
TEST(ScheduleBoundaries, AStopAtAScheduleEndIsCheckpointedOnceAndResumes) {
  const Setting s = settings()[0];
  const Trained straight = train_in_schedules(s, 6, 0, "unstopped");
  const fs::path root = scratch("stopped") / "checkpoints";
  std::atomic<int> stop{0};
  TrainerOptions options;
  options.checkpoint_root = root;
  options.checkpoint_every = 3;
  options.stop = &stop;
  const Fixture& f = fixture();
  auto b = backend("stopping");
  options.steps = 6;
  options.steps_per_schedule = 3;
  options.seed = 7;
  options.predict = [&](const core::Schedule& schedule) {
    return sim::simulate(schedule, f.machine).timeline;
  };
  options.on_step = [&](const StepReport& r) {
    if (r.step == 2) stop = 2;  // SIGINT's number
  };
  auto run = train(s.plan, f.machine, f.model, s.training, *b, options);
  ASSERT_TRUE(run) << core::to_string(run.error());
  EXPECT_TRUE(run->interrupted);
  ASSERT_EQ(run->losses.size(), 3u);
  EXPECT_EQ(run->losses, std::vector<double>(straight.run.losses.begin(), straight.run.losses.begin() + 3));
  ASSERT_EQ(run->checkpoints.size(), 1u);
  EXPECT_EQ(fs::path(run->checkpoints[0]).filename(), "step-000003");
  TrainerOptions resume;
  resume.resume = root / "step-000003";
  const Trained tail = train_in_schedules(s, 6, 3, "after-stop", resume);
  EXPECT_EQ(tail.run.losses, std::vector<double>(straight.run.losses.begin() + 3, straight.run.losses.end()));
}

// What a run schedules at once by default is bounded by ops, not steps: a
// long run of the tiny plans is a few schedules, a big model's many.
TEST(ScheduleBoundaries, TheDefaultScheduleHoldsAboutAMillionOps) {
  const Fixture& f = fixture();
  const core::PlanFile plan = plan_where(kNvmeOffload);
  const int64_t per = steps_per_run_schedule(plan, f.model, f.training);
  const core::Workload w(f.model, f.training.sequence_length);
  EXPECT_EQ(per, core::max_steps_in_one_schedule(plan.policy, w, f.training, kOpsPerRunSchedule));
  EXPECT_GT(per, 1000);
  EXPECT_LT(per, core::max_steps_in_one_schedule(plan.policy, w, f.training));
  // A real lowering of that many steps stays within the budget.
  auto schedule = core::lower(plan.policy, f.machine, w, f.training, {.steps = static_cast<int>(per)});
  ASSERT_TRUE(schedule) << core::to_string(schedule.error());
  EXPECT_LE(static_cast<int64_t>(schedule->ops.size()), kOpsPerRunSchedule);
  // The README's figure, for `make run`'s plan.
  const fs::path make_run_plan =
      fs::path(STOWAGE_TEST_DATA_DIR).parent_path().parent_path() / "plans" / "tiny-gpt-nvme.yaml";
  auto tiny = core::load_plan(make_run_plan, profiles_dir());
  ASSERT_TRUE(tiny) << core::to_string(tiny.error());
  const core::ProfileCatalog catalog(profiles_dir());
  EXPECT_EQ(steps_per_run_schedule(*tiny, *catalog.model("tiny-gpt"), *catalog.training("tiny")), 8333);
}

}  // namespace
}  // namespace stowage::executor
