// The model a run trains, whichever architecture its profile describes: a
// GPT-2-style decoder (model/gpt_model.h) or a Llama-style one
// (model/llama_model.h). The trainer initialises partitions and builds the
// per-run compute through this, never through a concrete model.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/diagnostic.h"
#include "core/workload.h"
#include "executor/model/gpt_model.h"
#include "executor/model_compute.h"

namespace stowage::executor {

// Whether blocks keep their activations until backward or only their input,
// rebuilding the rest in the schedule's recompute ops.
enum class Activations { kKeep, kCheckpoint };

class TrainedModel {
 public:
  virtual ~TrainedModel() = default;

  // = workload.layers().size(); each layer's count is its param_count().
  [[nodiscard]] virtual int layer_count() const = 0;
  [[nodiscard]] virtual int64_t layer_param_count(int layer) const = 0;
  // The architecture's own initialisation of one layer's flat fp32 array, a
  // function of (seed, layer).
  virtual void init_parameters(int layer, std::span<float> params, uint64_t seed) const = 0;
  // The compute of one run (or one evaluation: `batches` may be empty then).
  // It refers to this model, which must outlive it.
  [[nodiscard]] virtual std::unique_ptr<ModelCompute> compute(model::MicroBatch micro_batch,
                                                              BatchSource batches,
                                                              Activations activations) const = 0;
};

// The model of `workload`: a Llama when its profile is Llama-shaped
// (model::is_llama_style), a GPT otherwise; or every reason that
// architecture cannot run it.
[[nodiscard]] core::Result<std::unique_ptr<TrainedModel>> make_trained_model(
    const core::Workload& workload, const model::ModelOptions& options = {});

}  // namespace stowage::executor
