#include "cli/text_table.h"

#include <algorithm>

namespace stowage::cli {
namespace {

// Display width of UTF-8 text: count code points, not bytes ("µs").
size_t width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace

void TextTable::print(std::ostream& out, int indent) const {
  std::vector<size_t> widths(align_.size(), 0);
  for (const auto& r : rows_) {
    for (size_t i = 0; i < r.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], width(r[i]));
  }
  for (const auto& r : rows_) {
    std::string line(static_cast<size_t>(indent), ' ');
    for (size_t i = 0; i < r.size() && i < widths.size(); ++i) {
      const std::string pad(widths[i] - width(r[i]), ' ');
      if (i > 0) line += "  ";
      line += align_[i] == Align::kRight ? pad + r[i] : r[i] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

}  // namespace stowage::cli
