// What the GPT and the Llama have in common apart from their math: the
// workload's layers (embedding, blocks, final) and each kind's parameter
// count, the checks every call makes of its micro-batch, token ids and
// buffer sizes, and the options that create them. Each model derives from
// it and adds its layers' forward and backward.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/diagnostic.h"
#include "core/workload.h"
#include "executor/model/model_shape.h"

namespace stowage::executor::model {

struct ModelOptions {
  // OpenBLAS threads, set process-wide when a model is created; 1 keeps all
  // matrix work on the calling thread.
  int blas_threads = 1;
};

// Throws std::invalid_argument naming `what` unless a buffer holds `want`
// floats: a caller bug, not bad input.
void require_size(size_t have, int64_t want, const char* what);

class DecoderLayers {
 public:
  // = workload.layers().size(): embedding, blocks 1..layers, final.
  [[nodiscard]] int layer_count() const { return static_cast<int>(kinds_.size()); }
  [[nodiscard]] core::LayerKind layer_kind(int layer) const;
  // = workload.layers()[layer].param_count().
  [[nodiscard]] int64_t layer_param_count(int layer) const;

 protected:
  // `workload` is one the model's shape check accepted (model_shape_of,
  // llama_shape_of): its layers' tensors are the model's, so their counts
  // are the model's too.
  DecoderLayers(const core::Workload& workload, int64_t vocab, int64_t max_positions);
  // Sets OpenBLAS's threads as `options` ask, or says why it cannot: the
  // check every create() makes before it builds its model.
  [[nodiscard]] static core::Diagnostics apply(const ModelOptions& options);

  // The parameters of every layer of `kind` (all blocks are alike).
  [[nodiscard]] int64_t param_count(core::LayerKind kind) const;
  // std::invalid_argument unless 1 <= batch and 1 <= seq <= max_positions.
  void check_batch(MicroBatch mb) const;
  // std::invalid_argument unless mb.tokens() ids; std::out_of_range for an
  // id outside [0, vocab).
  void check_tokens(std::span<const int32_t> tokens, MicroBatch mb) const;

 private:
  // `layer` as an index, or std::out_of_range.
  [[nodiscard]] size_t checked_index(int layer) const;

  std::vector<core::LayerKind> kinds_;
  std::vector<int64_t> param_counts_;  // by layer
  int64_t vocab_;
  int64_t max_positions_;
};

}  // namespace stowage::executor::model
