// Saves one checkpoint durably and atomically: every blob goes into a
// temporary directory beside the target, each file is fsync'ed, then the
// directory is renamed into place, so at every instant the target name holds
// one complete checkpoint (the old or the new), never a half-written one.
#pragma once

#include <filesystem>
#include <span>
#include <string_view>

#include "executor/checkpoint/blob_source.h"
#include "executor/checkpoint/output_file.h"

namespace stowage::executor {

struct SaveOptions {
  // Test seam (output_file.h): fail a chosen write with a negative errno to
  // simulate a full disk or a failing drive. Empty in production.
  WriteFaultHook inject_write_fault;
};

// Writes `blobs` and `metadata_json` (a JSON object, as text: {"step": 200})
// as the checkpoint `root/name` and returns that path. Creates root if
// needed, first removing what an interrupted save left there (*.tmp-*). An
// existing checkpoint of the same name is replaced atomically.
//
// Blocks until the data is on disk (fsync of files and directories). One
// saver per root at a time. name is a plain file name such as
// checkpoint_name(200) == "step-000200".
//
// Throws CheckpointWriteError when the disk refuses (the file, blob and
// errno are in it): the temporary directory is then removed and any earlier
// checkpoint is untouched. Throws std::invalid_argument for a bad name,
// duplicate blob names or metadata that is not a JSON object, before
// writing anything.
std::filesystem::path save_checkpoint(const std::filesystem::path& root, std::string_view name,
                                      std::string_view metadata_json, std::span<const BlobSource> blobs,
                                      const SaveOptions& options = {});

}  // namespace stowage::executor
