// rms_norm.h. Row sums accumulate in double, as layer_norm.cpp's do, so the
// finite-difference tests see the kernel and not float rounding.
#include "executor/model/rms_norm.h"

#include <cmath>

namespace stowage::executor::model {

void rms_norm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t d) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    double squares = 0.0;
    for (int64_t i = 0; i < d; ++i) squares += static_cast<double>(xr[i]) * xr[i];
    const double mean_square = squares / static_cast<double>(d);
    rstd[r] = static_cast<float>(1.0 / std::sqrt(mean_square + static_cast<double>(kRmsNormEps)));
    float* yr = y + r * d;
    for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] * rstd[r] * w[i];
  }
}

void rms_norm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx,
                       float* dw, int64_t rows, int64_t d) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    const float* dyr = dy + r * d;
    double sum_g_xhat = 0.0;
    for (int64_t i = 0; i < d; ++i) {
      const float xhat = xr[i] * rstd[r];
      sum_g_xhat += static_cast<double>(dyr[i] * w[i]) * xhat;
      dw[i] += dyr[i] * xhat;
    }
    const float mean_g_xhat = static_cast<float>(sum_g_xhat / static_cast<double>(d));
    float* dxr = dx + r * d;
    for (int64_t i = 0; i < d; ++i) {
      const float xhat = xr[i] * rstd[r];
      dxr[i] += rstd[r] * (dyr[i] * w[i] - xhat * mean_g_xhat);
    }
  }
}

}  // namespace stowage::executor::model
