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

// How the optimizer keeps its Adam moments (issue 16, item 3), a policy
// decision the user must allow. kBf16 stores adam_m and adam_v in bf16
// (round to nearest even on every store) and keeps master32 in fp32, so the
// optimizer states take 4 + 2 + 2 = 8 bytes per parameter instead of 12.
// DeepSpeed's own bf16 states go further: DeepSpeedCPUAdam keeps its moments
// in the parameter's dtype when fp32_optimizer_states=False
// (deepspeed/ops/adam/cpu_adam.py), and ZeRO exposes that only together with
// bf16 master weights (bf16.bf16_master_weights_and_grads +
// bf16.bf16_optimizer_states, docs/_pages/config-json.md: "~6 bytes/param,
// versus ~10"), which drops updates below bf16's resolution; Stowage keeps
// the fp32 master, which DeepSpeed cannot express (the exporters refuse it).
enum class StatePrecision { kFp32, kBf16 };

[[nodiscard]] constexpr std::string_view to_string(StatePrecision s) {
  return s == StatePrecision::kBf16 ? "bf16" : "fp32";
}

// How a tensor class is stored under a training precision and an optimizer
// state precision.
[[nodiscard]] constexpr DType dtype_of(TensorClass c, Precision p,
                                       StatePrecision states = StatePrecision::kFp32) {
  const DType half = p == Precision::kBf16 ? DType::kBf16 : DType::kFp16;
  switch (c) {
    case TensorClass::kParam16:
    case TensorClass::kGrad16:
    case TensorClass::kActivation: return half;
    case TensorClass::kAdamM:
    case TensorClass::kAdamV: return states == StatePrecision::kBf16 ? DType::kBf16 : DType::kFp32;
    default: return DType::kFp32;
  }
}

// The one place the optimizer state's size comes from: master32, adam_m and
// adam_v of one parameter (12 B in fp32, 8 B with bf16 moments). Lowering's
// resting and staged states, NVMe state traffic, rollback copies, snapshots,
// the planner's floors and the executor's state buffers all use it.
[[nodiscard]] constexpr int64_t state_bytes_per_param(StatePrecision states) {
  return bytes_per_element(dtype_of(TensorClass::kMaster32, Precision::kBf16, states)) +
         bytes_per_element(dtype_of(TensorClass::kAdamM, Precision::kBf16, states)) +
         bytes_per_element(dtype_of(TensorClass::kAdamV, Precision::kBf16, states));
}

// DRAM traffic of one parameter's Adam step: the states read and written,
// the 16-bit gradient read and the 16-bit parameter copy written (28 B in
// fp32, 20 B with bf16 moments). The simulator prices the CPU optimizer by
// these bytes (sim/cpu_optimizer_model.cpp).
[[nodiscard]] constexpr int64_t adam_bytes_per_param(StatePrecision states) {
  return 2 * state_bytes_per_param(states) + 2 + 2;
}

}  // namespace stowage::core
