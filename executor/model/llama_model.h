// The Llama-style decoder the executor trains (llama_shape.h for the
// architecture and its sources), layer by layer on caller-owned flat
// buffers, with GptModel's conventions (gpt_model.h): one flat fp32 array
// per layer in core::Workload's tensor order, activations [batch * seq,
// d_model] token-major, parameter gradients ADDED, input gradients
// WRITTEN, sizes and tokens checked (decoder_layers.h), safe to call from
// several threads at once, the same bits for the same inputs.
//
// Unlike the GPT the head is untied: the final layer owns lm_head.weight
// [vocab, d_model] after its norm, so no layer needs another's parameters.
#pragma once

#include <cstdint>
#include <span>

#include "core/diagnostic.h"
#include "core/workload.h"
#include "executor/model/causal_attention.h"
#include "executor/model/decoder_layers.h"
#include "executor/model/llama_saved.h"
#include "executor/model/llama_shape.h"
#include "executor/model/rotary.h"

namespace stowage::executor::model {

class LlamaModel : public DecoderLayers {
 public:
  // The model of `workload`, or why the executor cannot train it as a Llama
  // (llama_shape_of). options as for GptModel::create.
  static core::Result<LlamaModel> create(const core::Workload& workload, const ModelOptions& options = {});

  [[nodiscard]] const LlamaShape& shape() const { return shape_; }

  // Hugging Face LlamaPreTrainedModel._init_weights: every matrix and the
  // embedding N(0, 0.02) (initializer_range), RMSNorm weights 1. A function
  // of (seed, layer) only, the same on every platform.
  void init_parameters(int layer, std::span<float> params, uint64_t seed) const;

  // Layer 0. tokens [batch, seq]; out [tokens, d] = the tokens' rows.
  void embedding_forward(std::span<const float> params, std::span<const int32_t> tokens, MicroBatch mb,
                         std::span<float> out) const;
  // d_params += d_out's rows scattered to the tokens' rows.
  void embedding_backward(std::span<const int32_t> tokens, MicroBatch mb, std::span<const float> d_out,
                          std::span<float> d_params) const;

  // Sizes what forward keeps for micro-batch `mb` (forward calls it): the
  // one place those sizes are known, which the executor declares to lowering.
  void size_saved(LlamaBlockSaved& s, MicroBatch mb) const;
  void size_saved(LlamaFinalSaved& s, MicroBatch mb) const;
  // The most floats the temporaries of a `kind` layer's backward hold at
  // once for micro-batch `mb` (kernel_scratch.h): what the executor declares
  // as the op's scratch. A test holds it to what the kernels take.
  [[nodiscard]] int64_t backward_scratch_floats(core::LayerKind kind, MicroBatch mb) const;

  // Layers 1..layers: mid = in + o_proj(Attn(RoPE(q), RoPE(k), v)) on
  // RMSNorm(in); out = mid + down_proj(silu(gate_proj(n)) * up_proj(n)) with
  // n = RMSNorm(mid). in and out distinct.
  void block_forward(std::span<const float> params, std::span<const float> in, MicroBatch mb,
                     LlamaBlockSaved& saved, std::span<float> out) const;
  // d_in written (may alias d_out), d_params added; `in` is forward's input.
  void block_backward(std::span<const float> params, std::span<const float> in, const LlamaBlockSaved& saved,
                      std::span<const float> d_out, std::span<float> d_in, std::span<float> d_params) const;

  // logits = RMSNorm(in) lm_head^T; the mean next-token cross-entropy over
  // the batch * seq targets, in nats.
  float final_forward(std::span<const float> params, std::span<const float> in,
                      std::span<const int32_t> targets, MicroBatch mb, LlamaFinalSaved& saved) const;
  // From d(loss) = loss_scale: d_in written, d_params (norm and head) added.
  void final_backward(std::span<const float> params, std::span<const float> in,
                      std::span<const int32_t> targets, const LlamaFinalSaved& saved, float loss_scale,
                      std::span<float> d_in, std::span<float> d_params) const;

 private:
  // Offsets of a block's and the final layer's tensors (llama_layer_slots).
  struct BlockOffsets {
    int64_t attn_norm, q, k, v, o, mlp_norm, gate, up, down;
  };

  LlamaModel(const core::Workload& workload, LlamaShape shape);
  [[nodiscard]] AttentionShape attention_shape(MicroBatch mb) const;
  void attention_forward(const float* params, const float* in, MicroBatch mb, LlamaBlockSaved& saved) const;
  void mlp_backward(const float* params, const LlamaBlockSaved& saved, const float* d_out, float* d_mid,
                    float* d_params) const;
  void attention_backward(const float* params, const LlamaBlockSaved& saved, const float* d_mid,
                          float* d_norm, float* d_params) const;

  LlamaShape shape_;
  RotaryTable rotary_;
  BlockOffsets block_;
  int64_t head_offset_ = 0;
};

}  // namespace stowage::executor::model
