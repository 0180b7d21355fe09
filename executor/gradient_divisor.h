// What an optimizer divides a step's 16-bit gradients by before Adam reads
// them. The gradients arrive as the sum over the step's micro-batches of
// d(loss * loss_scale)/d(param); Adam wants their mean, unscaled, and
// clipped to a global L2 norm of max_grad_norm as
// torch.nn.utils.clip_grad_norm_ does (coefficient max_norm / (norm + 1e-6),
// applied only when below 1; DeepSpeed's gradient_clipping is the same).
#pragma once

#include <cmath>
#include <cstdint>

namespace stowage::executor {

// `sum_squares`: of the 16-bit gradient values as stored (scaled, summed).
// `max_grad_norm` <= 0: no clipping.
[[nodiscard]] inline double gradient_divisor(double loss_scale, int64_t accumulation, double sum_squares,
                                             double max_grad_norm) {
  const double carried = loss_scale * static_cast<double>(accumulation);
  if (max_grad_norm <= 0) return carried;
  const double norm = std::sqrt(sum_squares) / carried;  // of the mean, unscaled gradient
  const double clip = max_grad_norm / (norm + 1e-6);
  return clip < 1 ? carried / clip : carried;
}

}  // namespace stowage::executor
