// hf_layout.h. Names from transformers' modeling_llama.py and
// modeling_gpt2.py (GPT2Model: wte, wpe, h.N.{ln_1, attn.c_attn,
// attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, ln_f; the LM head is tied to wte
// and not stored).
#include "executor/model/hf_layout.h"

#include <array>
#include <utility>

#include "executor/model/llama_shape.h"
#include "executor/model/model_shape.h"

namespace stowage::executor::model {
namespace {

// Module names inside a block: core::Workload's -> transformers' LlamaDecoderLayer.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kLlamaModules{{
    {"attn_norm.", "input_layernorm."},
    {"mlp_norm.", "post_attention_layernorm."},
    {"attn.", "self_attn."},
    {"mlp.", "mlp."},
}};

std::vector<HfTensor> llama_layout(const core::Workload& workload) {
  std::vector<HfTensor> out;
  for (const core::Layer& layer : workload.layers()) {
    for (const core::ParamTensor& p : layer.params) out.push_back({hf_llama_name(p.name), {p.name}});
  }
  return out;
}

std::vector<HfTensor> gpt2_layout(const core::Workload& workload) {
  const std::string t = "transformer.";
  std::vector<HfTensor> out = {{t + "wte.weight", {"embed_tokens.weight"}},
                               {t + "wpe.weight", {"embed_positions.weight"}}};
  for (int64_t n = 0; n < workload.model().layers; ++n) {
    const std::string ours = "layers." + std::to_string(n) + ".";
    const std::string theirs = t + "h." + std::to_string(n) + ".";
    auto qkv = [&](const std::string& leaf) {
      return std::vector<std::string>{ours + "attn.q_proj." + leaf, ours + "attn.k_proj." + leaf,
                                      ours + "attn.v_proj." + leaf};
    };
    const std::vector<HfTensor> block = {
        {theirs + "ln_1.weight", {ours + "attn_norm.weight"}},
        {theirs + "ln_1.bias", {ours + "attn_norm.bias"}},
        {theirs + "attn.c_attn.weight", qkv("weight"), HfStorage::kTransposed},
        {theirs + "attn.c_attn.bias", qkv("bias")},
        {theirs + "attn.c_proj.weight", {ours + "attn.o_proj.weight"}, HfStorage::kTransposed},
        {theirs + "attn.c_proj.bias", {ours + "attn.o_proj.bias"}},
        {theirs + "ln_2.weight", {ours + "mlp_norm.weight"}},
        {theirs + "ln_2.bias", {ours + "mlp_norm.bias"}},
        {theirs + "mlp.c_fc.weight", {ours + "mlp.up_proj.weight"}, HfStorage::kTransposed},
        {theirs + "mlp.c_fc.bias", {ours + "mlp.up_proj.bias"}},
        {theirs + "mlp.c_proj.weight", {ours + "mlp.down_proj.weight"}, HfStorage::kTransposed},
        {theirs + "mlp.c_proj.bias", {ours + "mlp.down_proj.bias"}},
    };
    out.insert(out.end(), block.begin(), block.end());
  }
  out.push_back({t + "ln_f.weight", {"final_norm.weight"}});
  out.push_back({t + "ln_f.bias", {"final_norm.bias"}});
  return out;
}

}  // namespace

std::string hf_llama_name(const std::string& name) {
  if (name == "lm_head.weight") return name;
  if (name.starts_with("final_norm."))
    return "model.norm." + name.substr(std::string_view("final_norm.").size());
  if (name.starts_with("layers.")) {
    const size_t leaf = name.find('.', std::string_view("layers.").size()) + 1;
    for (const auto& [ours, theirs] : kLlamaModules) {
      if (name.compare(leaf, ours.size(), ours) == 0) {
        return "model." + name.substr(0, leaf) + std::string(theirs) + name.substr(leaf + ours.size());
      }
    }
  }
  return "model." + name;
}

core::Result<std::vector<HfTensor>> hf_layout(const core::Workload& workload) {
  if (is_llama_style(workload.model())) {
    if (auto shape = llama_shape_of(workload); !shape) return std::unexpected(shape.error());
    return llama_layout(workload);
  }
  if (auto shape = model_shape_of(workload); !shape) return std::unexpected(shape.error());
  return gpt2_layout(workload);
}

}  // namespace stowage::executor::model
