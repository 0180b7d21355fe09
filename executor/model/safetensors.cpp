// safetensors.h on std::fstream and nlohmann-json. The whole file is read
// into memory: the executor's models are small, and the data must be
// checked against the header before any of it is used anyway.
#include "executor/model/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/output_file.h"
#include "core/text_file.h"
#include "executor/model/half_convert.h"

namespace stowage::executor::model {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian data");

using core::Diagnostic;
using core::Diagnostics;

// Refuse headers beyond this: the reference implementation's limit (100 MB).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

std::optional<TensorDtype> dtype_of(const std::string& s) {
  if (s == "F32") return TensorDtype::kF32;
  if (s == "F16") return TensorDtype::kF16;
  if (s == "BF16") return TensorDtype::kBf16;
  return std::nullopt;
}

int64_t element_bytes(TensorDtype d) {
  return d == TensorDtype::kF32 ? 4 : 2;
}

Diagnostic problem(const std::filesystem::path& path, std::string what, std::string expected = "") {
  return {.where = {path.string()}, .what = std::move(what), .expected = std::move(expected)};
}

// One header entry, checked against the data's size; appends its problems.
std::optional<StoredTensor> entry_of(const std::filesystem::path& path, const std::string& name,
                                     const nlohmann::json& e, std::span<const std::byte> data,
                                     Diagnostics& out) {
  const std::string label = "tensor '" + name + "'";
  if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets")) {
    out.push_back(problem(path, label + " lacks dtype, shape or data_offsets",
                          "{\"dtype\", \"shape\", \"data_offsets\"}"));
    return std::nullopt;
  }
  try {
    const std::optional<TensorDtype> dtype = dtype_of(e.at("dtype").get<std::string>());
    if (!dtype) {
      out.push_back(
          problem(path, label + " has dtype " + e.at("dtype").get<std::string>(), "F32, F16 or BF16"));
      return std::nullopt;
    }
    StoredTensor t{.dtype = *dtype, .shape = e.at("shape").get<std::vector<int64_t>>()};
    const auto offsets = e.at("data_offsets").get<std::vector<uint64_t>>();
    int64_t elements = 1;
    for (int64_t d : t.shape) elements = d < 0 ? -1 : elements * d;
    if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data.size()) {
      out.push_back(problem(
          path, label + " has data_offsets outside the " + std::to_string(data.size()) + " bytes of data",
          "[begin, end] with begin <= end <= the data's size"));
      return std::nullopt;
    }
    if (elements < 0 || static_cast<uint64_t>(elements * element_bytes(*dtype)) != offsets[1] - offsets[0]) {
      out.push_back(problem(path, label + " spans " + std::to_string(offsets[1] - offsets[0]) + " bytes",
                            "its shape's elements times the dtype's size"));
      return std::nullopt;
    }
    t.bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(offsets[0]),
                   data.begin() + static_cast<std::ptrdiff_t>(offsets[1]));
    return t;
  } catch (const nlohmann::json::exception& x) {
    out.push_back(problem(path, label + ": " + x.what(), "a dtype string, an integer shape and two offsets"));
    return std::nullopt;
  }
}

// The reference reader's rule: the byte ranges, in order, tile the data
// exactly (no gap, no overlap, nothing after the last).
void check_packed(const std::filesystem::path& path, const nlohmann::json& header, uint64_t data_bytes,
                  Diagnostics& out) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, e] : header.items()) {
    if (name != "__metadata__")
      ranges.emplace_back(e["data_offsets"][0].get<uint64_t>(), e["data_offsets"][1].get<uint64_t>());
  }
  std::sort(ranges.begin(), ranges.end());
  uint64_t at = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != at) {
      out.push_back(problem(path, "tensor data has a gap or overlap at byte " + std::to_string(at),
                            "data_offsets that tile the data without gaps"));
      return;
    }
    at = end;
  }
  if (at != data_bytes) {
    out.push_back(problem(path, std::to_string(data_bytes - at) + " bytes after the last tensor",
                          "data_offsets that tile the data without gaps"));
  }
}

// A regular file of bounded size (issue 12: /dev/zero was read without end).
core::Result<std::vector<std::byte>> read_all(const std::filesystem::path& path) {
  core::Result<std::string> text = core::read_input_file(path, core::InputKind::kWeights);
  if (!text) {
    core::Diagnostic d = text.error().front();
    if (!std::filesystem::exists(path)) d.what = "cannot be opened: " + d.what;
    return core::fail(std::move(d));
  }
  std::vector<std::byte> bytes(text->size());
  std::memcpy(bytes.data(), text->data(), text->size());
  return bytes;
}

}  // namespace

std::string_view to_string(TensorDtype dtype) {
  switch (dtype) {
    case TensorDtype::kF32:
      return "F32";
    case TensorDtype::kF16:
      return "F16";
    case TensorDtype::kBf16:
      return "BF16";
  }
  return "?";
}

std::vector<float> StoredTensor::to_float() const {
  const size_t n = bytes.size() / static_cast<size_t>(element_bytes(dtype));
  std::vector<float> out(n);
  if (dtype == TensorDtype::kF32) {
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  std::vector<uint16_t> half(n);
  std::memcpy(half.data(), bytes.data(), bytes.size());
  from_half(dtype == TensorDtype::kBf16 ? core::Precision::kBf16 : core::Precision::kFp16, half, out);
  return out;
}

core::Result<SafetensorsFile> read_safetensors(const std::filesystem::path& path) {
  auto bytes = read_all(path);
  if (!bytes) return std::unexpected(bytes.error());
  uint64_t header_bytes = 0;
  if (bytes->size() < 8)
    return core::fail(problem(path, "is shorter than the 8-byte header length", "a safetensors file"));
  std::memcpy(&header_bytes, bytes->data(), 8);
  if (header_bytes > kMaxHeaderBytes || header_bytes > bytes->size() - 8) {
    return core::fail(problem(path,
                              "declares a header of " + std::to_string(header_bytes) +
                                  " bytes in a file of " + std::to_string(bytes->size()),
                              "a safetensors file"));
  }
  const auto* text = reinterpret_cast<const char*>(bytes->data() + 8);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text, text + header_bytes);
  } catch (const nlohmann::json::exception& x) {
    return core::fail(problem(path, std::string("header is not JSON: ") + x.what(), "a JSON object"));
  }
  if (!header.is_object()) return core::fail(problem(path, "header is not a JSON object", "a JSON object"));
  const std::span<const std::byte> data = std::span(*bytes).subspan(8 + header_bytes);
  SafetensorsFile file;
  Diagnostics problems;
  for (const auto& [name, e] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : e.items()) {
        if (v.is_string()) file.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (auto t = entry_of(path, name, e, data, problems)) file.tensors.emplace(name, std::move(*t));
  }
  if (problems.empty()) check_packed(path, header, data.size(), problems);
  if (!problems.empty()) return std::unexpected(problems);
  return file;
}

core::Result<void> write_safetensors(const std::filesystem::path& path,
                                     const std::vector<NamedTensor>& tensors,
                                     const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t at = 0;
  for (const NamedTensor& t : tensors) {
    const uint64_t size = t.values.size() * sizeof(float);
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {at, at + size}}};
    at += size;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // so the data starts 8-byte aligned
  // Written by the rules of every output (core/output_file.h, issue 12): a
  // temporary file of Stowage's own beside the target, renamed only over a
  // regular file or nothing, its mode kept. (A fixed "W.partial" beside it
  // truncated a user's file of that name, and the rename replaced a device
  // node or a symlink.)
  const uint64_t n = text.size();
  std::vector<std::span<const char>> pieces{{reinterpret_cast<const char*>(&n), 8}, {text.data(), text.size()}};
  for (const NamedTensor& t : tensors) {
    pieces.emplace_back(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  }
  if (core::Diagnostics d = core::write_file_atomically(path, pieces); !d.empty()) return std::unexpected(d);
  return {};
}

}  // namespace stowage::executor::model
