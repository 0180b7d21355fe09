// LayerNorm over the last dimension (Ba, Kiros and Hinton 2016,
// arXiv:1607.06450; PyTorch nn.LayerNorm: biased variance), with GPT-2's
// epsilon 1e-5 (its config's layer_norm_epsilon).
#pragma once

#include <cstdint>

#include "executor/model/layer_norm_math.h"  // kLayerNormEps

namespace stowage::executor::model {


// x, y [rows, d]; w, b [d]; mean, rstd [rows] written: the statistics
// backward needs (rstd = 1 / sqrt(var + eps)).
void layer_norm_forward(const float* x, const float* w, const float* b, float* y, float* mean, float* rstd,
                        int64_t rows, int64_t d);

// From dy [rows, d]: dx [rows, d], dw [d] and db [d] are ADDED to.
// Recomputes x_hat = (x - mean) * rstd exactly as forward did.
void layer_norm_backward(const float* x, const float* w, const float* mean, const float* rstd, const float* dy,
                         float* dx, float* dw, float* db, int64_t rows, int64_t d);

}  // namespace stowage::executor::model
