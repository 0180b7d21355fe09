// cross_entropy.h. The loss of a row is logsumexp(logits) - logit[target],
// computed from the max-shifted logits so exp never overflows.
#include "executor/model/cross_entropy.h"

#include <algorithm>
#include <cmath>

namespace stowage::executor::model {

double softmax_cross_entropy_forward(float* logits, const int32_t* targets, int64_t rows, int64_t vocab) {
  double total = 0.0;
  for (int64_t r = 0; r < rows; ++r) {
    float* row = logits + r * vocab;
    const float max = *std::max_element(row, row + vocab);
    const float target_logit = row[targets[r]];
    double sum = 0.0;
    for (int64_t i = 0; i < vocab; ++i) {
      row[i] = std::exp(row[i] - max);
      sum += row[i];
    }
    total += std::log(sum) + static_cast<double>(max) - static_cast<double>(target_logit);
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t i = 0; i < vocab; ++i) row[i] *= inv;
  }
  return total;
}

void softmax_cross_entropy_backward(const float* probs, const int32_t* targets, float scale, float* dlogits,
                                    int64_t rows, int64_t vocab) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = probs + r * vocab;
    float* d = dlogits + r * vocab;
    for (int64_t i = 0; i < vocab; ++i) d[i] = p[i] * scale;
    d[targets[r]] = (p[targets[r]] - 1.0f) * scale;
  }
}

}  // namespace stowage::executor::model
