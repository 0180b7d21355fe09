// What the executor's interpreter needs from the trained model: the forward,
// recompute and backward of one layer for one micro-batch, on fp32 copies of
// the layer's parameters. The interpreter owns where parameters and
// gradients live and how they move; the model owns activations and data.
// executor/layer_stack_compute.h implements it for the GPT and the Llama of
// executor/model/.
#pragma once

#include <cstdint>
#include <span>

#include "core/workload.h"

namespace stowage::executor {

class LayerCompute {
 public:
  virtual ~LayerCompute() = default;

  // The micro-batch (step, micro) runs through `layer`. The last layer also
  // computes the loss. What it keeps for the backward pass goes into `kept`,
  // the device region the caller allocated as the schedule declares
  // (footprint(layer): saved, or checkpointed); returns the bytes it kept,
  // all of `kept`.
  virtual int64_t forward(int64_t step, int micro, int layer, std::span<const float> params,
                          std::span<float> kept) = 0;
  // Rebuilds what backward needs from the layer's kept input (activation
  // checkpointing) into `rebuilt` (saved minus checkpointed); returns the
  // bytes it rebuilt.
  virtual int64_t recompute(int64_t step, int micro, int layer, std::span<const float> params,
                            std::span<float> rebuilt) = 0;
  // Adds d(loss * loss_scale)/d(params) into `grads` and passes the gradient
  // on to the layer below; the caller releases the layer's regions after.
  // `params` is the layer's parameters; for the final layer of a model
  // with tied embeddings (core::TiedHead) it is followed by the embedding
  // layer's, whose token table the head multiplies by, in every call;
  // `grads` is always the layer's own.
  virtual void backward(int64_t step, int micro, int layer, std::span<const float> params,
                        std::span<float> grads, float loss_scale) = 0;
  // What `layer`'s forward keeps (saved, or checkpointed) for one
  // micro-batch: exactly the bytes forward and recompute return, and what
  // its kernels' temporaries need at most (forward or recompute, backward),
  // which lowering declares (executor/compute_footprint.h) and the
  // interpreter installs as the region they draw from (model/kernel_scratch.h).
  [[nodiscard]] virtual core::ComputeFootprint footprint(int layer) const = 0;
  // The loss of micro-batch (step, micro), once its last layer ran forward.
  [[nodiscard]] virtual double loss(int64_t step, int micro) const = 0;
};

}  // namespace stowage::executor
