// Exit codes of the stowage command (README, docs/cli.md). A negative answer
// ("nothing fits") is a result, not an error: it exits 0.
#pragma once

namespace stowage::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;       // bad command line
inline constexpr int kExitBadInput = 65;   // a profile or plan is wrong (sysexits EX_DATAERR)
inline constexpr int kExitInternal = 70;   // a bug in stowage (sysexits EX_SOFTWARE)
inline constexpr int kExitIoError = 74;     // a run failed: I/O error, memory exhausted (sysexits EX_IOERR)
inline constexpr int kExitCannotWrite = 73;  // an output file cannot be written (sysexits EX_CANTCREAT)

}  // namespace stowage::cli
