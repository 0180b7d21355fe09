// LayerCompute for the models of executor/model/ (the GPT and the Llama):
// keeps each micro-batch's activations between its forward and backward
// ops, in the regions the schedule gives them, and fetches the micro-batch
// from the data. One bookkeeping for both architectures; what differs is
// the head. The GPT's is tied (model::ArchitectureOf<GptModel>::kTiedHead): the
// final layer computes with the embedding layer's token matrix, which its
// ops are given after their own parameters (core::TiedHead), and its
// gradient for that matrix joins the embedding's at the embedding's
// backward, the last op of the backward pass. The Llama's head is its own.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "executor/model/architecture_of.h"
#include "executor/model_compute.h"

namespace stowage::executor {

template <class Model>
class LayerStackCompute final : public ModelCompute {
 public:
  // `checkpointing`: blocks keep only their input after forward and rebuild
  // the rest in recompute, as the schedule's recompute ops expect.
  LayerStackCompute(const Model& model, model::MicroBatch micro_batch, BatchSource batches, bool checkpointing);
  ~LayerStackCompute() override;

  int64_t forward(int64_t step, int micro, int layer, std::span<const float> params,
                  std::span<float> kept) override;
  int64_t recompute(int64_t step, int micro, int layer, std::span<const float> params,
                    std::span<float> rebuilt) override;
  void backward(int64_t step, int micro, int layer, std::span<const float> params, std::span<float> grads,
                float loss_scale) override;
  [[nodiscard]] core::ComputeFootprint footprint(int layer) const override;
  [[nodiscard]] double loss(int64_t step, int micro) const override;

  [[nodiscard]] double evaluate(const std::vector<std::vector<float>>& params,
                                std::span<const int32_t> inputs,
                                std::span<const int32_t> targets) const override;

 private:
  using Architecture = model::ArchitectureOf<Model>;
  struct Micro;
  Micro& micro_state(int64_t step, int micro);
  // With a tied head, the final layer's ops get its own parameters, then
  // the embedding layer's: its own, and the token table [vocab, d_model]
  // its head uses.
  [[nodiscard]] std::span<const float> own_params(int layer, std::span<const float> params) const;
  [[nodiscard]] std::span<const float> tied_table(int layer, std::span<const float> params) const;
  // The floats the embedding keeps: its output and the flowing gradient,
  // and with a tied head the head's gradient of the token table.
  [[nodiscard]] int64_t embedding_kept_floats() const;

  const Model& model_;
  model::MicroBatch mb_;
  BatchSource batches_;
  bool checkpointing_;
  int64_t block_saved_floats_ = 0;  // what a block's forward keeps beside its output
  mutable std::mutex mutex_;
  std::map<std::pair<int64_t, int>, std::unique_ptr<Micro>> micros_;
  std::map<std::pair<int64_t, int>, double> losses_;
};

using GptCompute = LayerStackCompute<model::GptModel>;
using LlamaCompute = LayerStackCompute<model::LlamaModel>;

}  // namespace stowage::executor
