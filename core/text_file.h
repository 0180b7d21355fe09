// Reading a whole input file with the checks issue 12 asks for, before a
// byte is read: only a regular file (a FIFO would block forever, /dev/zero
// never ends, a directory is no text), and no larger than a limit chosen
// per kind of input (README, "Inputs are read only..."), so a wrong path costs an error
// message instead of all of memory.
#pragma once

#include <filesystem>
#include <string>

#include "core/diagnostic.h"
#include "core/units.h"

namespace stowage::core {

// Profiles and plans are a few KiB; 16 MiB leaves room for generated ones.
inline constexpr Bytes kMaxProfileBytes{int64_t{16} << 20};
// Traces of long runs reach hundreds of MB; the default for other callers.
inline constexpr Bytes kMaxTextFileBytes{int64_t{4} << 30};

// The whole of `path`, or one diagnostic naming it: cannot be opened, is
// not a regular file (says what it is), is over `max_bytes` (gives both
// sizes), or a read failed.
[[nodiscard]] Result<std::string> read_text_file(const std::filesystem::path& path,
                                                 Bytes max_bytes = kMaxTextFileBytes);

}  // namespace stowage::core
