// Writes an output file so that a failure (full disk, missing folder) never
// leaves a half-written file where a good one was, and nothing Stowage did
// not create is destroyed (issue 12): the text goes to a temporary file in
// the target's folder, which is renamed over the target only once complete,
// and only when the target is a regular file or absent. A symlink is
// followed and its final target replaced (the link stays); device nodes,
// FIFOs, sockets and directories are refused. An existing file keeps its
// permission bits; a new one gets 0666 less the umask.
#pragma once

#include <filesystem>
#include <span>
#include <string>

#include "core/diagnostic.h"

namespace stowage::core {

// Where an output to `path` goes: the path with every symlink followed (at
// most 40, as the kernel allows), or diagnostics when the path cannot be
// written: its final target is not a regular file, its folder is missing,
// not a folder or not writable. Checks only; creates nothing. Run it on
// every output before long work (training), so a bad path costs nothing.
[[nodiscard]] Result<std::filesystem::path> check_output_path(const std::filesystem::path& path);

// Empty diagnostics on success; otherwise one naming the file and the
// reason, with whatever was at `path` left as it was.
Diagnostics write_file_atomically(const std::filesystem::path& path, const std::string& content);

// The same for content given in pieces, written one after another: a large
// binary output (safetensors weights, many GiB) goes out by the same rules
// without being copied into one string first. The pieces must stay alive
// for the call.
Diagnostics write_file_atomically(const std::filesystem::path& path,
                                  std::span<const std::span<const char>> pieces);

}  // namespace stowage::core
