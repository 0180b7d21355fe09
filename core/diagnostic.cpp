#include "core/diagnostic.h"

namespace stowage::core {

std::string Diagnostic::to_string() const {
  std::string out = where.file.empty() ? std::string("<input>") : where.file;
  if (where.line > 0) {
    out += ":" + std::to_string(where.line);
    if (where.column > 0) out += ":" + std::to_string(where.column);
  }
  out += ": " + what;
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
