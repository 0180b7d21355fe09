// Test helper: the whole Llama (whole_model.h's WholeModelOf) and the small
// shape the gradient tests use.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "core/workload.h"
#include "executor/model/llama_model.h"
#include "tests/executor/model/whole_model.h"

namespace stowage::executor::model::testing {

// d_model 16, 4 query heads and 2 kv heads of 4, ffn 32, vocab 32, 8
// positions, 2 blocks, RoPE base 10000.
inline core::ModelSpec small_llama_spec() {
  return {.name = "small-llama",
          .d_model = 16,
          .layers = 2,
          .heads = 4,
          .kv_heads = 2,
          .head_dim = 4,
          .ffn = 32,
          .vocab = 32,
          .max_positions = 8,
          .tied_embeddings = false,
          .biases = false,
          .norm = core::NormKind::kRmsNorm,
          .mlp = core::MlpKind::kSwiglu,
          .position = core::PositionKind::kRope};
}

inline LlamaModel must_create_llama(const core::Workload& workload) {
  core::Result<LlamaModel> m = LlamaModel::create(workload);
  if (!m) throw std::runtime_error(core::to_string(m.error()));
  return std::move(*m);
}

// The Llama driven whole (whole_model.h).
class LlamaWholeModel : public WholeModelOf<LlamaModel> {
 public:
  LlamaWholeModel(const core::Workload& workload, uint64_t seed)
      : WholeModelOf(must_create_llama(workload), seed) {}
};

}  // namespace stowage::executor::model::testing
