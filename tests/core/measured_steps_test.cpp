// A measured run's steps: lengths that add up to the run, and the median
// after the first as its steady-state step (core/measured_steps.h).
#include "core/measured_steps.h"

#include <gtest/gtest.h>

#include <vector>

namespace stowage::core {
namespace {

std::vector<SimTime> lengths_of(const std::vector<MeasuredStep>& steps) {
  std::vector<SimTime> out;
  for (const MeasuredStep& s : steps) out.push_back(s.length);
  return out;
}

TEST(MeasuredSteps, AStepEndsWithItsLastOpAndRunsFromTheEndOfTheOneBefore) {
  StepEnds ends;
  // Ops in any order; step 1 overlaps step 0's tail.
  ends.add(1, 250);
  ends.add(0, 100);
  ends.add(0, 120);
  ends.add(2, 400);
  ends.add(1, 90);
  const std::vector<MeasuredStep> steps = ends.steps(10);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].end, 120);
  EXPECT_EQ(steps[1].end, 250);
  EXPECT_EQ(lengths_of(steps), (std::vector<SimTime>{110, 130, 150}));
  // They add up to the run: its start to the last end.
  EXPECT_EQ(steps[0].length + steps[1].length + steps[2].length, 400 - 10);
}

TEST(MeasuredSteps, StepsWithoutOpsAreLeftOutAndNegativeStepsCountAsTheFirst) {
  StepEnds ends;
  ends.add(-1, 50);
  ends.add(3, 200);
  const std::vector<MeasuredStep> steps = ends.steps(0);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].step, 0);
  EXPECT_EQ(steps[1].step, 3);
  EXPECT_EQ(lengths_of(steps), (std::vector<SimTime>{50, 150}));
}

TEST(MeasuredSteps, TheSteadyStepIsTheMedianAfterTheFirst) {
  // The first (warm-up) is left out, whatever its length.
  EXPECT_EQ(steady_step_length(std::vector<SimTime>{900, 10, 30, 20}), 20);
  EXPECT_EQ(steady_step_length(std::vector<SimTime>{1, 10, 30, 20}), 20);
  // Not the mean, nor the last two: one slow step moves neither the median.
  EXPECT_EQ(steady_step_length(std::vector<SimTime>{5, 10, 10, 10, 10, 100}), 10);
  // An even count takes the upper middle.
  EXPECT_EQ(steady_step_length(std::vector<SimTime>{5, 10, 40}), 40);
  EXPECT_EQ(steady_step_length(std::vector<SimTime>{7}), 7);
  EXPECT_EQ(steady_step_length(std::vector<SimTime>{}), 0);
}

}  // namespace
}  // namespace stowage::core
