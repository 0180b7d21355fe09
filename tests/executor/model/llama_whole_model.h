// Test helper: the whole Llama driven layer by layer the way the executor
// drives it (embedding, blocks, final; then back), everything in plain
// vectors; and the small shape the gradient tests use.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/workload.h"
#include "executor/model/byte_corpus.h"
#include "executor/model/llama_model.h"

namespace stowage::executor::model::testing {

// d_model 16, 4 query heads and 2 kv heads of 4, ffn 32, vocab 32, 8
// positions, 2 blocks, RoPE base 10000.
inline core::ModelSpec small_llama_spec() {
  return {.name = "small-llama",
          .d_model = 16,
          .layers = 2,
          .heads = 4,
          .kv_heads = 2,
          .head_dim = 4,
          .ffn = 32,
          .vocab = 32,
          .max_positions = 8,
          .tied_embeddings = false,
          .biases = false,
          .norm = core::NormKind::kRmsNorm,
          .mlp = core::MlpKind::kSwiglu,
          .position = core::PositionKind::kRope};
}

inline LlamaModel must_create_llama(const core::Workload& workload) {
  core::Result<LlamaModel> m = LlamaModel::create(workload);
  if (!m) throw std::runtime_error(core::to_string(m.error()));
  return std::move(*m);
}

class LlamaWholeModel {
 public:
  LlamaWholeModel(const core::Workload& workload, uint64_t seed) : model_(must_create_llama(workload)) {
    const auto layers = static_cast<size_t>(model_.layer_count());
    params_.resize(layers);
    grads_.resize(layers);
    outputs_.resize(layers - 1);
    saved_.resize(layers - 2);
    for (int l = 0; l < model_.layer_count(); ++l) {
      params_[static_cast<size_t>(l)].resize(static_cast<size_t>(model_.layer_param_count(l)));
      grads_[static_cast<size_t>(l)].assign(params_[static_cast<size_t>(l)].size(), 0.0f);
      model_.init_parameters(l, params_[static_cast<size_t>(l)], seed);
    }
  }

  const LlamaModel& model() const { return model_; }
  std::vector<std::vector<float>>& params() { return params_; }
  std::vector<std::vector<float>>& grads() { return grads_; }

  float forward(const TokenBatch& b) {
    const MicroBatch mb{.batch = b.batch, .seq = b.seq};
    const auto width = static_cast<size_t>(mb.tokens() * model_.shape().d_model);
    for (auto& o : outputs_) o.resize(width);
    model_.embedding_forward(params_[0], b.inputs, mb, outputs_[0]);
    for (size_t i = 0; i < saved_.size(); ++i) {
      model_.block_forward(params_[i + 1], outputs_[i], mb, saved_[i], outputs_[i + 1]);
    }
    return model_.final_forward(params_.back(), outputs_.back(), b.targets, mb, final_saved_);
  }

  void backward(const TokenBatch& b, float loss_scale) {
    const MicroBatch mb{.batch = b.batch, .seq = b.seq};
    std::vector<float> d(outputs_.back().size());
    model_.final_backward(params_.back(), outputs_.back(), b.targets, final_saved_, loss_scale, d,
                          grads_.back());
    for (size_t i = saved_.size(); i-- > 0;) {
      model_.block_backward(params_[i + 1], outputs_[i], saved_[i], d, d,
                            grads_[i + 1]);  // d_in aliases d_out
    }
    model_.embedding_backward(b.inputs, mb, d, grads_[0]);
  }

 private:
  LlamaModel model_;
  std::vector<std::vector<float>> params_;
  std::vector<std::vector<float>> grads_;
  std::vector<std::vector<float>> outputs_;
  std::vector<LlamaBlockSaved> saved_;
  LlamaFinalSaved final_saved_;
};

}  // namespace stowage::executor::model::testing
