// The kinds of bundled profile, their folder names and format words.
#pragma once

#include <array>
#include <string_view>

namespace stowage::core {

enum class ProfileKind { kGpu, kNvme, kHost, kMachine, kModel, kTraining };

inline constexpr std::array<ProfileKind, 6> kAllProfileKinds = {
    ProfileKind::kGpu,     ProfileKind::kNvme,  ProfileKind::kHost,
    ProfileKind::kMachine, ProfileKind::kModel, ProfileKind::kTraining};

// The word in `format: stowage/<word>/v1`: "gpu", "nvme", "host", ...
[[nodiscard]] constexpr std::string_view format_word(ProfileKind kind) {
  switch (kind) {
    case ProfileKind::kGpu: return "gpu";
    case ProfileKind::kNvme: return "nvme";
    case ProfileKind::kHost: return "host";
    case ProfileKind::kMachine: return "machine";
    case ProfileKind::kModel: return "model";
    case ProfileKind::kTraining: return "training";
  }
  return "";
}

// The folder under profiles/: "gpus", "nvme", "hosts", ...
[[nodiscard]] constexpr std::string_view folder_name(ProfileKind kind) {
  switch (kind) {
    case ProfileKind::kGpu: return "gpus";
    case ProfileKind::kNvme: return "nvme";
    case ProfileKind::kHost: return "hosts";
    case ProfileKind::kMachine: return "machines";
    case ProfileKind::kModel: return "models";
    case ProfileKind::kTraining: return "training";
  }
  return "";
}

}  // namespace stowage::core
