// Tensor classes, tiers and data types: the words ARCHITECTURE.md uses for
// what a tensor is, where it rests and how it is stored.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/training_spec.h"

namespace stowage::core {

// param16: 16-bit working copy of the weights; grad16: their gradients;
// grad32: an fp32 gradient partition the optimizer reads (DeepSpeed keeps
// one; Stowage's fused Adam upcasts grad16 as it reads, so it needs none);
// master32, adam_m, adam_v: fp32 optimizer state; activation: saved for
// backward.
enum class TensorClass { kParam16, kGrad16, kGrad32, kMaster32, kAdamM, kAdamV, kActivation };

inline constexpr std::array<TensorClass, 7> kAllTensorClasses = {
    TensorClass::kParam16, TensorClass::kGrad16, TensorClass::kGrad32, TensorClass::kMaster32,
    TensorClass::kAdamM,   TensorClass::kAdamV,  TensorClass::kActivation};

enum class Tier { kGpu, kCpu, kNvme };
inline constexpr std::array<Tier, 3> kAllTiers = {Tier::kGpu, Tier::kCpu, Tier::kNvme};

// Memory figures are reported per GPU for the gpu tier and per machine for
// the host tiers all ranks share: a per-rank figure times this.
[[nodiscard]] constexpr int ranks_in_scope(Tier t, int ranks) { return t == Tier::kGpu ? 1 : ranks; }

enum class DType { kBf16, kFp16, kFp32 };

[[nodiscard]] constexpr std::string_view to_string(TensorClass c) {
  switch (c) {
    case TensorClass::kParam16: return "param16";
    case TensorClass::kGrad16: return "grad16";
    case TensorClass::kGrad32: return "grad32";
    case TensorClass::kMaster32: return "master32";
    case TensorClass::kAdamM: return "adam_m";
    case TensorClass::kAdamV: return "adam_v";
    case TensorClass::kActivation: return "activation";
  }
  return "";
}

[[nodiscard]] constexpr std::string_view to_string(Tier t) {
  switch (t) {
    case Tier::kGpu: return "gpu";
    case Tier::kCpu: return "cpu";
    case Tier::kNvme: return "nvme";
  }
  return "";
}

[[nodiscard]] constexpr std::string_view to_string(DType d) {
  switch (d) {
    case DType::kBf16: return "bf16";
    case DType::kFp16: return "fp16";
    case DType::kFp32: return "fp32";
  }
  return "";
}

[[nodiscard]] constexpr int64_t bytes_per_element(DType d) { return d == DType::kFp32 ? 4 : 2; }

// How a tensor class is stored under a training precision.
[[nodiscard]] constexpr DType dtype_of(TensorClass c, Precision p) {
  const DType half = p == Precision::kBf16 ? DType::kBf16 : DType::kFp16;
  switch (c) {
    case TensorClass::kParam16:
    case TensorClass::kGrad16:
    case TensorClass::kActivation: return half;
    default: return DType::kFp32;
  }
}

}  // namespace stowage::core
