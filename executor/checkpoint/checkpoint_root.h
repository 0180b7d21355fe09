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

// Marks a directory being written; never a complete checkpoint. What
// follows the marker is mkdtemp's six letters or digits.
inline constexpr std::string_view kTempMarker = ".tmp-";
// Marks an old checkpoint moved aside while a new one of its name goes in.
inline constexpr std::string_view kAsideMarker = ".old-";
// The one data file of a checkpoint, beside its manifest.
inline constexpr std::string_view kDataFileName = "blobs.bin";

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

// Entries under root named as a checkpoint of a step in [1, last_step]
// that are not complete checkpoints (a user's step-000001/ with no
// manifest, or a file of that name): a save of that step could not go
// there without destroying them, so a run refuses to start (issue 12)
// rather than fail at its first checkpoint. Sorted by name.
[[nodiscard]] std::vector<std::filesystem::path> foreign_step_entries(const std::filesystem::path& root,
                                                                      int64_t last_step);

// The newest entry of list_checkpoints(root), nullopt when there is none.
[[nodiscard]] core::Result<std::optional<std::filesystem::path>> find_latest(
    const std::filesystem::path& root);

// What `--resume latest` resumes from: the newest entry, once its manifest
// and every blob's checksum verify (so this reads it whole). When the
// newest is damaged, the error says what is wrong with it and names the
// newest older checkpoint that verifies, or that there is none; nothing is
// picked silently, since resuming from the older one loses steps.
[[nodiscard]] core::Result<std::optional<std::filesystem::path>> find_latest_intact(
    const std::filesystem::path& root);

// Whether `dir` is a complete checkpoint: a directory (not a symlink to
// one) holding a manifest.
[[nodiscard]] bool is_checkpoint_dir(const std::filesystem::path& dir);

// Removes a directory a save wrote (a checkpoint, or a save's temporary
// directory): its manifest and data file, then the directory if that
// leaves it empty. Anything else inside (a file the user put there) keeps
// the directory where it is. True when the directory is gone.
bool remove_checkpoint_dir(const std::filesystem::path& dir);

// Cleans what interrupted saves left under root, and only that (issue 12:
// a user's notes.tmp-keep, photos.tmp-2023/ or report.old-final is not
// Stowage's): an entry counts as a leftover only when named
// NAME.tmp-XXXXXX or NAME.old-XXXXXX (six letters or digits, as mkdtemp
// makes them) and it is a directory holding nothing but a checkpoint's
// files. It removes *.tmp-*, and puts back a *.old-* checkpoint whose
// replacement never arrived (else removes it). Best effort: what cannot be
// removed stays and is ignored by list_checkpoints. Call only while no save
// runs on root.
void remove_leftovers(const std::filesystem::path& root);

}  // namespace stowage::executor
