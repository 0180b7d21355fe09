#include "executor/partition_homes.h"

#include <cstring>

#include "executor/lane_order.h"

namespace stowage::executor {

core::Result<PartitionHomes> PartitionHomes::allocate(Backend& backend, const std::vector<core::Partition>& partitions,
                                                      const std::vector<std::string>& names,
                                                      const core::Policy& policy) {
  PartitionHomes homes(backend, policy.delayed_update ? 2 : 1);
  for (size_t j = 0; j < partitions.size(); ++j) {
    PartitionHome h{.part = partitions[j], .policy = policy.partitions[j], .name = names[j],
                    .state_precision = policy.optimizer_state_precision};
    const int64_t n = h.params();
    for (int s = 0; s < homes.versions_; ++s) {
      const auto slot = static_cast<size_t>(s);
      const std::string what = "param16 " + h.name + (homes.versions_ > 1 ? " #" + std::to_string(s) : "");
      if (h.policy.param16 == core::Tier::kNvme) {
        h.param16_region[slot] = what;
        if (auto r = backend.reserve_region(what, 2 * n); !r) return std::unexpected(r.error());
      } else {
        auto b = backend.allocate(h.policy.param16, 2 * n, what);
        if (!b) return std::unexpected(b.error());
        h.param16[slot] = std::move(*b);
      }
    }
    const std::string states = "states " + h.name;
    if (h.policy.optimizer_states == core::Tier::kNvme) {
      h.states_region = states;
      if (auto r = backend.reserve_region(states, h.state_bytes()); !r) return std::unexpected(r.error());
    } else {
      auto b = backend.allocate(h.policy.optimizer_states, h.state_bytes(), states);
      if (!b) return std::unexpected(b.error());
      h.states = std::move(*b);
    }
    homes.homes_.push_back(std::move(h));
  }
  return homes;
}

PartitionHomes::~PartitionHomes() {
  if (backend_ == nullptr) return;
  for (PartitionHome& h : homes_) {
    for (Buffer& b : h.param16) backend_->release(b);
    backend_->release(h.states);
  }
}

core::Result<void> PartitionHomes::load(const Buffer& home, const std::string& region, std::span<std::byte> out) {
  const core::Lane lane = region.empty() ? core::Lane::kPcieD2h : core::Lane::kNvmeRead;
  if (auto r = wait_for_every_lane(*backend_, lane); !r) return r;
  if (!region.empty()) {
    auto r = backend_->block_read(lane, {.region = region, .data = out});
    if (!r) return std::unexpected(r.error());
  } else {
    Buffer host{.data = out.data(), .bytes = static_cast<int64_t>(out.size()), .tier = core::Tier::kCpu, .what = "host copy"};
    if (auto r = backend_->copy(lane, host, 0, home, 0, host.bytes); !r) return r;
  }
  return every_lane_waits_for(*backend_, lane);  // the next write of the home comes after this read
}

core::Result<void> PartitionHomes::store(const Buffer& home, const std::string& region, std::span<const std::byte> in) {
  // NVMe and copies take mutable spans; neither writes through the source.
  std::span<std::byte> bytes(const_cast<std::byte*>(in.data()), in.size());
  const core::Lane lane = region.empty() ? core::Lane::kPcieH2d : core::Lane::kNvmeWrite;
  if (auto r = wait_for_every_lane(*backend_, lane); !r) return r;
  if (!region.empty()) {
    auto r = backend_->block_write(lane, {.region = region, .data = bytes});
    if (!r) return std::unexpected(r.error());
  } else {
    Buffer host{.data = bytes.data(), .bytes = static_cast<int64_t>(bytes.size()), .tier = core::Tier::kCpu, .what = "host copy"};
    if (auto r = backend_->copy(lane, home, 0, host, 0, host.bytes); !r) return r;
  }
  return every_lane_waits_for(*backend_, lane);
}

core::Result<std::vector<std::byte>> PartitionHomes::read_param16(size_t j, size_t slot) {
  std::vector<std::byte> out(static_cast<size_t>(2 * homes_[j].params()));
  if (auto r = load(homes_[j].param16[slot], homes_[j].param16_region[slot], out); !r) return std::unexpected(r.error());
  return out;
}

core::Result<std::vector<std::byte>> PartitionHomes::read_states(size_t j) {
  std::vector<std::byte> out(static_cast<size_t>(homes_[j].state_bytes()));
  if (auto r = load(homes_[j].states, homes_[j].states_region, out); !r) return std::unexpected(r.error());
  return out;
}

core::Result<void> PartitionHomes::write_param16(size_t j, size_t slot, std::span<const std::byte> bytes) {
  return store(homes_[j].param16[slot], homes_[j].param16_region[slot], bytes);
}

core::Result<void> PartitionHomes::write_states(size_t j, std::span<const std::byte> bytes) {
  return store(homes_[j].states, homes_[j].states_region, bytes);
}

}  // namespace stowage::executor
