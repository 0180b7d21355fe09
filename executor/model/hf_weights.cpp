// hf_weights.h: the renaming, then safetensors.h for the bytes.
#include "executor/model/hf_weights.h"

#include <array>
#include <set>
#include <stdexcept>
#include <utility>

#include "executor/model/llama_shape.h"
#include "executor/model/safetensors.h"

namespace stowage::executor::model {
namespace {

using core::Diagnostic;
using core::Diagnostics;

// Module names inside a block: core::Workload's -> transformers' LlamaDecoderLayer.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kBlockModules{{
    {"attn_norm.", "input_layernorm."},
    {"mlp_norm.", "post_attention_layernorm."},
    {"attn.", "self_attn."},
    {"mlp.", "mlp."},
}};

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Diagnostic problem(const std::filesystem::path& path, std::string what, std::string expected) {
  return {.where = {path.string()}, .what = std::move(what), .expected = std::move(expected)};
}

}  // namespace

core::Result<void> hf_weights_supported(const core::Workload& workload) {
  if (is_llama_style(workload.model())) return {};
  return core::fail(
      {.what = "model '" + workload.model().name + "': safetensors weights with Hugging Face names",
       .expected = "a Llama-style model (norm rmsnorm, mlp swiglu, position rope); the GPT's are not "
                   "supported yet"});
}

std::string hf_llama_name(const std::string& name) {
  if (name == "lm_head.weight") return name;
  if (name.starts_with("final_norm."))
    return "model.norm." + name.substr(std::string_view("final_norm.").size());
  if (name.starts_with("layers.")) {
    const size_t leaf = name.find('.', std::string_view("layers.").size()) + 1;
    for (const auto& [ours, theirs] : kBlockModules) {
      if (name.compare(leaf, ours.size(), ours) == 0) {
        return "model." + name.substr(0, leaf) + std::string(theirs) + name.substr(leaf + ours.size());
      }
    }
  }
  return "model." + name;
}

core::Result<std::vector<std::vector<float>>> load_hf_weights(const std::filesystem::path& path,
                                                              const core::Workload& workload) {
  if (auto r = hf_weights_supported(workload); !r) return std::unexpected(r.error());
  auto file = read_safetensors(path);
  if (!file) return std::unexpected(file.error());
  Diagnostics problems;
  std::set<std::string> used;
  std::vector<std::vector<float>> layers;
  for (const core::Layer& layer : workload.layers()) {
    std::vector<float>& params = layers.emplace_back();
    params.reserve(static_cast<size_t>(layer.param_count()));
    for (const core::ParamTensor& p : layer.params) {
      const std::string name = hf_llama_name(p.name);
      auto it = file->tensors.find(name);
      if (it == file->tensors.end()) {
        problems.push_back(
            problem(path, "no tensor '" + name + "'",
                    "shape " + shape_string(p.shape) + " for model '" + workload.model().name + "'"));
        continue;
      }
      used.insert(name);
      if (it->second.shape != p.shape) {
        problems.push_back(problem(path, "tensor '" + name + "' has shape " + shape_string(it->second.shape),
                                   shape_string(p.shape) + " for model '" + workload.model().name + "'"));
        continue;
      }
      const std::vector<float> values = it->second.to_float();
      params.insert(params.end(), values.begin(), values.end());
    }
  }
  for (const auto& [name, tensor] : file->tensors) {
    if (!used.contains(name)) {
      problems.push_back(problem(path,
                                 "tensor '" + name + "' " + shape_string(tensor.shape) +
                                     " is not in model '" + workload.model().name + "'",
                                 "only the model's tensors, with Hugging Face Llama names"));
    }
  }
  if (!problems.empty()) return std::unexpected(problems);
  return layers;
}

core::Result<void> save_hf_weights(const std::filesystem::path& path, const core::Workload& workload,
                                   const std::vector<std::vector<float>>& layers) {
  if (auto r = hf_weights_supported(workload); !r) return r;
  std::vector<NamedTensor> tensors;
  for (size_t l = 0; l < workload.layers().size(); ++l) {
    const core::Layer& layer = workload.layers()[l];
    if (layers.at(l).size() != static_cast<size_t>(layer.param_count())) {
      throw std::invalid_argument("save_hf_weights: layer " + layer.name + " has the wrong size");
    }
    size_t at = 0;
    for (const core::ParamTensor& p : layer.params) {
      const auto n = static_cast<size_t>(p.elements());
      tensors.push_back(
          {.name = hf_llama_name(p.name), .shape = p.shape, .values = std::span(layers[l]).subspan(at, n)});
      at += n;
    }
  }
  return write_safetensors(path, tensors, {{"format", "pt"}, {"stowage_model", workload.model().name}});
}

}  // namespace stowage::executor::model
