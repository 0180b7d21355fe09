// Which Hugging Face tensor holds which core::Workload tensors, for the two
// architectures the executor trains: Llama (transformers' LlamaForCausalLM,
// one tensor each, renamed) and GPT-2 (GPT2LMHeadModel, whose Conv1D
// modules store weights [in, out], transposed from ours, and whose c_attn
// stacks q, k and v into one matrix).
#pragma once

#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/workload.h"

namespace stowage::executor::model {

enum class HfStorage { kAsIs, kTransposed };

struct HfTensor {
  std::string name;                // "model.layers.0.self_attn.q_proj.weight"
  std::vector<std::string> parts;  // workload tensors stacked by rows (1-D ones end to end)
  HfStorage storage = HfStorage::kAsIs;
};

// Every Hugging Face tensor of `workload`'s model, each workload tensor in
// exactly one of them; or why the model has no such layout here.
[[nodiscard]] core::Result<std::vector<HfTensor>> hf_layout(const core::Workload& workload);

// The Hugging Face name of a Llama workload tensor:
// "layers.3.attn.q_proj.weight" -> "model.layers.3.self_attn.q_proj.weight",
// "layers.3.attn_norm.weight" -> "model.layers.3.input_layernorm.weight",
// "final_norm.weight" -> "model.norm.weight", "lm_head.weight" unchanged.
[[nodiscard]] std::string hf_llama_name(const std::string& name);

}  // namespace stowage::executor::model
