// The end of both decoders' final layer, after its norm: the LM head (the
// GPT's tied token embedding, the Llama's own lm_head) and the mean
// next-token cross-entropy, forward and backward, on the thread's layer
// kernels (layer_kernels.h).
#pragma once

#include <cstdint>

namespace stowage::executor::model {

struct HeadShape {
  int64_t tokens = 0;
  int64_t d_model = 0;
  int64_t vocab = 0;
};

// logits = normed [tokens, d] head^T, head [vocab, d], softmaxed in place
// into probs [tokens, vocab]; returns the loss averaged over the tokens
// (targets [tokens]), in nats.
float next_token_head_forward(const float* normed, const float* head, const int32_t* targets, float* probs,
                              const HeadShape& s);

// From d(loss) = loss_scale: d_normed [tokens, d] and d_head [vocab, d]
// ADDED. probs are forward's.
void next_token_head_backward(const float* normed, const float* head, const int32_t* targets,
                              const float* probs, float loss_scale, float* d_normed, float* d_head,
                              const HeadShape& s);

}  // namespace stowage::executor::model
