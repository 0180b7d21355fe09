// trained_model.h: one small adapter per architecture.
#include "executor/trained_model.h"

#include "executor/layer_stack_compute.h"

namespace stowage::executor {
namespace {

// Model is GptModel or LlamaModel, Compute its LayerCompute.
template <typename Model, typename Compute>
class Adapter final : public TrainedModel {
 public:
  explicit Adapter(Model model) : model_(std::move(model)) {}

  int layer_count() const override { return model_.layer_count(); }
  int64_t layer_param_count(int layer) const override { return model_.layer_param_count(layer); }
  void init_parameters(int layer, std::span<float> params, uint64_t seed) const override {
    model_.init_parameters(layer, params, seed);
  }
  std::unique_ptr<ModelCompute> compute(model::MicroBatch micro_batch, BatchSource batches,
                                        Activations activations) const override {
    return std::make_unique<Compute>(model_, micro_batch, std::move(batches),
                                     activations == Activations::kCheckpoint);
  }

 private:
  Model model_;
};

template <typename Model, typename Compute>
core::Result<std::unique_ptr<TrainedModel>> make(const core::Workload& workload,
                                                 const model::ModelOptions& options) {
  core::Result<Model> model = Model::create(workload, options);
  if (!model) return std::unexpected(model.error());
  return std::make_unique<Adapter<Model, Compute>>(std::move(*model));
}

}  // namespace

core::Result<std::unique_ptr<TrainedModel>> make_trained_model(const core::Workload& workload,
                                                               const model::ModelOptions& options) {
  if (model::is_llama_style(workload.model()))
    return make<model::LlamaModel, LlamaCompute>(workload, options);
  return make<model::GptModel, GptCompute>(workload, options);
}

}  // namespace stowage::executor
