#include "core/json_depth.h"

namespace stowage::core {

std::optional<Diagnostic> check_json_depth(std::string_view text, const std::string& file, int max_depth) {
  int depth = 0, line = 1, column = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    }
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return Diagnostic{{file, line, column},
                          "JSON nested deeper than " + std::to_string(max_depth) + " levels",
                          "at most " + std::to_string(max_depth) + " levels of '[' and '{'"};
      }
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced text is the parser's to report
    }
  }
  return std::nullopt;
}

}  // namespace stowage::core
