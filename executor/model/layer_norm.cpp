// layer_norm.h. Row statistics and the backward's row sums accumulate in
// double: over d = 1024 float sums lose ~3 digits, which the
// finite-difference tests would see as noise. The element math is
// layer_norm_math.h's, which the CUDA kernels share.
#include "executor/model/layer_norm.h"

#include "executor/model/layer_norm_math.h"

namespace stowage::executor::model {

void layer_norm_forward(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd,
                        int64_t rows, int64_t d) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    double sum = 0.0;
    for (int64_t i = 0; i < d; ++i) sum += xr[i];
    const double mu = sum / static_cast<double>(d);
    double squares = 0.0;
    for (int64_t i = 0; i < d; ++i) squares += (xr[i] - mu) * (xr[i] - mu);
    const double var = squares / static_cast<double>(d);
    mean[r] = static_cast<float>(mu);
    rstd[r] = layer_norm_rstd(var);
    float* yr = y + r * d;
    for (int64_t i = 0; i < d; ++i) yr[i] = layer_norm_output(xr[i], mean[r], rstd[r], w[i], b[i]);
  }
}

// dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) with
// dxhat = dy * w: the standard LayerNorm gradient (as llm.c's
// layernorm_backward).
void layer_norm_backward(const float* x, const float* w, const float* mean, const float* rstd, const float* dy,
                         float* dx, float* dw, float* db, int64_t rows, int64_t d) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    const float* dyr = dy + r * d;
    double sum_dxhat = 0.0;
    double sum_dxhat_xhat = 0.0;
    for (int64_t i = 0; i < d; ++i) {
      const float xhat = layer_norm_xhat(xr[i], mean[r], rstd[r]);
      const float dxhat = dyr[i] * w[i];
      sum_dxhat += dxhat;
      sum_dxhat_xhat += static_cast<double>(dxhat) * xhat;
      dw[i] += dyr[i] * xhat;
      db[i] += dyr[i];
    }
    const float mean_dxhat = static_cast<float>(sum_dxhat / static_cast<double>(d));
    const float mean_dxhat_xhat = static_cast<float>(sum_dxhat_xhat / static_cast<double>(d));
    float* dxr = dx + r * d;
    for (int64_t i = 0; i < d; ++i)
      dxr[i] += layer_norm_input_grad(xr[i], mean[r], rstd[r], w[i], dyr[i], mean_dxhat, mean_dxhat_xhat);
  }
}

}  // namespace stowage::executor::model
