// The safetensors file format (Hugging Face, https://huggingface.co/docs/
// safetensors, "Format"): an 8-byte little-endian header length N, N bytes
// of JSON mapping each tensor name to {"dtype", "shape", "data_offsets":
// [begin, end]} (byte offsets into the data that follows the header) plus
// an optional "__metadata__" of strings, then the tensors' bytes, row-major,
// little-endian, packed without gaps. Only what the model's weights need is
// read or written: F32, F16 and BF16 tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace stowage::executor::model {

enum class TensorDtype { kF32, kF16, kBf16 };

struct StoredTensor {
  TensorDtype dtype = TensorDtype::kF32;
  std::vector<int64_t> shape;
  std::vector<std::byte> bytes;  // elements * (4 or 2) bytes, little-endian

  // The values widened to fp32 (F16 and BF16 exactly).
  [[nodiscard]] std::vector<float> to_float() const;
};

struct SafetensorsFile {
  std::map<std::string, StoredTensor> tensors;
  std::map<std::string, std::string> metadata;
};

// The tensors of the file at `path`, or every problem with it as
// `path: what (expected ...)`: unreadable, a header longer than the file, bad
// JSON, a tensor with an unknown dtype, a shape whose size is not its byte
// range, ranges outside the data or overlapping. Never throws for bad input.
[[nodiscard]] core::Result<SafetensorsFile> read_safetensors(const std::filesystem::path& path);

// A tensor to write: fp32 values of `shape`, stored as F32.
struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;
  std::span<const float> values;
};

// Writes `tensors` in order (data offsets increasing, the header padded with
// spaces to a multiple of 8 bytes as the reference writer does) and
// `metadata` to `path`, through a temporary file renamed into place.
// Returns why not if the file cannot be written.
[[nodiscard]] core::Result<void> write_safetensors(const std::filesystem::path& path,
                                                   const std::vector<NamedTensor>& tensors,
                                                   const std::map<std::string, std::string>& metadata);

[[nodiscard]] std::string_view to_string(TensorDtype dtype);

}  // namespace stowage::executor::model
