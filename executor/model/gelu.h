// GELU with the tanh approximation GPT-2 uses (Hendrycks and Gimpel 2016,
// arXiv:1606.08415 §2; PyTorch nn.GELU(approximate='tanh')):
//   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#pragma once

#include <cstdint>

namespace stowage::executor::model {

// x, y [n].
void gelu_forward(const float* x, float* y, int64_t n);

// dx [n] WRITTEN: dy * gelu'(x).
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n);

}  // namespace stowage::executor::model
