// Test helper: analytic gradients against the five-point finite-difference
// stencil (see gpt_model_gradient_test.cpp's opening comment for why that
// stencil, and how the step and tolerance floor are chosen), and the random
// inputs the gradient tests share.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "executor/model/rng.h"

namespace stowage::executor::model::testing {

inline std::vector<float> normals(size_t n, uint64_t seed, double std_dev) {
  SplitMix64 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(std_dev * rng.normal());
  return v;
}

inline std::vector<int32_t> random_tokens(size_t n, uint64_t seed, int64_t vocab) {
  SplitMix64 rng(seed);
  std::vector<int32_t> v(n);
  for (int32_t& t : v) t = static_cast<int32_t>(rng.below(static_cast<uint64_t>(vocab)));
  return v;
}

// Pushes parameters away from GPT-2's tiny init so that attention is far
// from uniform and GELU far from linear: the curved regions a wrong
// derivative shows up in.
inline void roughen(std::span<float> params, uint64_t seed) {
  const std::vector<float> noise = normals(params.size(), seed, 0.3);
  for (size_t i = 0; i < params.size(); ++i) params[i] += noise[i];
}

inline double dot(std::span<const float> a, std::span<const float> b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Compares analytic[i] with the five-point difference of loss() in x[i] for
// each i in `indices`; reports the worst ones.
inline void check_gradient(std::span<float> x, std::span<const float> analytic,
                           const std::function<double()>& loss, const std::vector<size_t>& indices, float eps,
                           double floor, const char* what) {
  ASSERT_EQ(x.size(), analytic.size()) << what;
  int failures = 0;
  double worst = 0.0;
  double largest = 0.0;
  for (size_t i : indices) {
    const float saved = x[i];
    auto at = [&](float h) {
      x[i] = saved + h;
      const double l = loss();
      x[i] = saved;
      return l;
    };
    const double d1 = at(eps) - at(-eps);
    const double d2 = at(2 * eps) - at(-2 * eps);
    const double numeric = (8 * d1 - d2) / (12.0 * static_cast<double>(eps));
    const double error = std::abs(analytic[i] - numeric);
    const double allowed = 1e-2 * std::abs(numeric) + floor;
    worst = std::max(worst, error / allowed);
    largest = std::max(largest, std::abs(numeric));
    if (error > allowed && ++failures <= 5) {
      ADD_FAILURE() << what << "[" << i << "]: analytic " << analytic[i] << ", numeric " << numeric;
    }
  }
  EXPECT_EQ(failures, 0) << what << ": " << failures << " of " << indices.size() << " elements off";
  EXPECT_GT(largest, 20 * floor) << what << ": gradients too small for the check to mean anything";
  ::testing::Test::RecordProperty(std::string(what) + "_worst_error_over_allowed", std::to_string(worst));
}

inline std::vector<size_t> all(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace stowage::executor::model::testing
