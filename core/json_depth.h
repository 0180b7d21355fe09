// A cap on JSON nesting, checked on the text before parsing (issue 12): a
// file nested 100,000 deep overflowed the stack in the recursive parts of
// nlohmann::json (destruction, dump, the readers' walks). Stowage's own
// files nest a few levels; a cap of 64 stops nothing real.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/diagnostic.h"

namespace stowage::core {

inline constexpr int kMaxJsonDepth = 64;

// A diagnostic at the line and column of the first '[' or '{' that opens
// level max_depth + 1 of `text`, nullopt when none does. Brackets inside
// strings do not count. Linear in the text, constant memory: safe before
// any parse.
[[nodiscard]] std::optional<Diagnostic> check_json_depth(std::string_view text, const std::string& file,
                                                         int max_depth = kMaxJsonDepth);

}  // namespace stowage::core
