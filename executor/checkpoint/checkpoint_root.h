// The layout of a checkpoint root: one directory per checkpoint, named by
// training step (step-000200), plus what a save in progress or an
// interrupted one leaves beside them (step-000200.tmp-Xa81Qz, and
// step-000200.old-Xa81Qz on filesystems without RENAME_EXCHANGE).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"

namespace stowage::executor {

// Marks a directory being written; never a complete checkpoint.
inline constexpr std::string_view kTempMarker = ".tmp-";
// Marks an old checkpoint moved aside while a new one of its name goes in.
inline constexpr std::string_view kAsideMarker = ".old-";

// "step-000200" for step 200; at least six digits, so names sort by step in
// `ls` up to step 999999. step >= 0.
[[nodiscard]] std::string checkpoint_name(int64_t step);
// The step a checkpoint_name() encodes; nullopt for any other name.
[[nodiscard]] std::optional<int64_t> checkpoint_step(std::string_view name);

struct CheckpointEntry {
  int64_t step = 0;
  std::filesystem::path dir;
};

// Complete checkpoints under root (a step-named directory holding a
// manifest), oldest step first. A missing root has none. Checksums are not
// read here: load_checkpoint verifies, and a caller can fall back to an older
// entry when the newest fails to load.
[[nodiscard]] core::Result<std::vector<CheckpointEntry>> list_checkpoints(const std::filesystem::path& root);

// The newest entry of list_checkpoints(root), nullopt when there is none.
[[nodiscard]] core::Result<std::optional<std::filesystem::path>> find_latest(
    const std::filesystem::path& root);

// Cleans what interrupted saves left under root: removes *.tmp-*, and puts
// back a *.old-* checkpoint whose replacement never arrived (else removes
// it). Best effort: what cannot be removed stays and is ignored by
// list_checkpoints. Call only while no save runs on root.
void remove_leftovers(const std::filesystem::path& root);

}  // namespace stowage::executor
