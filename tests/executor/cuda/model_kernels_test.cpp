// GELU and LayerNorm kernels against the CPU model (model/gelu.cpp,
// model/layer_norm.cpp), which runs the same element math
// (gelu_math.h, layer_norm_math.h) with no contraction on either side
// (--fmad=false). What may differ, and the bound each test allows:
//   GELU: tanh is written out in gelu_math.h (no library call since
//     2026-12-05), so the two sides should now agree bit for bit. Until a
//     GPU run shows that, the bound stays the one for two library tanhs
//     each within 2 ulp (CUDA C Programming Guide, "Mathematical
//     Functions"): |t_gpu - t_cpu| <= 4 ulp(1) = 2^-22; y moves by 0.5 |x|
//     of that, dx by |dy| (0.5 + |x| |du|) of it; plus 2 ulp of the result
//     for the roundings after.
//   LayerNorm: the row sums (double, index order on the CPU, a tree on the
//     GPU) differ by ~d 2^-53 relative, so mean and rstd, rounded to float,
//     agree except within that of a rounding tie: at most 1 ulp apart.
//     y, dx then move by 1 ulp of mean and of rstd times the terms they
//     scale; 1e-5 absolute on these O(1) inputs is over 50 times that.
#include "executor/cuda/model_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "executor/model/gelu.h"
#include "executor/model/gelu_math.h"
#include "executor/model/layer_norm.h"
#include "tests/executor/cuda/cuda_test_support.h"

namespace stowage::executor::cuda {
namespace {

constexpr float kTanhGap = 0x1.0p-22f;  // 4 ulp of 1

float ulp(float x) {
  return std::nextafter(std::fabs(x), INFINITY) - std::fabs(x);
}

TEST(GeluKernel, ForwardMatchesTheCpuWithinTanhsUlps) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const int64_t n : kOddSizes) {
    const std::vector<float> x = random_floats(n, -6, 6, 9);
    std::vector<float> cpu(x.size());
    model::gelu_forward(x.data(), cpu.data(), n);
    DeviceArray<float> d_x(x), d_y(std::vector<float>(x.size()));
    launch_gelu_forward(d_x.get(), d_y.get(), n, nullptr);
    const std::vector<float> gpu = d_y.to_host();
    for (size_t i = 0; i < x.size(); ++i) {
      const float bound = 0.5f * std::fabs(x[i]) * kTanhGap + 2 * ulp(cpu[i]);
      ASSERT_LE(std::fabs(gpu[i] - cpu[i]), bound) << "x " << x[i] << " n " << n;
    }
  }
}

TEST(GeluKernel, BackwardMatchesTheCpuWithinTanhsUlps) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const int64_t n : kOddSizes) {
    const std::vector<float> x = random_floats(n, -6, 6, 10);
    const std::vector<float> dy = random_floats(n, -1, 1, 11);
    std::vector<float> cpu(x.size());
    model::gelu_backward(x.data(), dy.data(), cpu.data(), n);
    DeviceArray<float> d_x(x), d_dy(dy), d_dx(std::vector<float>(x.size()));
    launch_gelu_backward(d_x.get(), d_dy.get(), d_dx.get(), n, nullptr);
    const std::vector<float> gpu = d_dx.to_host();
    for (size_t i = 0; i < x.size(); ++i) {
      const float du = model::kGeluSqrt2OverPi * (1 + 3 * model::kGeluCubic * x[i] * x[i]);
      const float bound = std::fabs(dy[i]) * (0.5f + std::fabs(x[i]) * du) * kTanhGap + 4 * ulp(cpu[i]);
      ASSERT_LE(std::fabs(gpu[i] - cpu[i]), bound) << "x " << x[i] << " n " << n;
    }
  }
}

struct Shape {
  int64_t rows;
  int64_t d;
};
constexpr Shape kShapes[] = {{1, 1}, {7, 7}, {3, 1000003}, {1001, 769}};

void expect_near_all(const std::vector<float>& gpu, const std::vector<float>& cpu, float abs_bound,
                     const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < gpu.size(); ++i)
    ASSERT_LE(std::fabs(gpu[i] - cpu[i]), abs_bound * (1 + std::fabs(cpu[i]))) << what << " [" << i << "]";
}

void expect_within_an_ulp(const std::vector<float>& gpu, const std::vector<float>& cpu, const char* what) {
  for (size_t i = 0; i < gpu.size(); ++i)
    ASSERT_LE(std::fabs(gpu[i] - cpu[i]), ulp(cpu[i])) << what << " [" << i << "]";
}

TEST(LayerNormKernel, ForwardMatchesTheCpu) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const Shape s : kShapes) {
    SCOPED_TRACE(testing::Message() << s.rows << " x " << s.d);
    const std::vector<float> x = random_floats(s.rows * s.d, -2, 2, 12);
    const std::vector<float> w = random_floats(s.d, -1, 1, 13);
    const std::vector<float> b = random_floats(s.d, -1, 1, 14);
    std::vector<float> y(x.size()), mean(static_cast<size_t>(s.rows)), rstd(mean.size());
    model::layer_norm_forward(x.data(), w.data(), b.data(), y.data(), mean.data(), rstd.data(), s.rows, s.d);
    DeviceArray<float> d_x(x), d_w(w), d_b(b), d_y(std::vector<float>(y.size()));
    DeviceArray<float> d_mean(std::vector<float>(mean.size())), d_rstd(std::vector<float>(mean.size()));
    launch_layer_norm_forward(d_x.get(), d_w.get(), d_b.get(), d_y.get(), d_mean.get(), d_rstd.get(), s.rows,
                              s.d, nullptr);
    expect_within_an_ulp(d_mean.to_host(), mean, "mean");
    expect_within_an_ulp(d_rstd.to_host(), rstd, "rstd");
    expect_near_all(d_y.to_host(), y, 1e-5f, "y");
  }
}

TEST(LayerNormKernel, BackwardMatchesTheCpu) {
  STOWAGE_REQUIRE_CUDA_DEVICE();
  for (const Shape s : kShapes) {
    SCOPED_TRACE(testing::Message() << s.rows << " x " << s.d);
    const std::vector<float> x = random_floats(s.rows * s.d, -2, 2, 15);
    const std::vector<float> w = random_floats(s.d, -1, 1, 16);
    const std::vector<float> b = random_floats(s.d, -1, 1, 17);
    const std::vector<float> dy = random_floats(s.rows * s.d, -1, 1, 18);
    std::vector<float> y(x.size()), mean(static_cast<size_t>(s.rows)), rstd(mean.size());
    model::layer_norm_forward(x.data(), w.data(), b.data(), y.data(), mean.data(), rstd.data(), s.rows, s.d);
    // Both sides from the CPU's statistics, so only the backward differs.
    std::vector<float> dx(x.size(), 0.5f), dw(w.size(), 0.25f), db(w.size(), -0.25f);
    DeviceArray<float> d_x(x), d_w(w), d_mean(mean), d_rstd(rstd), d_dy(dy), d_dx(dx), d_dw(dw), d_db(db);
    model::layer_norm_backward(x.data(), w.data(), mean.data(), rstd.data(), dy.data(), dx.data(), dw.data(),
                               db.data(), s.rows, s.d);
    launch_layer_norm_backward(d_x.get(), d_w.get(), d_mean.get(), d_rstd.get(), d_dy.get(), d_dx.get(),
                               d_dw.get(), d_db.get(), s.rows, s.d, nullptr);
    // dw, db: the same products added in the same (row) order: the same bits.
    EXPECT_EQ(d_dw.to_host(), dw);
    EXPECT_EQ(d_db.to_host(), db);
    // dx: the row means of the backward are sums in a different order (1 ulp as above).
    expect_near_all(d_dx.to_host(), dx, 1e-5f, "dx");
  }
}

}  // namespace
}  // namespace stowage::executor::cuda
