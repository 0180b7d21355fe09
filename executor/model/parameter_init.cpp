// GptModel::init_parameters: GPT-2's initialisation tensor by tensor, drawn
// from one SplitMix64 stream per (seed, layer) in layer_slots order.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "executor/model/gpt_model.h"
#include "executor/model/rng.h"

namespace stowage::executor::model {
namespace {

// GPT-2's initializer_range (HF GPT2Config).
constexpr double kInitStd = 0.02;

bool is_residual_projection(const std::string& leaf) {
  return leaf.starts_with("attn.o_proj.") || leaf.starts_with("mlp.down_proj.");
}

}  // namespace

void GptModel::init_parameters(int layer, std::span<float> params, uint64_t seed) const {
  const core::LayerKind kind = layer_kind(layer);
  if (params.size() != static_cast<size_t>(param_count(kind))) {
    throw std::invalid_argument("init_parameters: layer " + std::to_string(layer) + " needs " +
                                std::to_string(param_count(kind)) + " floats, got " + std::to_string(params.size()));
  }
  SplitMix64 rng(derive_seed(seed, static_cast<uint64_t>(layer)));
  // Residual projections are scaled by 1/sqrt(N), N = 2 per block: the
  // attention and the MLP each add to the stream (GPT-2 §2.3).
  const double residual_std = kInitStd / std::sqrt(2.0 * static_cast<double>(std::max<int64_t>(shape_.layers, 1)));
  for (const TensorSlot& slot : layer_slots(kind, shape_)) {
    std::span<float> t = params.subspan(static_cast<size_t>(slot.offset), static_cast<size_t>(slot.elements()));
    if (slot.leaf.ends_with("norm.weight")) {
      std::fill(t.begin(), t.end(), 1.0f);
    } else if (slot.leaf.ends_with(".bias")) {
      std::fill(t.begin(), t.end(), 0.0f);
    } else {
      const double std_dev = is_residual_projection(slot.leaf) ? residual_std : kInitStd;
      for (float& x : t) x = static_cast<float>(std_dev * rng.normal());
    }
  }
}

}  // namespace stowage::executor::model
