// gelu.h over the element math of gelu_math.h, which the CUDA kernels share.
#include "executor/model/gelu.h"

#include "executor/model/gelu_math.h"

namespace stowage::executor::model {

void gelu_forward(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = gelu_value(x[i]);
}

void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dx[i] = gelu_input_grad(x[i], dy[i]);
}

}  // namespace stowage::executor::model
