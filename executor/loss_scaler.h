// Dynamic loss scaling for fp16 training, as DeepSpeed's DynamicLossScaler
// does it (deepspeed/runtime/fp16/loss_scaler.py, update_scale): the loss is
// multiplied by `scale` before backward; a step whose gradients overflowed
// is skipped, and halves the scale once `hysteresis` overflows have used up
// the tolerance; `window` steps in a row without overflow double it and
// restore the tolerance. bf16 needs none (scale 1).
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/training_spec.h"

namespace stowage::executor {

struct LossScaler {
  double scale = 1;
  int64_t good_steps = 0;       // steps without overflow since the last overflow or growth
  int64_t hysteresis_left = 1;  // overflows until the scale shrinks (DeepSpeed's cur_hysteresis)
  core::LossScaling config;

  static LossScaler for_precision(core::Precision precision, const core::LossScaling& config) {
    return {.scale = precision == core::Precision::kFp16 ? config.initial_scale : 1.0,
            .hysteresis_left = config.hysteresis,
            .config = config};
  }
  // The scaler after a step that did or did not overflow.
  void update(bool overflowed) {
    if (overflowed) {
      if (hysteresis_left <= 1)
        scale = std::max(config.min_scale, scale / 2);
      else
        --hysteresis_left;
      good_steps = 0;
    } else if (++good_steps >= config.window) {
      scale *= 2;
      good_steps = 0;
      hysteresis_left = config.hysteresis;
    }
  }
};

}  // namespace stowage::executor
