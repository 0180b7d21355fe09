// The GPT the executor trains (GPT-2's architecture: Radford et al. 2019;
// layout of Hugging Face's modules as core::Workload names them), exposed
// layer by layer on caller-owned flat buffers so that the executor can
// place each layer's parameters, gradients and activations wherever its
// plan says and run the model op by op.
//
// A layer's parameters are ONE flat fp32 array: the concatenation of its
// core::Layer::params in order, each row-major in its listed shape (Linear
// weights [out, in], so y = x W^T + b). A partition that is a slice
// [first, first + n) of a layer is the same slice of that array.
//
// Tied LM head: the final layer has only the final norm's parameters; its
// head is the embedding layer's token embedding [vocab, d_model], which is
// the first vocab * d_model floats of the embedding layer's array
// (token_embedding() slices it). final_forward/final_backward take it as an
// extra input, and final_backward ADDS the head's gradient into a separate
// [vocab, d_model] buffer. The caller adds that into the embedding layer's
// gradient (or passes token_embedding() of that gradient directly when it
// is resident), before or after embedding_backward: both add.
//
// Conventions of every call: activations are [batch * seq, d_model]
// token-major; parameter gradients are ADDED to d_params (micro-steps
// accumulate; zero them at the start of a step); input gradients are
// WRITTEN. fp32 throughout; the caller converts 16-bit weights and
// gradients (half_convert.h). Sizes are checked: a wrong one throws
// std::invalid_argument, a token outside [0, vocab) std::out_of_range
// (both caller bugs, not bad input; decoder_layers.h makes those checks).
// Calls on one GptModel may run on several threads at once; each call runs
// on the calling thread plus OpenBLAS's (ModelOptions::blas_threads). The same inputs give the same
// bits on the same machine and thread count.
#pragma once

#include <cstdint>
#include <span>

#include "core/diagnostic.h"
#include "core/workload.h"
#include "executor/model/decoder_layers.h"
#include "executor/model/model_shape.h"
#include "executor/model/saved_activations.h"

namespace stowage::executor::model {

class GptModel : public DecoderLayers {
 public:
  // The model of `workload`, or why the executor cannot train it (see
  // model_shape_of for what is supported).
  static core::Result<GptModel> create(const core::Workload& workload, const ModelOptions& options = {});

  [[nodiscard]] const ModelShape& shape() const { return shape_; }

  // GPT-2's initialisation (Radford et al. 2019 §2.3; HF GPT2PreTrainedModel
  // ._init_weights): weights and embeddings N(0, 0.02), biases 0, LayerNorm
  // weight 1 and bias 0, and the projections that write into the residual
  // stream (o_proj, down_proj) N(0, 0.02 / sqrt(2 * layers)). A function of
  // (seed, layer) only, the same on every platform.
  void init_parameters(int layer, std::span<float> params, uint64_t seed) const;

  // The token embedding [vocab, d_model] inside the embedding layer's
  // parameters (or gradient): the head's weight.
  [[nodiscard]] std::span<const float> token_embedding(std::span<const float> embedding_params) const;
  [[nodiscard]] std::span<float> token_embedding(std::span<float> embedding_params) const;

  // Layer 0. tokens [batch, seq]; out [tokens, d] = token row + position row.
  void embedding_forward(std::span<const float> params, std::span<const int32_t> tokens, MicroBatch mb,
                         std::span<float> out) const;
  // d_params += the rows of d_out [tokens, d] scattered to the rows used.
  // Tokens have no gradient. Does not include the tied head's part.
  void embedding_backward(std::span<const int32_t> tokens, MicroBatch mb, std::span<const float> d_out,
                          std::span<float> d_params) const;

  // Sizes what forward keeps for micro-batch `mb` (forward calls it): the
  // one place those sizes are known, which the executor declares to lowering.
  void size_saved(BlockSaved& s, MicroBatch mb) const;
  void size_saved(FinalSaved& s, MicroBatch mb) const;
  // The most floats the temporaries of a `kind` layer's backward hold at
  // once for micro-batch `mb` (kernel_scratch.h): what the executor declares
  // as the op's scratch. A test holds it to what the kernels take.
  [[nodiscard]] int64_t backward_scratch_floats(core::LayerKind kind, MicroBatch mb) const;

  // Layers 1..layers: out = mid + MLP(LN(mid)), mid = in + Attn(LN(in)).
  // in, out [tokens, d], distinct buffers. Fills `saved`; running it again
  // on the same params and input rebuilds `saved` bit for bit.
  void block_forward(std::span<const float> params, std::span<const float> in, MicroBatch mb,
                     BlockSaved& saved, std::span<float> out) const;
  // From d_out [tokens, d]: d_in [tokens, d] written (it may be the same
  // memory as d_out), d_params added. `in` is the forward's input.
  void block_backward(std::span<const float> params, std::span<const float> in, const BlockSaved& saved,
                      std::span<const float> d_out, std::span<float> d_in, std::span<float> d_params) const;

  // The last layer: logits = LN(in) E^T with E = token_embedding [vocab, d];
  // returns the mean next-token cross-entropy over the batch * seq targets
  // [batch, seq] (targets[b, t] is the token after inputs[b, t]), in nats.
  float final_forward(std::span<const float> params, std::span<const float> token_embedding,
                      std::span<const float> in, std::span<const int32_t> targets, MicroBatch mb,
                      FinalSaved& saved) const;
  // Starts from d(loss) = loss_scale (1 without loss scaling). d_in written;
  // d_params (final norm) and d_token_embedding [vocab, d] added.
  void final_backward(std::span<const float> params, std::span<const float> token_embedding,
                      std::span<const float> in, std::span<const int32_t> targets, const FinalSaved& saved,
                      float loss_scale, std::span<float> d_in, std::span<float> d_params,
                      std::span<float> d_token_embedding) const;

 private:
  // Offsets of a block's tensors in its flat array (layer_slots order).
  struct BlockOffsets {
    int64_t attn_norm_weight, attn_norm_bias, q_weight, q_bias, k_weight, k_bias, v_weight, v_bias;
    int64_t o_weight, o_bias, mlp_norm_weight, mlp_norm_bias, up_weight, up_bias, down_weight, down_bias;
  };

  GptModel(const core::Workload& workload, ModelShape shape);
  void attention_backward(const float* params, const BlockSaved& saved, const float* d_mid, float* d_norm,
                          float* d_params) const;
  void mlp_backward(const float* params, const BlockSaved& saved, const float* d_out, float* d_mid,
                    float* d_params) const;

  ModelShape shape_;
  BlockOffsets block_;
};

}  // namespace stowage::executor::model
