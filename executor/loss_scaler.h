// Dynamic loss scaling for fp16 training, as torch.cuda.amp.GradScaler and
// DeepSpeed do it: the loss is multiplied by `scale` before backward; a step
// whose gradients overflowed is skipped and halves the scale; `window` steps
// in a row without overflow double it. bf16 needs none (scale 1).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/training_spec.h"

namespace stowage::executor {

struct LossScaler {
  double scale = 1;
  int64_t good_steps = 0;  // steps without overflow since the scale last changed
  core::LossScaling config;

  static LossScaler for_precision(core::Precision precision, const core::LossScaling& config) {
    return {.scale = precision == core::Precision::kFp16 ? config.initial_scale : 1.0, .config = config};
  }
  // The scaler after a step that did or did not overflow.
  void update(bool overflowed) {
    if (overflowed) {
      scale = std::max(config.min_scale, scale / 2);
      good_steps = 0;
    } else if (++good_steps >= config.window) {
      scale *= 2;
      good_steps = 0;
    }
  }
};

}  // namespace stowage::executor
