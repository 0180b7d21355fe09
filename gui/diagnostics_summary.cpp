#include "gui/diagnostics_summary.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <vector>

namespace stowage::gui {
namespace {

struct Kind {
  std::string text;        // "unknown tier 'cpuu' (did you mean 'cpu')"
  std::vector<int> lines;  // where it occurs, in order; 0 when unknown
  size_t first = 0;        // index of its first occurrence, to keep file order among equals
};

std::string kind_text(const core::Diagnostic& d) {
  return d.expected.empty() ? d.what : d.what + " (" + d.expected + ")";
}

std::string where_text(const Kind& k, size_t shown) {
  std::vector<int> lines;
  for (const int line : k.lines) {
    if (line > 0 && (lines.empty() || lines.back() != line)) lines.push_back(line);
  }
  if (lines.empty()) return k.lines.size() > 1 ? " (" + std::to_string(k.lines.size()) + " times)" : "";
  std::string text = lines.size() == 1 ? " at line " : " at lines ";
  for (size_t i = 0; i < std::min(shown, lines.size()); ++i)
    text += (i ? ", " : "") + std::to_string(lines[i]);
  if (lines.size() > shown) text += " and " + std::to_string(lines.size() - shown) + " more";
  return text;
}

std::string files_text(const core::Diagnostics& ds) {
  std::set<std::string> files;
  for (const core::Diagnostic& d : ds) {
    if (!d.where.file.empty()) files.insert(std::filesystem::path(d.where.file).filename().string());
  }
  if (files.size() != 1) return "";
  return " in " + *files.begin();
}

}  // namespace

std::string summarize(const core::Diagnostics& ds, const SummaryLimits& limits) {
  if (ds.size() <= limits.list_all_up_to) return core::to_string(ds);
  std::map<std::string, Kind> by_text;
  for (size_t i = 0; i < ds.size(); ++i) {
    auto [it, fresh] = by_text.try_emplace(kind_text(ds[i]), Kind{.text = kind_text(ds[i]), .first = i});
    it->second.lines.push_back(ds[i].where.line);
  }
  std::vector<Kind> kinds;
  for (auto& [text, kind] : by_text) kinds.push_back(std::move(kind));
  std::ranges::sort(kinds, [](const Kind& a, const Kind& b) {
    return a.lines.size() != b.lines.size() ? a.lines.size() > b.lines.size() : a.first < b.first;
  });
  std::string out = std::to_string(ds.size()) + " problems" + files_text(ds) + ":";
  for (size_t i = 0; i < std::min(limits.kinds, kinds.size()); ++i)
    out += "\n- " + kinds[i].text + where_text(kinds[i], limits.lines_per_kind);
  if (kinds.size() > limits.kinds)
    out += "\n- and " + std::to_string(kinds.size() - limits.kinds) + " other kinds of problem";
  return out;
}

}  // namespace stowage::gui
