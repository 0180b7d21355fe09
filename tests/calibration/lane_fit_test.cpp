// Lane-by-lane fitting (lane_fit.h): a "measured" run made by the simulator
// with other cost parameters, seen only as lane totals, is matched after the
// fit, lane by lane and in step time, by the schedule simulated with the
// fitted parameters; lanes the measured run does not use keep their values.
#include "calibration/lane_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "calibration/lane_compare.h"
#include "tests/calibration/calibration_fixture.h"

namespace stowage::calibration {
namespace {

using core::Lane;

TEST(LaneFit, ASlowerMachineSeenOnlyByLaneIsMatched) {
  const core::CostParameters start;
  core::CostParameters slower = start;
  slower.matmul_efficiency /= 3;
  slower.cpu_core_rate = core::FlopsPerSecond(slower.cpu_core_rate.value() / 2);
  slower.dram_efficiency /= 2;
  slower.nvme_efficiency /= 1.5;
  const testing::Simulated truth = testing::simulated(slower);
  const TraceMetrics measured = trace_metrics(truth.schedule, truth.timeline);
  const FitReport r = fit_lanes(truth.schedule, truth.machine, start, measured);
  const testing::Simulated fitted = testing::simulated(r.params);
  const TraceMetrics after = trace_metrics(fitted.schedule, fitted.timeline);
  for (Lane lane : {Lane::kCpuOptim, Lane::kNvmeRead}) {
    const double want = busy_per_step(measured, lane), got = busy_per_step(after, lane);
    EXPECT_NEAR(got / want, 1.0, 0.03) << core::to_string(lane);
  }
  EXPECT_NEAR(static_cast<double>(after.steady_step_time()) / static_cast<double>(measured.steady_step_time()), 1.0,
              0.01);
  // Before the fit the step was far off: the test could fail.
  const TraceMetrics before = trace_metrics(truth.schedule, testing::simulated(start).timeline);
  EXPECT_GT(std::abs(compare_lanes(before, measured).step_error), 0.2);
  EXPECT_EQ(r.params.comm_efficiency, start.comm_efficiency);  // one rank: no collectives to fit
}

}  // namespace
}  // namespace stowage::calibration
