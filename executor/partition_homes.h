// Where each partition's training state rests between uses, as the plan
// says: its 16-bit parameters (two versions under a delayed update, which
// reads parameters one step older than the optimizer writes) and its fp32
// master weights and Adam moments (fp32 or bf16), on the device, in host RAM or on NVMe.
// Allocated once for a run; checkpoints read and restore them here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/policy.h"
#include "executor/backend.h"

namespace stowage::executor {

struct PartitionHome {
  core::Partition part;
  core::PartitionPolicy policy;
  std::string name;                        // "layers.3" or "layers.3[0+65536]"
  std::array<Buffer, 2> param16;           // on gpu or cpu: by version parity
  std::array<std::string, 2> param16_region;  // on nvme: by version parity
  Buffer states;                           // on gpu or cpu: master32 | adam_m | adam_v
  std::string states_region;               // on nvme
  core::StatePrecision state_precision = core::StatePrecision::kFp32;  // the plan's, for every partition

  [[nodiscard]] int64_t params() const { return part.params; }
  // master32 + adam_m + adam_v: what lowering sizes the states by (core::state_bytes_per_param).
  [[nodiscard]] int64_t state_bytes() const { return core::state_bytes_per_param(state_precision) * part.params; }
};

class PartitionHomes {
 public:
  // Allocates every partition's resting place on `backend`. `versions` is 2
  // under a delayed update, else 1.
  static core::Result<PartitionHomes> allocate(Backend& backend, const std::vector<core::Partition>& partitions,
                                               const std::vector<std::string>& names, const core::Policy& policy);
  PartitionHomes(PartitionHomes&&) = default;
  PartitionHomes& operator=(PartitionHomes&&) = default;
  ~PartitionHomes();

  [[nodiscard]] int versions() const { return versions_; }
  // The parity slot that holds parameter version `version`.
  [[nodiscard]] size_t slot(int64_t version) const { return static_cast<size_t>(version % versions_); }
  [[nodiscard]] std::vector<PartitionHome>& all() { return homes_; }
  [[nodiscard]] const std::vector<PartitionHome>& all() const { return homes_; }
  [[nodiscard]] PartitionHome& operator[](size_t j) { return homes_[j]; }

  // The whole state of partition j as host bytes, wherever it rests: param16
  // versions then master32, adam_m, adam_v. For checkpoints and evaluation.
  // No op orders these transfers, so each goes behind every lane's work and
  // every lane's next work behind it (lane_order.h).
  [[nodiscard]] core::Result<std::vector<std::byte>> read_param16(size_t j, size_t slot);
  [[nodiscard]] core::Result<std::vector<std::byte>> read_states(size_t j);
  [[nodiscard]] core::Result<void> write_param16(size_t j, size_t slot, std::span<const std::byte> bytes);
  [[nodiscard]] core::Result<void> write_states(size_t j, std::span<const std::byte> bytes);

 private:
  PartitionHomes(Backend& backend, int versions) : backend_(&backend), versions_(versions) {}
  // Moves data between a host span and a home on any tier.
  core::Result<void> load(const Buffer& home, const std::string& region, std::span<std::byte> out);
  core::Result<void> store(const Buffer& home, const std::string& region, std::span<const std::byte> in);

  Backend* backend_;
  int versions_;
  std::vector<PartitionHome> homes_;
};

}  // namespace stowage::executor
