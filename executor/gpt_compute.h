// LayerCompute for the GPT of executor/model/: keeps each micro-batch's
// activations between its forward and backward ops, fetches the micro-batch
// from the data, and handles the tied head (the final layer computes with
// the embedding layer's token matrix, copied at the embedding's forward, and
// its gradient for that matrix joins the embedding's at the embedding's
// backward, the last op of the backward pass).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "executor/layer_compute.h"
#include "executor/model/gpt_model.h"

namespace stowage::executor {

// Fills the inputs and next-token targets [batch, seq] of micro-batch
// (step, micro); a pure function of its arguments.
using BatchSource = std::function<void(int64_t step, int micro, std::span<int32_t> inputs, std::span<int32_t> targets)>;

class GptCompute final : public LayerCompute {
 public:
  // `checkpointing`: blocks keep only their input after forward and rebuild
  // the rest in recompute, as the schedule's recompute ops expect.
  GptCompute(const model::GptModel& model, model::MicroBatch micro_batch, BatchSource batches, bool checkpointing);
  ~GptCompute() override;

  int64_t forward(int64_t step, int micro, int layer, std::span<const float> params) override;
  int64_t recompute(int64_t step, int micro, int layer, std::span<const float> params) override;
  void backward(int64_t step, int micro, int layer, std::span<const float> params, std::span<float> grads,
                float loss_scale) override;
  [[nodiscard]] double loss(int64_t step, int micro) const override;

  // The mean loss of the whole model on one batch, forward only, with every
  // layer's fp32 parameters given (evaluation on held-out data).
  [[nodiscard]] double evaluate(const std::vector<std::vector<float>>& params, std::span<const int32_t> inputs,
                                std::span<const int32_t> targets) const;

 private:
  struct Micro;
  Micro& micro_state(int64_t step, int micro);

  const model::GptModel& model_;
  model::MicroBatch mb_;
  BatchSource batches_;
  bool checkpointing_;
  mutable std::mutex mutex_;
  std::map<std::pair<int64_t, int>, std::unique_ptr<Micro>> micros_;
  std::map<std::pair<int64_t, int>, double> losses_;
};

}  // namespace stowage::executor
