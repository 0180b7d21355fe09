// A LayerCompute that also evaluates the whole model on a batch: what the
// trainer needs of each architecture's adapter (layer_stack_compute.h),
// and the data source they share.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "executor/layer_compute.h"

namespace stowage::executor {

// Fills the inputs and next-token targets [batch, seq] of micro-batch
// (step, micro); a pure function of its arguments.
using BatchSource =
    std::function<void(int64_t step, int micro, std::span<int32_t> inputs, std::span<int32_t> targets)>;

class ModelCompute : public LayerCompute {
 public:
  // The mean loss of the whole model on one batch, forward only, with every
  // layer's fp32 parameters given (evaluation on held-out data).
  [[nodiscard]] virtual double evaluate(const std::vector<std::vector<float>>& params,
                                        std::span<const int32_t> inputs,
                                        std::span<const int32_t> targets) const = 0;
};

}  // namespace stowage::executor
