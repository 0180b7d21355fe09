#include "core/placement.h"

#include <charconv>

namespace stowage::core {

Placement standard_placement(StandardPlacement which, int gpu_count) {
  switch (which) {
    case StandardPlacement::kAllGpu:
      return {.name = "all-gpu",
              .description = "everything on the GPU",
              .stage = gpu_count > 1 ? ZeroStage::k3 : ZeroStage::k0,
              .param16 = Tier::kGpu,
              .optimizer_states = Tier::kGpu};
    case StandardPlacement::kZeroOffload:
      return {.name = "zero-offload",
              .description = "ZeRO-2, fp32 master and Adam moments on CPU",
              .stage = ZeroStage::k2,
              .param16 = Tier::kGpu,
              .optimizer_states = Tier::kCpu};
    case StandardPlacement::kZeroInfinity:
      return {.name = "zero-infinity",
              .description = "ZeRO-3, optimizer states on NVMe, fp16 params on CPU",
              .stage = ZeroStage::k3,
              .param16 = Tier::kCpu,
              .optimizer_states = Tier::kNvme};
  }
  return {};
}

std::vector<Placement> standard_placements(int gpu_count) {
  return {standard_placement(StandardPlacement::kAllGpu, gpu_count),
          standard_placement(StandardPlacement::kZeroOffload, gpu_count),
          standard_placement(StandardPlacement::kZeroInfinity, gpu_count)};
}

namespace {

std::string tier_word(Tier t) { return std::string(to_string(t)); }

Placement deepspeed_placement(ZeroStage stage, Tier optimizer, Tier params) {
  const int s = static_cast<int>(stage);
  Placement p{.name = "zero-" + std::to_string(s), .description = "DeepSpeed ZeRO-" + std::to_string(s),
              .stage = stage, .param16 = params, .optimizer_states = optimizer};
  if (optimizer != Tier::kGpu) {
    p.name += "-optimizer-" + tier_word(optimizer);
    p.description += ", optimizer states offloaded to " + tier_word(optimizer);
  }
  if (params != Tier::kGpu) {
    p.name += "-params-" + tier_word(params);
    p.description += ", parameters offloaded to " + tier_word(params);
  }
  if (optimizer == Tier::kGpu && params == Tier::kGpu) p.description += ", nothing offloaded";
  return p;
}

constexpr std::string_view kRatio = "-ratio-";

}  // namespace

std::vector<Placement> deepspeed_placements() {
  std::vector<Placement> out = {deepspeed_placement(ZeroStage::k0, Tier::kGpu, Tier::kGpu)};
  for (ZeroStage stage : {ZeroStage::k1, ZeroStage::k2}) {
    for (Tier optimizer : {Tier::kGpu, Tier::kCpu}) out.push_back(deepspeed_placement(stage, optimizer, Tier::kGpu));
  }
  for (Tier optimizer : kAllTiers) {
    for (Tier params : kAllTiers) out.push_back(deepspeed_placement(ZeroStage::k3, optimizer, params));
  }
  return out;
}

std::optional<Placement> placement_named(std::string_view name, int gpu_count) {
  for (const Placement& p : standard_placements(gpu_count)) {
    if (p.name == name) return p;
  }
  std::optional<double> ratio;
  std::string_view base = name, ratio_text;
  if (const size_t at = name.find(kRatio); at != std::string_view::npos) {
    const std::string_view digits = name.substr(at + kRatio.size());
    double r = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), r);
    if (ec != std::errc() || end != digits.data() + digits.size() || !(r > 0 && r < 1)) return std::nullopt;
    ratio = r;
    ratio_text = digits;
    base = name.substr(0, at);
  }
  for (Placement p : deepspeed_placements()) {
    if (p.name != base) continue;
    if (!ratio) return p;
    // A partial offload exists only for stage 3 offloading to the CPU.
    if (p.stage != ZeroStage::k3 || p.optimizer_states != Tier::kCpu) return std::nullopt;
    p.name = std::string(name);
    p.offload_ratio = *ratio;
    p.description += " at ratio " + std::string(ratio_text) + " (the rest stay on the GPU)";
    return p;
  }
  return std::nullopt;
}

}  // namespace stowage::core
