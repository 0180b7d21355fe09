// RMSNorm over the last dimension (Zhang and Sennrich 2019,
// arXiv:1910.07467; Hugging Face LlamaRMSNorm): y = w * x / sqrt(mean(x^2)
// + eps), no mean subtraction and no bias, with Llama's epsilon 1e-5 (the
// rms_norm_eps of Llama 2 and Llama 3's config.json).
#pragma once

#include <cstdint>

namespace stowage::executor::model {

inline constexpr float kRmsNormEps = 1e-5f;

// x, y [rows, d]; w [d]; rstd [rows] written: 1 / sqrt(mean(x^2) + eps),
// the statistic backward needs.
void rms_norm_forward(const float* x, const float* w, float* y, float* rstd, int64_t rows, int64_t d);

// From dy [rows, d]: dx [rows, d] and dw [d] are ADDED to. With x_hat = x *
// rstd and g = dy * w: dx = rstd * (g - x_hat * mean(g * x_hat)),
// dw += dy * x_hat.
void rms_norm_backward(const float* x, const float* w, const float* rstd, const float* dy, float* dx,
                       float* dw, int64_t rows, int64_t d);

}  // namespace stowage::executor::model
