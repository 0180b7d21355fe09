// hf_weights.h: hf_layout.h says which of our tensors make each Hugging
// Face tensor; this file moves the values (stacking rows, transposing
// Conv1D weights) and safetensors.h moves the bytes.
#include "executor/model/hf_weights.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "executor/model/llama_shape.h"
#include "executor/model/safetensors.h"

namespace stowage::executor::model {
namespace {

using core::Diagnostic;
using core::Diagnostics;

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Diagnostic problem(const std::filesystem::path& path, std::string what, std::string expected) {
  return {.where = {path.string()}, .what = std::move(what), .expected = std::move(expected)};
}

// Where a workload tensor sits: its layer, first float and shape.
struct Place {
  size_t layer = 0;
  size_t offset = 0;
  std::vector<int64_t> shape;
};

std::map<std::string, Place> places_of(const core::Workload& workload) {
  std::map<std::string, Place> out;
  for (size_t l = 0; l < workload.layers().size(); ++l) {
    size_t at = 0;
    for (const core::ParamTensor& p : workload.layers()[l].params) {
      out[p.name] = {.layer = l, .offset = at, .shape = p.shape};
      at += static_cast<size_t>(p.elements());
    }
  }
  return out;
}

// The Hugging Face shape of `t`: its parts' rows stacked, [rows, cols] or
// [cols, rows] when transposed; 1-D parts end to end.
std::vector<int64_t> hf_shape(const HfTensor& t, const std::map<std::string, Place>& places) {
  int64_t rows = 0;
  const std::vector<int64_t>& first = places.at(t.parts.front()).shape;
  for (const std::string& part : t.parts) rows += places.at(part).shape[0];
  if (first.size() == 1) return {rows};
  return t.storage == HfStorage::kTransposed ? std::vector<int64_t>{first[1], rows}
                                             : std::vector<int64_t>{rows, first[1]};
}

// values [rows, cols] -> [cols, rows].
std::vector<float> transpose(const std::vector<float>& values, int64_t rows, int64_t cols) {
  std::vector<float> out(values.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      out[static_cast<size_t>(c * rows + r)] = values[static_cast<size_t>(r * cols + c)];
  }
  return out;
}

// GPT-2 buffers and the tied head: in some files, not parameters here.
bool skippable(const std::string& name) {
  return name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias") || name == "lm_head.weight";
}

// Our values of `t` in the Hugging Face layout (row-major of hf_shape).
std::vector<float> gather(const HfTensor& t, const std::map<std::string, Place>& places,
                          const std::vector<std::vector<float>>& layers) {
  std::vector<float> out;
  for (const std::string& part : t.parts) {
    const Place& p = places.at(part);
    int64_t n = 1;
    for (int64_t d : p.shape) n *= d;
    const auto begin = layers.at(p.layer).begin() + static_cast<std::ptrdiff_t>(p.offset);
    out.insert(out.end(), begin, begin + n);
  }
  const std::vector<int64_t> shape = hf_shape(t, places);
  return t.storage == HfStorage::kTransposed ? transpose(out, shape[1], shape[0]) : out;
}

// The inverse of gather: `values` in the Hugging Face layout into `layers`.
void scatter(const HfTensor& t, const std::map<std::string, Place>& places, std::vector<float> values,
             std::vector<std::vector<float>>& layers) {
  const std::vector<int64_t> shape = hf_shape(t, places);
  if (t.storage == HfStorage::kTransposed) values = transpose(values, shape[0], shape[1]);
  size_t at = 0;
  for (const std::string& part : t.parts) {
    const Place& p = places.at(part);
    int64_t n = 1;
    for (int64_t d : p.shape) n *= d;
    std::copy(values.begin() + static_cast<std::ptrdiff_t>(at),
              values.begin() + static_cast<std::ptrdiff_t>(at + n),
              layers.at(p.layer).begin() + static_cast<std::ptrdiff_t>(p.offset));
    at += static_cast<size_t>(n);
  }
}

}  // namespace

core::Result<void> hf_weights_supported(const core::Workload& workload) {
  if (auto layout = hf_layout(workload); !layout) return std::unexpected(layout.error());
  return {};
}

core::Result<std::vector<std::vector<float>>> load_hf_weights(const std::filesystem::path& path,
                                                              const core::Workload& workload) {
  auto layout = hf_layout(workload);
  if (!layout) return std::unexpected(layout.error());
  auto file = read_safetensors(path);
  if (!file) return std::unexpected(file.error());
  const std::map<std::string, Place> places = places_of(workload);
  std::vector<std::vector<float>> layers;
  for (const core::Layer& layer : workload.layers())
    layers.emplace_back(static_cast<size_t>(layer.param_count()));
  const std::string model = " for model '" + workload.model().name + "'";
  Diagnostics problems;
  std::set<std::string> used;
  for (const HfTensor& t : *layout) {
    std::string name = t.name;
    if (!file->tensors.contains(name) && name.starts_with("transformer."))
      name = name.substr(12);  // GPT2Model's
    auto it = file->tensors.find(name);
    const std::vector<int64_t> shape = hf_shape(t, places);
    if (it == file->tensors.end()) {
      problems.push_back(problem(path, "no tensor '" + t.name + "'", "shape " + shape_string(shape) + model));
      continue;
    }
    used.insert(name);
    if (it->second.shape != shape) {
      problems.push_back(problem(path, "tensor '" + name + "' has shape " + shape_string(it->second.shape),
                                 shape_string(shape) + model));
      continue;
    }
    scatter(t, places, it->second.to_float(), layers);
  }
  for (const auto& [name, tensor] : file->tensors) {
    if (!used.contains(name) && !(skippable(name) && !is_llama_style(workload.model()))) {
      problems.push_back(problem(path,
                                 "tensor '" + name + "' " + shape_string(tensor.shape) +
                                     " is not in model '" + workload.model().name + "'",
                                 "only the model's tensors, with Hugging Face names"));
    }
  }
  if (!problems.empty()) return std::unexpected(problems);
  return layers;
}

core::Result<void> save_hf_weights(const std::filesystem::path& path, const core::Workload& workload,
                                   const std::vector<std::vector<float>>& layers) {
  auto layout = hf_layout(workload);
  if (!layout) return std::unexpected(layout.error());
  for (size_t l = 0; l < workload.layers().size(); ++l) {
    if (layers.at(l).size() != static_cast<size_t>(workload.layers()[l].param_count())) {
      throw std::invalid_argument("save_hf_weights: layer " + workload.layers()[l].name +
                                  " has the wrong size");
    }
  }
  const std::map<std::string, Place> places = places_of(workload);
  std::vector<std::vector<float>> values;  // kept alive for the spans below
  std::vector<NamedTensor> tensors;
  for (const HfTensor& t : *layout) values.push_back(gather(t, places, layers));
  for (size_t i = 0; i < layout->size(); ++i) {
    tensors.push_back(
        {.name = (*layout)[i].name, .shape = hf_shape((*layout)[i], places), .values = values[i]});
  }
  return write_safetensors(path, tensors, {{"format", "pt"}, {"stowage_model", workload.model().name}});
}

}  // namespace stowage::executor::model
