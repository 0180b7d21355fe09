// A model's weights in and out as a safetensors file with Hugging Face's
// tensor names, so that they load into transformers (LlamaForCausalLM) and
// the tools built on it, and weights from there start a run. Llama-style
// models only so far (the GPT's Hugging Face layout fuses q, k and v into a
// transposed Conv1D matrix: not a renaming). Shapes are core::Workload's,
// which are Hugging Face's ([out, in] for Linear weights).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/workload.h"

namespace stowage::executor::model {

// Nothing, or why `workload`'s model has no Hugging Face safetensors layout
// here (it is not Llama-style).
[[nodiscard]] core::Result<void> hf_weights_supported(const core::Workload& workload);

// The Hugging Face name of the workload tensor `name` of a Llama-style
// model: "layers.3.attn.q_proj.weight" -> "model.layers.3.self_attn.q_proj.weight",
// "layers.3.attn_norm.weight" -> "model.layers.3.input_layernorm.weight",
// "final_norm.weight" -> "model.norm.weight", "lm_head.weight" unchanged.
[[nodiscard]] std::string hf_llama_name(const std::string& name);

// Every layer's fp32 parameters, each the concatenation of its tensors in
// core::Workload's order, from the safetensors file at `path` (F32, F16 or
// BF16 tensors, widened exactly). Every problem comes back at once: a
// tensor missing, of another shape, or in the file but not in the model.
[[nodiscard]] core::Result<std::vector<std::vector<float>>> load_hf_weights(const std::filesystem::path& path,
                                                                            const core::Workload& workload);

// Writes `layers` (as load_hf_weights returns them) as F32 tensors with
// Hugging Face names, metadata {"format": "pt"} (which transformers'
// from_pretrained requires) and the model's name.
[[nodiscard]] core::Result<void> save_hf_weights(const std::filesystem::path& path,
                                                 const core::Workload& workload,
                                                 const std::vector<std::vector<float>>& layers);

}  // namespace stowage::executor::model
