// How the model is trained: batch shape, precision, optimizer and whether
// activations are checkpointed. Loaded from profiles/training/*.yaml.
#pragma once

#include <cstdint>
#include <string>

namespace stowage::core {

enum class Precision { kBf16, kFp16 };  // fp16 implies dynamic loss scaling
enum class OptimizerKind { kAdam, kAdamW };

struct AdamConfig {
  double learning_rate = 1e-4;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;  // L2 for Adam, decoupled for AdamW (PyTorch docs)
  bool operator==(const AdamConfig&) const = default;
};

// Dynamic loss scaling as DeepSpeed's DynamicLossScaler does it
// (deepspeed/runtime/fp16/loss_scaler.py; keys of its fp16 config section in
// brackets): the scale shrinks by half only after `hysteresis` overflowing
// steps (each one skipped), and doubles after `window` steps in a row
// without overflow, which also restores the hysteresis.
struct LossScaling {
  double initial_scale = 65536;  // 2^16 [initial_scale_power 16]
  int64_t window = 1000;         // steps without overflow before the scale grows [loss_scale_window]
  double min_scale = 1;          // [min_loss_scale]
  int64_t hysteresis = 2;        // overflows tolerated before the scale shrinks [hysteresis]
  bool operator==(const LossScaling&) const = default;
};

struct TrainingSpec {
  std::string name;    // "default"
  std::string label;
  std::string source;
  int64_t micro_batch = 1;          // sequences per GPU per forward/backward
  int64_t sequence_length = 2048;   // tokens per sequence
  int64_t gradient_accumulation = 1;
  Precision precision = Precision::kBf16;
  LossScaling loss_scaling;         // used only with fp16
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  AdamConfig adam;
  bool activation_checkpointing = true;
  // Clip the step's gradient to this global L2 norm (torch.nn.utils.
  // clip_grad_norm_, DeepSpeed's gradient_clipping); 1.0 as in common
  // recipes (Llama 2, GPT-3); 0: no clipping.
  double max_grad_norm = 1.0;

  [[nodiscard]] int64_t tokens_per_micro_batch() const { return micro_batch * sequence_length; }
  bool operator==(const TrainingSpec&) const = default;
};

}  // namespace stowage::core
