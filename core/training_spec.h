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
};

struct LossScaling {
  double initial_scale = 65536;  // 2^16, DeepSpeed's initial_scale_power 16
  int64_t window = 1000;         // steps without overflow before the scale grows
  double min_scale = 1;
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

  [[nodiscard]] int64_t tokens_per_micro_batch() const { return micro_batch * sequence_length; }
};

}  // namespace stowage::core
