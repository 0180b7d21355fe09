#include "executor/model/next_token_head.h"

#include "executor/model/kernel_scratch.h"
#include "executor/model/layer_kernels.h"

namespace stowage::executor::model {

float next_token_head_forward(const float* normed, const float* head, const int32_t* targets, float* probs,
                              const HeadShape& s) {
  LayerKernels& k = layer_kernels();
  k.linear_forward(normed, head, nullptr, probs, {.rows = s.tokens, .in = s.d_model, .out = s.vocab});
  const double total = k.softmax_cross_entropy_forward(probs, targets, s.tokens, s.vocab);
  return static_cast<float>(total / static_cast<double>(s.tokens));
}

void next_token_head_backward(const float* normed, const float* head, const int32_t* targets,
                              const float* probs, float loss_scale, float* d_normed, float* d_head,
                              const HeadShape& s) {
  LayerKernels& k = layer_kernels();
  // The loss is a mean over the tokens: each row's gradient carries 1 / tokens.
  Temporary d_logits(s.tokens * s.vocab);
  const float scale = static_cast<float>(static_cast<double>(loss_scale) / static_cast<double>(s.tokens));
  k.softmax_cross_entropy_backward(probs, targets, scale, d_logits.data(), s.tokens, s.vocab);
  k.linear_backward(normed, head, d_logits.data(), d_normed, d_head, nullptr,
                    {.rows = s.tokens, .in = s.d_model, .out = s.vocab});
}

}  // namespace stowage::executor::model
