// What a path that is not a regular file is, in words, for the messages
// that refuse it (reading an input, writing an output).
#pragma once

#include <sys/types.h>

namespace stowage::core {

// "a directory", "a FIFO", "a character device", "a block device",
// "a socket", or "not a regular file" for anything else (a stat() mode).
[[nodiscard]] const char* file_kind_name(mode_t mode);

}  // namespace stowage::core
