// Test helper: a whole model driven layer by layer the way the executor
// drives it (embedding, blocks, final; then back), with every layer's
// parameters, gradients, outputs and saved state held in plain vectors;
// and the small GPT shape the gradient tests use.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/workload.h"
#include "executor/model/architecture_of.h"
#include "executor/model/byte_corpus.h"
#include "executor/model/gpt_model.h"

namespace stowage::executor::model::testing {

// d_model 16, 2 heads of 8, ffn 64, vocab 32, 8 positions, 2 blocks: small
// enough that finite differences over every parameter stay fast.
inline core::ModelSpec small_spec() {
  return {.name = "small", .d_model = 16, .layers = 2, .heads = 2, .kv_heads = 2, .head_dim = 8, .ffn = 64,
          .vocab = 32, .max_positions = 8};
}

inline GptModel must_create(const core::Workload& workload) {
  core::Result<GptModel> m = GptModel::create(workload);
  if (!m) throw std::runtime_error(core::to_string(m.error()));
  return std::move(*m);
}

// Either decoder (gpt_model.h, llama_model.h); with a tied head (the
// GPT's) the final layer's head is the embedding's token table, and its
// gradient goes straight into the embedding's.
template <class Model>
class WholeModelOf {
  using Architecture = ArchitectureOf<Model>;

 public:
  using BlockSaved = typename Architecture::BlockSaved;
  using FinalSaved = typename Architecture::FinalSaved;

  WholeModelOf(Model model, uint64_t seed) : model_(std::move(model)) {
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

  const Model& model() const { return model_; }
  std::vector<std::vector<float>>& params() { return params_; }
  std::vector<std::vector<float>>& grads() { return grads_; }
  const FinalSaved& final_saved() const { return final_saved_; }
  const std::vector<float>& output(size_t layer) const { return outputs_[layer]; }

  // Mean next-token loss of the batch; keeps everything backward needs.
  float forward(const TokenBatch& b) {
    const MicroBatch mb{.batch = b.batch, .seq = b.seq};
    const auto width = static_cast<size_t>(mb.tokens() * model_.shape().d_model);
    for (auto& o : outputs_) o.resize(width);
    model_.embedding_forward(params_[0], b.inputs, mb, outputs_[0]);
    for (size_t i = 0; i < saved_.size(); ++i) {
      model_.block_forward(params_[i + 1], outputs_[i], mb, saved_[i], outputs_[i + 1]);
    }
    if constexpr (Architecture::kTiedHead) {
      return model_.final_forward(params_.back(), model_.token_embedding(std::span<const float>(params_[0])),
                                  outputs_.back(), b.targets, mb, final_saved_);
    } else {
      return model_.final_forward(params_.back(), outputs_.back(), b.targets, mb, final_saved_);
    }
  }

  // Adds d(loss_scale * loss) to grads().
  void backward(const TokenBatch& b, float loss_scale) {
    const MicroBatch mb{.batch = b.batch, .seq = b.seq};
    std::vector<float> d(outputs_.back().size());
    if constexpr (Architecture::kTiedHead) {
      model_.final_backward(params_.back(), model_.token_embedding(std::span<const float>(params_[0])),
                            outputs_.back(), b.targets, final_saved_, loss_scale, d, grads_.back(),
                            model_.token_embedding(std::span<float>(grads_[0])));
    } else {
      model_.final_backward(params_.back(), outputs_.back(), b.targets, final_saved_, loss_scale, d,
                            grads_.back());
    }
    for (size_t i = saved_.size(); i-- > 0;) {
      model_.block_backward(params_[i + 1], outputs_[i], saved_[i], d, d, grads_[i + 1]);  // d_in aliases d_out
    }
    model_.embedding_backward(b.inputs, mb, d, grads_[0]);
  }

  void zero_grads() {
    for (auto& g : grads_) std::fill(g.begin(), g.end(), 0.0f);
  }

 private:
  Model model_;
  std::vector<std::vector<float>> params_;
  std::vector<std::vector<float>> grads_;
  std::vector<std::vector<float>> outputs_;  // output of layer l, l = 0 .. layers
  std::vector<BlockSaved> saved_;
  FinalSaved final_saved_;
};

// The GPT driven whole.
class WholeModel : public WholeModelOf<GptModel> {
 public:
  WholeModel(const core::Workload& workload, uint64_t seed) : WholeModelOf(must_create(workload), seed) {}
};

}  // namespace stowage::executor::model::testing
