// swiglu.h. The sigmoid is 1 / (1 + exp(-z)), which saturates to 0 or 1
// (never NaN) for large |z| in float.
#include "executor/model/swiglu.h"

#include <cmath>

namespace stowage::executor::model {
namespace {

float sigmoid(float z) {
  return 1.0f / (1.0f + std::exp(-z));
}

}  // namespace

void swiglu_forward(const float* gate, const float* up, float* h, int64_t n) {
  for (int64_t i = 0; i < n; ++i) h[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

void swiglu_backward(const float* gate, const float* up, const float* dh, float* d_gate, float* d_up,
                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float s = sigmoid(gate[i]);
    d_up[i] = dh[i] * gate[i] * s;
    d_gate[i] = dh[i] * up[i] * s * (1.0f + gate[i] * (1.0f - s));
  }
}

}  // namespace stowage::executor::model
