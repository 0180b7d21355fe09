#include "core/diagnostic.h"

namespace stowage::core {

std::string Diagnostic::to_string() const {
  // A problem not in any file (an unknown profile name on the command line)
  // has no location to show.
  std::string out = where.file;
  if (!out.empty() && where.line > 0) {
    out += ":" + std::to_string(where.line);
    if (where.column > 0) out += ":" + std::to_string(where.column);
  }
  if (!out.empty()) out += ": ";
  out += what;
  if (!expected.empty()) out += " (" + expected + ")";
  return out;
}

std::string to_string(const Diagnostics& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}

}  // namespace stowage::core
