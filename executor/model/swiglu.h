// The SwiGLU gate of Llama's MLP (Shazeer 2020, arXiv:2002.05202 §2; Hugging
// Face LlamaMLP: down_proj(silu(gate_proj(x)) * up_proj(x))):
//   h = silu(gate) * up,  silu(z) = z * sigmoid(z).
#pragma once

#include <cstdint>

namespace stowage::executor::model {

// gate, up, h [n].
void swiglu_forward(const float* gate, const float* up, float* h, int64_t n);

// From dh [n]: d_gate and d_up [n] WRITTEN, with
// silu'(z) = sigmoid(z) * (1 + z * (1 - sigmoid(z))).
void swiglu_backward(const float* gate, const float* up, const float* dh, float* d_gate, float* d_up,
                     int64_t n);

}  // namespace stowage::executor::model
