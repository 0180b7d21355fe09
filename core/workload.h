// The workload model: a ModelSpec expanded into layers and their parameter
// tensors, with FLOPs and saved-activation bytes per token. Everything the
// memory accounting, lowering and cost model need to know about a model.
//
// Conventions (cited where used):
// - Parameter tensors follow the Hugging Face module layout of each family.
// - FLOPs count a multiply-add as 2; backward = 2 x forward (Kaplan et al.
//   2020, arXiv:2001.08361 §2.1); attention scores count the full s x s
//   product as PaLM does (Chowdhery et al. 2022, arXiv:2204.02311 App. B).
// - Activations are 16-bit tensors saved for backward with a fused
//   (flash) attention kernel and no dropout, following the accounting of
//   Korthikanti et al. 2022 (arXiv:2205.05198 §4.1) without the s^2 softmax
//   and dropout-mask terms those kernels remove.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model_spec.h"
#include "core/tensor_class.h"
#include "core/units.h"

namespace stowage::core {

// A weight tensor. shape is [rows, cols] for matrices, [n] for vectors.
struct ParamTensor {
  std::string name;    // "layers.3.mlp.up_proj.weight"
  std::string module;  // "layers.3.mlp.up_proj": the nn.Module owning it
  std::vector<int64_t> shape;
  [[nodiscard]] int64_t elements() const;
};

// One concrete tensor instance of a class, as memory sees it.
struct Tensor {
  std::string name;            // "layers.3.mlp.up_proj.weight"
  std::vector<int64_t> shape;  // elements per dimension
  DType dtype;
  TensorClass tensor_class;
  [[nodiscard]] Bytes bytes() const;
};

enum class LayerKind { kEmbedding, kBlock, kFinal };

// What one layer's compute keeps and needs on the device for one
// micro-batch, beyond its parameters: lowering declares exactly these
// bytes as memory effects of the layer's compute ops.
struct ComputeFootprint {
  Bytes saved;             // kept by forward for backward
  Bytes checkpointed;      // kept by forward when the layer is checkpointed
  Bytes forward_scratch;   // held while its forward or recompute runs
  Bytes backward_scratch;  // held while its backward runs
  bool operator==(const ComputeFootprint&) const = default;
};

// A backward costs twice its forward's FLOPs: the gradients with respect
// to the input and to the weights are each a matmul of the forward's size
// (Kaplan et al. 2020, the convention above). The schedule's backward ops,
// the planner's bound and the machine probe's backward rates all use it.
inline constexpr double kBackwardFlopsPerForwardFlop = 2.0;

// A layer is also the default partition: the unit of placement.
struct Layer {
  std::string name;  // "embedding", "layers.3", "final"
  LayerKind kind;
  std::vector<ParamTensor> params;
  // Parameters that take part in one token's computation (MoE: the routed
  // experts only); equals param_count() for dense layers.
  int64_t active_params = 0;
  // Forward FLOPs per token at the workload's sequence length.
  Flops forward_flops_per_token;
  // Bytes kept for backward per token without checkpointing.
  Bytes activation_bytes_per_token;
  // Bytes kept per token when the layer is checkpointed (its input only).
  Bytes checkpoint_bytes_per_token;

  [[nodiscard]] int64_t param_count() const;
};

class Workload {
 public:
  // Expands `model` for sequences of `sequence_length` tokens.
  Workload(const ModelSpec& model, int64_t sequence_length);

  [[nodiscard]] const ModelSpec& model() const { return model_; }
  [[nodiscard]] int64_t sequence_length() const { return sequence_length_; }
  [[nodiscard]] const std::vector<Layer>& layers() const { return layers_; }

  [[nodiscard]] int64_t total_params() const;
  [[nodiscard]] int64_t active_params() const;
  // The largest single module (DeepSpeed's "largest layer"): what ZeRO-3
  // gathers at once in its estimator.
  [[nodiscard]] int64_t largest_module_params() const;
  // The largest layer (partition): what a per-layer schedule gathers at once.
  [[nodiscard]] int64_t largest_layer_params() const;

  [[nodiscard]] Flops forward_flops_per_token() const;
  [[nodiscard]] Flops backward_flops_per_token() const {
    return forward_flops_per_token() * kBackwardFlopsPerForwardFlop;
  }
  // 6·N per token (Kaplan et al.) with N the active parameters: the
  // convention "model FLOP/s" figures use.
  [[nodiscard]] Flops model_flops_per_token() const;

  // Activation bytes held at the peak of backward for `tokens` tokens of
  // one micro-batch. With checkpointing: every layer's input plus one
  // block recomputed in full; without: every layer's saved tensors.
  [[nodiscard]] Bytes activation_bytes(int64_t tokens, bool checkpointing) const;

  // Layer `layer`'s footprint for micro-batches of `tokens` tokens: the
  // GPU training accounting above (per-token activations, no scratch:
  // kernels' workspaces are in the runtime reserve), unless a run's
  // executor declared its own kernels' (set_footprints).
  [[nodiscard]] ComputeFootprint footprint(size_t layer, int64_t tokens) const;
  // An executor's footprints, one per layer, for micro-batches of `tokens`
  // tokens (executor/compute_footprint.h): what its kernels really keep.
  void set_footprints(std::vector<ComputeFootprint> per_layer, int64_t tokens);

  // Every tensor of a layer under a precision, one per (weight, class).
  [[nodiscard]] std::vector<Tensor> tensors_of(const Layer& layer, Precision precision) const;

 private:
  ModelSpec model_;
  int64_t sequence_length_;
  std::vector<Layer> layers_;
  std::vector<ComputeFootprint> footprints_;  // empty: the GPU training accounting
  int64_t footprint_tokens_ = 0;
};

}  // namespace stowage::core
