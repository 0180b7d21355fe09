// LayerNorm's per-element and per-row math (layer_norm.h), shared by the CPU
// model (layer_norm.cpp) and the CUDA kernels
// (executor/cuda/layer_norm_kernel.cu). Only the row sums are each
// backend's own: the CPU adds in index order, the GPU in a tree, both in
// double (so the float statistics they round to almost always agree).
#pragma once

#include "executor/host_device.h"

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

namespace stowage::executor::model {

inline constexpr float kLayerNormEps = 1e-5f;

// 1 / sqrt(var + eps), in double, rounded once to float. var: biased.
[[nodiscard]] STOWAGE_HOST_DEVICE inline float layer_norm_rstd(double var) {
#if defined(__CUDA_ARCH__)
  return static_cast<float>(1.0 / sqrt(var + static_cast<double>(kLayerNormEps)));
#else
  return static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(kLayerNormEps)));
#endif
}

// x_hat = (x - mean) * rstd.
[[nodiscard]] STOWAGE_HOST_DEVICE inline float layer_norm_xhat(float x, float mean, float rstd) {
  return (x - mean) * rstd;
}

// y = x_hat * w + b.
[[nodiscard]] STOWAGE_HOST_DEVICE inline float layer_norm_output(float x, float mean, float rstd, float w,
                                                                 float b) {
  return layer_norm_xhat(x, mean, rstd) * w + b;
}

// What dx gains: rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),
// dxhat = dy * w (the standard LayerNorm gradient, as llm.c's
// layernorm_backward).
[[nodiscard]] STOWAGE_HOST_DEVICE inline float layer_norm_input_grad(float x, float mean, float rstd, float w,
                                                                     float dy, float mean_dxhat,
                                                                     float mean_dxhat_xhat) {
  const float xhat = layer_norm_xhat(x, mean, rstd);
  return rstd * (dy * w - mean_dxhat - xhat * mean_dxhat_xhat);
}

}  // namespace stowage::executor::model
