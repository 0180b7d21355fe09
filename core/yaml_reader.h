// Reads YAML mappings field by field, collecting every problem as a
// Diagnostic with file, line and column instead of stopping at the first.
// A YamlMap remembers which keys were asked for, so finish() can report
// each unknown key with the nearest valid one suggested.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/diagnostic.h"
#include "core/units.h"

namespace stowage::core {

enum class Need { kRequired, kOptional };

// Parses a whole YAML document. A syntax error or an unreadable file becomes
// a diagnostic naming the file (and the line, for syntax errors).
Result<YAML::Node> load_yaml_file(const std::string& path);
Result<YAML::Node> load_yaml_text(const std::string& text, const std::string& file_name);

// An inclusive range a value must fall in, with the reason shown when not.
template <class T>
struct Bounds {
  T min;
  T max;
};

// Copies a value a getter read into a spec field, when there is one.
template <class T, class U>
void assign(T& field, const std::optional<U>& value) {
  if (value) field = static_cast<T>(*value);
}

class YamlMap {
 public:
  // `node` must outlive the YamlMap. `path` names the map inside the file
  // ("" at the top, "adam" for a nested map) for messages.
  YamlMap(YAML::Node node, std::string file, Diagnostics& sink, std::string path = "");

  // False (and a diagnostic) when the node is not a mapping.
  [[nodiscard]] bool is_map() const { return is_map_; }

  // Each getter returns nullopt when the key is absent (a diagnostic if it
  // was required) or its value is wrong (always a diagnostic).
  std::optional<std::string> text(std::string_view key, Need need);
  std::optional<int64_t> integer(std::string_view key, Need need, Bounds<int64_t> bounds);
  std::optional<double> number(std::string_view key, Need need, Bounds<double> bounds);
  std::optional<bool> boolean(std::string_view key, Need need);
  std::optional<Bytes> bytes(std::string_view key, Need need, Bounds<Bytes> bounds);
  std::optional<BytesPerSecond> bandwidth(std::string_view key, Need need, Bounds<BytesPerSecond> bounds);
  std::optional<FlopsPerSecond> flops_rate(std::string_view key, Need need, Bounds<FlopsPerSecond> bounds);
  std::optional<Seconds> duration(std::string_view key, Need need, Bounds<Seconds> bounds);
  std::optional<YamlMap> map(std::string_view key, Need need);
  // Whether `key` is present and its value a mapping (a machine's part
  // given inline rather than by name). Asks nothing: no diagnostic.
  [[nodiscard]] bool holds_map(std::string_view key) const;
  // A list whose elements are mappings: one YamlMap per element, in order,
  // named `key[i]` in messages ("policy.partitions[3].param16"). nullopt
  // (and a diagnostic) when the value is not a list. An element that is not
  // a mapping is reported and still returned, with is_map() false, so the
  // indices of the others stay right; its getters return nullopt silently.
  std::optional<std::vector<YamlMap>> list_of_maps(std::string_view key, Need need);
  // A list of text values ("[a, b]" or one "- a" line each); nullopt (and a
  // diagnostic naming the element) when the value is not a list or an
  // element is not a text value.
  std::optional<std::vector<std::string>> texts(std::string_view key, Need need);

  // One of a fixed set of words, e.g. {"bf16", kBf16}, {"fp16", kFp16}.
  template <class E>
  std::optional<E> choice(std::string_view key, Need need,
                          std::span<const std::pair<std::string_view, E>> options) {
    std::vector<std::string> words;
    for (const auto& [word, value] : options) words.emplace_back(word);
    const std::optional<size_t> index = choice_index(key, need, words);
    if (!index) return std::nullopt;
    return options[*index].second;
  }

  // Reports keys present in the map that no getter asked for, and keys given
  // twice. Call once, after all getters.
  void finish();

  // Adds a diagnostic at `key`'s value (or at the map when absent).
  void report(std::string_view key, std::string what, std::string expected);
  [[nodiscard]] SourceLocation location_of(std::string_view key) const;
  // Where the map itself starts (a list element's first key).
  [[nodiscard]] SourceLocation location() const;
  // The qualified name of each key present ("policy.partitions[3].optimizer")
  // with the place of its value, and of the map itself under its own path.
  void record_places(std::map<std::string, SourceLocation, std::less<>>& out) const;
  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  std::optional<YAML::Node> lookup(std::string_view key, Need need);
  std::optional<std::string> scalar(std::string_view key, Need need, std::string_view expected);
  std::optional<size_t> choice_index(std::string_view key, Need need, const std::vector<std::string>& words);
  [[nodiscard]] std::string qualified(std::string_view key) const;
  [[nodiscard]] SourceLocation location(const YAML::Mark& mark) const;

  YAML::Node node_;
  std::string file_;
  Diagnostics* sink_;
  std::string path_;
  bool is_map_ = false;
  std::vector<std::string> known_keys_;
};

// Checks the `format: stowage/<kind>/v1` line: present, first, a known kind
// and version. Returns false (with a diagnostic) when the file cannot be read
// as that kind at all.
bool check_format(YamlMap& map, const YAML::Node& root, std::string_view kind);

}  // namespace stowage::core
