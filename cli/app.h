// The whole `stowage` command as a function, so tests can run it with
// captured output streams.
#pragma once

#include <iosfwd>

namespace stowage::cli {

// Parses argv, runs the chosen subcommand and returns the exit code
// (cli/exit_codes.h). Help and errors go to `out` and `err` respectively.
int run_stowage(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace stowage::cli
