#include "executor/model/decoder_layers.h"

#include <stdexcept>
#include <string>

#include "executor/model/linear.h"

namespace stowage::executor::model {

using core::LayerKind;

void require_size(size_t have, int64_t want, const char* what) {
  if (have != static_cast<size_t>(want)) {
    throw std::invalid_argument(std::string(what) + " holds " + std::to_string(have) + " floats, expected " +
                                std::to_string(want));
  }
}

DecoderLayers::DecoderLayers(const core::Workload& workload, int64_t vocab, int64_t max_positions)
    : vocab_(vocab), max_positions_(max_positions) {
  for (const core::Layer& layer : workload.layers()) {
    kinds_.push_back(layer.kind);
    param_counts_.push_back(layer.param_count());
  }
}

core::Diagnostics DecoderLayers::apply(const ModelOptions& options) {
  if (options.blas_threads < 1) {
    return {{.what = "blas_threads " + std::to_string(options.blas_threads), .expected = "at least 1"}};
  }
  set_blas_threads(options.blas_threads);
  return {};
}

size_t DecoderLayers::checked_index(int layer) const {
  if (layer < 0 || layer >= layer_count())
    throw std::out_of_range("layer " + std::to_string(layer) + " out of range");
  return static_cast<size_t>(layer);
}

LayerKind DecoderLayers::layer_kind(int layer) const {
  return kinds_[checked_index(layer)];
}

int64_t DecoderLayers::param_count(LayerKind kind) const {
  for (size_t i = 0; i < kinds_.size(); ++i) {
    if (kinds_[i] == kind) return param_counts_[i];
  }
  throw std::logic_error("param_count: the model has no layer of this kind");
}

int64_t DecoderLayers::layer_param_count(int layer) const {
  return param_counts_[checked_index(layer)];
}

void DecoderLayers::check_batch(MicroBatch mb) const {
  if (mb.batch < 1 || mb.seq < 1 || mb.seq > max_positions_) {
    throw std::invalid_argument(
        "micro-batch of " + std::to_string(mb.batch) + " x " + std::to_string(mb.seq) +
        " tokens: expected batch >= 1 and 1 <= seq <= " + std::to_string(max_positions_));
  }
}

void DecoderLayers::check_tokens(std::span<const int32_t> tokens, MicroBatch mb) const {
  require_size(tokens.size(), mb.tokens(), "token ids");
  for (int32_t t : tokens) {
    if (t < 0 || t >= vocab_) {
      throw std::out_of_range("token " + std::to_string(t) + " outside the vocabulary [0, " +
                              std::to_string(vocab_) + ")");
    }
  }
}

}  // namespace stowage::executor::model
