// LayerCompute for the Llama of executor/model/: keeps each micro-batch's
// activations between its forward and backward ops and fetches the
// micro-batch from the data. The head is untied, so unlike GptCompute no
// layer's parameters are carried to another layer.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "executor/model/llama_model.h"
#include "executor/model_compute.h"

namespace stowage::executor {

class LlamaCompute final : public ModelCompute {
 public:
  // `checkpointing`: blocks keep only their input after forward and rebuild
  // the rest in recompute, as the schedule's recompute ops expect.
  LlamaCompute(const model::LlamaModel& model, model::MicroBatch micro_batch, BatchSource batches,
               bool checkpointing);
  ~LlamaCompute() override;

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
  struct Micro;
  Micro& micro_state(int64_t step, int micro);

  const model::LlamaModel& model_;
  model::MicroBatch mb_;
  BatchSource batches_;
  bool checkpointing_;
  int64_t block_saved_floats_ = 0;  // what a block's forward keeps beside its output
  mutable std::mutex mutex_;
  std::map<std::pair<int64_t, int>, std::unique_ptr<Micro>> micros_;
  std::map<std::pair<int64_t, int>, double> losses_;
};

}  // namespace stowage::executor
