// A transformer architecture as its config.json describes it. The workload
// model (core/workload.h) expands it into layers and tensors. Loaded from
// profiles/models/*.yaml.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace stowage::core {

enum class NormKind { kLayerNorm, kRmsNorm };
enum class MlpKind { kGelu, kRelu, kSwiglu };
enum class PositionKind { kLearned, kRope, kAlibi };

struct ModelSpec {
  std::string name;     // "llama-2-13b"
  std::string label;    // "Llama 2 13B"
  std::string source;   // config.json / paper the numbers come from
  int64_t d_model = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;       // = heads without grouped-query attention
  int64_t head_dim = 0;       // d_model / heads unless the config says otherwise
  int64_t ffn = 0;            // MLP hidden width (per expert for MoE)
  int64_t vocab = 0;
  int64_t max_positions = 0;  // context length the model was trained for
  int64_t position_offset = 0;  // extra learned position rows (OPT: 2)
  bool tied_embeddings = true;
  bool biases = true;           // linear layers carry biases (GPT-2, OPT, BLOOM)
  bool embedding_norm = false;  // a norm right after the embedding (BLOOM)
  NormKind norm = NormKind::kLayerNorm;
  MlpKind mlp = MlpKind::kGelu;
  PositionKind position = PositionKind::kLearned;
  double rope_theta = 10000;    // RoPE base (config.json rope_theta): Llama 2 10000, Llama 3 500000
  int64_t experts = 1;          // MoE experts per layer (Mixtral: 8)
  int64_t experts_per_token = 1;  // top-k routing (Mixtral: 2)
  std::optional<int64_t> official_params;  // the publisher's count, for cross-checks
  std::string official_params_source;
};

}  // namespace stowage::core
