// One element of Adam/AdamW, shared by the CPU optimizer's scalar path and
// tails (cpu_adam.cpp, whose AVX2 and AVX-512 loops repeat these operations
// line by line) and the CUDA Adam kernel (executor/cuda/adam_kernel.cu), so
// the CPU tests check the arithmetic the GPU runs. Every multiply that feeds
// an addition is an explicit fused multiply-add or feeds only the addend of
// one, so no compiler's contraction setting can round it differently.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/training_spec.h"
#include "executor/host_device.h"

namespace stowage::executor {

// The step's scalars, computed in double once per call and rounded to float,
// as PyTorch turns Python-float hyperparameters into float32 operands.
struct AdamStepConstants {
  float inv_grad_scale;   // 1 / grad_scale: the loss scale's unscaling
  float weight_decay;     // kAdam: g += weight_decay * param
  float lr_weight_decay;  // kAdamW: param -= lr * weight_decay * param
  float one_minus_beta1;
  float one_minus_beta2;
  float step_size;              // lr / (1 - beta1^t)
  float sqrt_bias_correction2;  // sqrt(1 - beta2^t)
  float eps;
};

// Host only. `step` is 1-based; grad_scale > 0. Unscaling multiplies by
// float(1 / grad_scale), as torch.cuda.amp.GradScaler does (exact for the
// power-of-two scales dynamic scaling uses).
[[nodiscard]] inline AdamStepConstants adam_step_constants(const core::AdamConfig& a, int64_t step,
                                                           float grad_scale) {
  const double t = static_cast<double>(step);
  const double bias_correction1 = 1.0 - std::pow(a.beta1, t);
  const double bias_correction2 = 1.0 - std::pow(a.beta2, t);
  return {
      .inv_grad_scale = static_cast<float>(1.0 / static_cast<double>(grad_scale)),
      .weight_decay = static_cast<float>(a.weight_decay),
      .lr_weight_decay = static_cast<float>(a.learning_rate * a.weight_decay),
      .one_minus_beta1 = static_cast<float>(1.0 - a.beta1),
      .one_minus_beta2 = static_cast<float>(1.0 - a.beta2),
      .step_size = static_cast<float>(a.learning_rate / bias_correction1),
      .sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2)),
      .eps = static_cast<float>(a.eps),
  };
}

// One element of PyTorch's Adam/AdamW; returns the new master weight and
// updates the moments. `grad` still carries the loss scale.
//
// The moments move as PyTorch's implementation moves m (exp_avg.lerp_):
// m + (1 - beta1) * (g - m), whose weights sum to exactly 1. The textbook
// beta2 * v + (1 - beta2) * g^2 with both factors rounded to float does not:
// float(0.999) + float(0.001) = 1 + 1.3e-8, which biases v's steady state by
// 1.3e-8 / 0.001 = 1.3e-5.
//
// AdamW's decay and the Adam update reach the parameter together, in one
// rounding: param - (lr*wd*param + step_size*ratio). Multiplying by a rounded
// float(1 - lr*wd) instead, as a float32 param.mul_() does, is off by up to
// 3e-8 relative per step, which 100 steps grow into 3e-6.
template <core::OptimizerKind kOptimizer>
[[nodiscard]] STOWAGE_HOST_DEVICE inline float adam_update_one(const AdamStepConstants& c, float param,
                                                               float grad, float& m, float& v) {
  float g = grad * c.inv_grad_scale;
  if constexpr (kOptimizer == core::OptimizerKind::kAdam) g = fused_multiply_add(c.weight_decay, param, g);
  m = fused_multiply_add(c.one_minus_beta1, g - m, m);
  v = fused_multiply_add(c.one_minus_beta2, fused_multiply_add(g, g, -v), v);
  const float denom = rounded_divide(rounded_sqrt(v), c.sqrt_bias_correction2) + c.eps;
  const float ratio = rounded_divide(m, denom);
  if constexpr (kOptimizer == core::OptimizerKind::kAdam)
    return fused_multiply_add(-c.step_size, ratio, param);
  else
    return param - fused_multiply_add(c.lr_weight_decay, param, c.step_size * ratio);
}

}  // namespace stowage::executor
