// The shape of the GPT the executor trains, read off a core::Workload, and
// where each parameter tensor sits in a layer's flat parameter array. The
// layout is core::Workload's (core/workload.cpp: Hugging Face module order,
// Linear weights [out, in]); model_shape_of checks the workload's tensors
// name by name and shape by shape, so the two cannot drift apart silently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/workload.h"

namespace stowage::executor::model {

struct ModelShape {
  int64_t vocab = 0;            // token rows of the embedding (256 for bytes)
  int64_t d_model = 0;          // residual stream width, 256 for tiny-gpt
  int64_t heads = 0;            // attention heads (= key/value heads)
  int64_t head_dim = 0;         // per head; heads * head_dim need not be d_model
  int64_t ffn = 0;              // MLP hidden width, 4 * d_model in GPT-2
  int64_t layers = 0;           // transformer blocks
  int64_t max_positions = 0;    // longest sequence the position table covers
  int64_t position_offset = 0;  // first position row used (GPT-2: 0)

  [[nodiscard]] int64_t attention_width() const { return heads * head_dim; }
  [[nodiscard]] int64_t position_rows() const { return max_positions + position_offset; }
};

// The sequences of one micro-batch: `batch` sequences of `seq` tokens,
// stored token-major ([batch, seq] for tokens, [batch * seq, width] for
// activations). 1 <= seq <= max_positions.
struct MicroBatch {
  int64_t batch = 0;
  int64_t seq = 0;
  [[nodiscard]] int64_t tokens() const { return batch * seq; }
  bool operator==(const MicroBatch&) const = default;
};

// One tensor inside a layer's flat parameters.
struct TensorSlot {
  std::string leaf;            // name within the layer: "attn.q_proj.weight"
  std::vector<int64_t> shape;  // [rows, cols] row-major, or [n]
  int64_t offset = 0;          // first float within the layer's array
  [[nodiscard]] int64_t elements() const;
};

// The tensors of a layer of `kind`, in core::Workload's order, with offsets.
[[nodiscard]] std::vector<TensorSlot> layer_slots(core::LayerKind kind, const ModelShape& shape);

// Offset of the tensor named `leaf` in `slots`; throws std::logic_error for
// a name that is not there (our bug: the names are this file's own).
[[nodiscard]] int64_t offset_of(const std::vector<TensorSlot>& slots, std::string_view leaf);

// `slots` with each tensor's offset set: one after the other, in order.
[[nodiscard]] std::vector<TensorSlot> with_offsets(std::vector<TensorSlot> slots);

// Appends a diagnostic for each tensor of `layer` whose name or shape is
// not `slots`' at the same position (one per mismatch, missing and extra
// tensors included).
void check_layer_slots(const core::Layer& layer, const std::vector<TensorSlot>& slots,
                       core::Diagnostics& out);

// The shape of `workload`'s model, or every reason the executor cannot run
// it. Supported: GPT-2-style decoders (LayerNorm, GELU MLP, learned
// positions, biases on every Linear, multi-head attention with kv_heads =
// heads, one expert, tied embeddings, no norm after the embedding) whose
// sequence length fits the position table.
[[nodiscard]] core::Result<ModelShape> model_shape_of(const core::Workload& workload);

}  // namespace stowage::executor::model
