// Diagnostics for bad input: every loader reports problems as
// `file:line:column: what is wrong (expected ...)`, all of them at once.
// Result<T> carries either the value or the full list (STYLE.md §7).
#pragma once

#include <expected>
#include <string>
#include <vector>

namespace stowage::core {

// A place in an input file. line and column are 1-based; 0 means unknown
// (a file that could not be opened has no line).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

struct Diagnostic {
  SourceLocation where;
  std::string what;      // "unknown key 'memroy'"
  std::string expected;  // "did you mean 'memory'?"; may be empty

  // "file:line:column: what (expected)"; omits parts that are unknown, and
  // the location entirely for a problem outside any file.
  [[nodiscard]] std::string to_string() const;
};

using Diagnostics = std::vector<Diagnostic>;

template <class T>
using Result = std::expected<T, Diagnostics>;

// One problem, ready to return from a function producing Result<T>.
[[nodiscard]] inline std::unexpected<Diagnostics> fail(Diagnostic d) {
  return std::unexpected(Diagnostics{std::move(d)});
}

// All diagnostics joined by newlines, for printing.
[[nodiscard]] std::string to_string(const Diagnostics& diagnostics);

}  // namespace stowage::core
