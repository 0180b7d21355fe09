// A plain-text table with columns padded to their widest cell, for the
// human-readable output of subcommands.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace stowage::cli {

enum class Align { kLeft, kRight };

class TextTable {
 public:
  explicit TextTable(std::vector<Align> columns) : align_(std::move(columns)) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  // Writes every row, `indent` spaces in, two spaces between columns.
  void print(std::ostream& out, int indent = 0) const;

 private:
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace stowage::cli
