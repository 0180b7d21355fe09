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

// Every kind of file Stowage reads has its own size limit, checked before a
// byte is read (README, "Inputs are read only...").
// Each limit is overridable by an environment variable holding a size
// ("STOWAGE_MAX_TRACE_BYTES=16GiB"), for the rare input that is bigger on
// purpose.
enum class InputKind {
  kProfile,   // machine, model, training profiles and plans (YAML)
  kTrace,     // Chrome traces, measured or predicted (JSON)
  kManifest,  // checkpoint manifests (JSON)
  kCorpus,    // `stowage run --data`
  kWeights,   // safetensors (`--init-from`)
};

struct InputLimit {
  std::string_view what;      // "a profile or plan", for messages
  std::string_view variable;  // "STOWAGE_MAX_PROFILE_BYTES"
  Bytes default_max;
};

// The fixed part: what each kind is called, its variable and its default.
[[nodiscard]] const InputLimit& input_limit_of(InputKind kind);

// The limit in force: the variable's size when it is set, else the
// default. A variable that is not a size is a diagnostic naming it.
[[nodiscard]] Result<Bytes> input_limit(InputKind kind);

// read_text_file with the limit of `kind`; a file over it is refused saying
// which variable raises the limit.
[[nodiscard]] Result<std::string> read_input_file(const std::filesystem::path& path, InputKind kind);

// The whole of `path`, or one diagnostic naming it: cannot be opened, is
// not a regular file (says what it is), is over `max_bytes` (gives both
// sizes), or a read failed.
[[nodiscard]] Result<std::string> read_text_file(const std::filesystem::path& path,
                                                 Bytes max_bytes = kMaxTextFileBytes);

}  // namespace stowage::core
