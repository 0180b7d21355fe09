// Softmax cross-entropy of next-token logits against target tokens
// (PyTorch nn.CrossEntropyLoss), in nats.
#pragma once

#include <cstdint>

namespace stowage::executor::model {

// logits [rows, vocab] are replaced by their softmax probabilities; targets
// [rows] in [0, vocab). Returns the SUM over rows of -log p[target],
// accumulated in double (the caller divides for a mean).
double softmax_cross_entropy_forward(float* logits, const int32_t* targets, int64_t rows, int64_t vocab);

// dlogits [rows, vocab] WRITTEN: (probs - onehot(target)) * scale, the
// gradient of scale * (summed loss). For a mean loss scale = 1 / rows.
void softmax_cross_entropy_backward(const float* probs, const int32_t* targets, float scale, float* dlogits,
                                    int64_t rows, int64_t vocab);

}  // namespace stowage::executor::model
