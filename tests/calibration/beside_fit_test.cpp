#include "calibration/beside_fit.h"

#include <gtest/gtest.h>

namespace stowage::calibration {
namespace {

// Copies of three sizes that moved none, half or all of their bytes beside
// a compute op (which ran from their start), timed as the simulator would
// time them: the fit finds both rates and the fixed cost.
TEST(BesideFit, RecoversTheRateAloneTheRateBesideComputeAndTheFixedCost) {
  const double rate = 6e9, beside_rate = 4e9, latency = 30e-6;
  std::vector<BesidePoint> points;
  for (double bytes : {1e6, 8e6, 14e6}) {
    for (double share : {0.0, 0.5, 1.0}) {
      const double beside = bytes * share / beside_rate;
      BesidePoint p{.work = bytes, .seconds = beside + bytes * (1 - share) / rate + latency};
      if (beside > 0) p.beside.push_back({0, beside});
      points.push_back(p);
    }
  }
  const std::optional<BesideFit> f = fit_beside(points);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->rate, rate, rate * 1e-6);
  ASSERT_TRUE(f->beside_rate.has_value());
  EXPECT_NEAR(*f->beside_rate, beside_rate, beside_rate * 1e-6);
  EXPECT_NEAR(f->latency, latency, 1e-10);
  EXPECT_NEAR(f->rms_residual, 0, 1e-10);
  EXPECT_EQ(f->ops, 9);
}

// Copies never beside compute (a real GPU, or a placement that overlaps
// none): one line, no beside rate. Copies that ran faster beside compute
// than alone: one line over all of them, not a beside rate above the
// alone one.
TEST(BesideFit, OneLineWhereCopiesBesideComputeAreNotSeenToBeSlower) {
  std::vector<BesidePoint> alone{{.work = 1e6, .seconds = 1e-6 + 1e6 / 5e9},
                               {.work = 9e6, .seconds = 1e-6 + 9e6 / 5e9}};
  std::optional<BesideFit> f = fit_beside(alone);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->beside_rate.has_value());
  EXPECT_NEAR(f->rate, 5e9, 5e9 * 1e-9);
  EXPECT_NEAR(f->latency, 1e-6, 1e-12);

  std::vector<BesidePoint> faster_beside;
  for (double bytes : {1e6, 9e6}) {
    faster_beside.push_back({.work = bytes, .seconds = bytes / 5e9});
    faster_beside.push_back({.work = bytes, .seconds = bytes / 6e9, .beside = {{0, bytes / 6e9}}});
  }
  f = fit_beside(faster_beside);
  ASSERT_TRUE(f.has_value());
  EXPECT_FALSE(f->beside_rate.has_value());
  EXPECT_GT(f->rate, 5e9);
  EXPECT_LT(f->rate, 6e9);
}

// A 3 KiB copy whose thread the OS left waiting for milliseconds (issue
// 14's delayed update: 4.6 ms for a copy of 10 µs) is left out, not
// spread over every copy as a fixed cost: the fit is the one without it.
// A copy slower by less than five spreads of the others stays in.
TEST(BesideFit, LeavesOutACopyFarSlowerThanTheRestFit) {
  std::vector<BesidePoint> points;
  for (int k = 0; k < 5; ++k) {
    for (double bytes : {3e3, 0.8e6, 14e6}) {
      const double noise = (k % 2 == 0 ? 1 : -1) * 20e-6 * (1 + k);  // so that the spread is not zero
      points.push_back({.work = bytes, .seconds = 10e-6 + bytes / 6e9 + noise});
    }
  }
  const std::optional<BesideFit> clean = fit_beside(points);
  ASSERT_TRUE(clean.has_value());
  points.push_back({.work = 3e3, .seconds = 4.6e-3});
  const std::optional<BesideFit> with_stall = fit_beside(points);
  ASSERT_TRUE(with_stall.has_value());
  EXPECT_DOUBLE_EQ(with_stall->latency, clean->latency);
  EXPECT_DOUBLE_EQ(with_stall->rate, clean->rate);
  EXPECT_EQ(with_stall->ops, 15);

  points.back().seconds = clean->latency + 3e3 / clean->rate + 100e-6;  // within the spread
  EXPECT_EQ(fit_beside(points)->ops, 16);
}

// Without a fixed cost (the layer passes beside a measured rate curve):
// ops timed with none are recovered exactly, the plane and the line
// through the origin; ops timed with one get none, their rates lower.
TEST(BesideFit, WithoutAFixedCostEveryFitGoesThroughTheOrigin) {
  const double rate = 1.1, beside_rate = 0.9;
  std::vector<BesidePoint> points;
  for (double work : {0.02, 0.04, 0.3}) {
    for (double share : {0.0, 0.5}) {
      const double beside = work * share / beside_rate;
      BesidePoint p{.work = work, .seconds = beside + work * (1 - share) / rate};
      if (beside > 0) p.beside.push_back({0, beside});
      points.push_back(p);
    }
  }
  std::optional<BesideFit> f = fit_beside(points, /*fixed_cost=*/false);
  ASSERT_TRUE(f && f->beside_rate);
  EXPECT_NEAR(f->rate, rate, 1e-9);
  EXPECT_NEAR(*f->beside_rate, beside_rate, 1e-9);
  EXPECT_EQ(f->latency, 0);

  std::vector<BesidePoint> alone{{.work = 0.02, .seconds = 2e-3 + 0.02 / rate}, {.work = 0.3, .seconds = 2e-3 + 0.3 / rate}};
  f = fit_beside(alone, /*fixed_cost=*/false);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->latency, 0);
  EXPECT_LT(f->rate, rate);
  EXPECT_NEAR(fit_beside(alone)->latency, 2e-3, 1e-12) << "with a fixed cost, the line finds it";
}

TEST(BesideFit, NothingToFitFromFewerThanTwoCopies) {
  EXPECT_FALSE(fit_beside({}).has_value());
  EXPECT_FALSE(fit_beside({{.work = 1e6, .seconds = 1e-3}}).has_value());
}

// Overlapping others count once; a span before, between and after them
// overlaps nothing there; the parts are from the span's start.
TEST(Overlaps, GivesThePartsOfEachSpanThatAnyOtherRanBeside) {
  const std::vector<Interval> others{{.start = 1, .end = 3}, {.start = 2, .end = 4}, {.start = 6, .end = 7}};
  const std::vector<std::vector<Interval>> got =
      overlaps({{0, 1}, {0, 10}, {3, 6.5}, {4, 6}, {6.5, 8}}, others);
  auto seconds = [](const std::vector<Interval>& parts) {
    std::vector<std::pair<double, double>> out;
    for (const Interval& i : parts) out.emplace_back(i.start, i.end);
    return out;
  };
  using Parts = std::vector<std::pair<double, double>>;
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(seconds(got[0]), Parts{});
  EXPECT_EQ(seconds(got[1]), (Parts{{1, 4}, {6, 7}}));
  EXPECT_EQ(seconds(got[2]), (Parts{{0, 1}, {3, 3.5}}));
  EXPECT_EQ(seconds(got[3]), Parts{});
  EXPECT_EQ(seconds(got[4]), (Parts{{0, 0.5}}));
}

}  // namespace
}  // namespace stowage::calibration
