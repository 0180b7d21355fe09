// A model's weights in and out as a safetensors file with Hugging Face's
// tensor names and layouts (hf_layout.h), so that they load into
// transformers (LlamaForCausalLM, GPT2LMHeadModel) and the tools built on
// it, and weights from there start a run.
#pragma once

#include <filesystem>
#include <vector>

#include "core/diagnostic.h"
#include "core/workload.h"
#include "executor/model/hf_layout.h"

namespace stowage::executor::model {

// Nothing, or why `workload`'s model has no Hugging Face layout here.
[[nodiscard]] core::Result<void> hf_weights_supported(const core::Workload& workload);

// Every layer's fp32 parameters, each the concatenation of its tensors in
// core::Workload's order, from the safetensors file at `path` (F32, F16 or
// BF16 tensors, widened exactly). Every problem comes back at once: a
// tensor missing, of another shape, or in the file but not in the model.
// GPT-2 files may also hold the attention masks (attn.bias,
// attn.masked_bias) and the tied lm_head.weight, which are not parameters
// here and are skipped; their names may lack the "transformer." prefix.
[[nodiscard]] core::Result<std::vector<std::vector<float>>> load_hf_weights(const std::filesystem::path& path,
                                                                            const core::Workload& workload);

// Writes `layers` (as load_hf_weights returns them) as F32 tensors in the
// Hugging Face layout, with metadata {"format": "pt"} (which transformers'
// from_pretrained requires) and the model's name.
[[nodiscard]] core::Result<void> save_hf_weights(const std::filesystem::path& path,
                                                 const core::Workload& workload,
                                                 const std::vector<std::vector<float>>& layers);

}  // namespace stowage::executor::model
