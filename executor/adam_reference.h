// The float64 twin of adam_step (STYLE.md §11): PyTorch's documented Adam and
// AdamW element by element, in double throughout, written as the documentation's
// pseudocode reads rather than as the kernel computes it. Tests run it beside
// the float32 kernel to measure how far float rounding takes the kernel.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "executor/cpu_adam.h"
#include "executor/half_bits.h"

namespace stowage::executor {

// One parameter's state: theta, m, v of the documentation.
struct AdamReferenceState {
  double param = 0;
  double m = 0;
  double v = 0;
};

// Step t (1-based) of torch.optim.Adam / torch.optim.AdamW
// (https://pytorch.org/docs/stable/generated/torch.optim.Adam.html, .AdamW.html,
// amsgrad = maximize = False) on every element of `state`. grad[i] is
// multiplied by the loss scale, which is divided out first. Lengths match.
inline void adam_reference_step(std::span<AdamReferenceState> state, std::span<const float> grad,
                                const AdamHyper& hyper, int64_t step, double grad_scale) {
  const core::AdamConfig& a = hyper.config;
  const double bias_correction1 = 1 - std::pow(a.beta1, static_cast<double>(step));
  const double bias_correction2 = 1 - std::pow(a.beta2, static_cast<double>(step));
  for (size_t i = 0; i < state.size(); ++i) {
    AdamReferenceState& s = state[i];
    double g = static_cast<double>(grad[i]) / grad_scale;
    if (hyper.optimizer == core::OptimizerKind::kAdam) {
      g += a.weight_decay * s.param;  // Adam: the L2 penalty's gradient joins g
    } else {
      s.param -= a.learning_rate * a.weight_decay * s.param;  // AdamW: decoupled decay
    }
    s.m = a.beta1 * s.m + (1 - a.beta1) * g;
    s.v = a.beta2 * s.v + (1 - a.beta2) * g * g;
    const double m_hat = s.m / bias_correction1;
    const double v_hat = s.v / bias_correction2;
    s.param -= a.learning_rate * m_hat / (std::sqrt(v_hat) + a.eps);  // eps outside the sqrt of v_hat
  }
}

// The twin of adam_step_bf16_moments: the same step in double, the update
// taking the moments before they are stored, then m and v rounded to bf16
// (through fp32, round to nearest even) as the kernel stores them. The
// kernel's moments are within one bf16 unit in the last place of these
// (both round nearly the same value; the double one is nearer the truth).
inline void adam_reference_step_bf16_moments(std::span<AdamReferenceState> state, std::span<const float> grad,
                                             const AdamHyper& hyper, int64_t step, double grad_scale) {
  adam_reference_step(state, grad, hyper, step, grad_scale);
  for (AdamReferenceState& s : state) {
    s.m = static_cast<double>(bf16_value(bf16_bits(static_cast<float>(s.m))));
    s.v = static_cast<double>(bf16_value(bf16_bits(static_cast<float>(s.v))));
  }
}

}  // namespace stowage::executor
