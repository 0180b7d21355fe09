#include "core/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <unordered_map>
#include <sstream>

#include "core/nearest_name.h"
#include "core/text_file.h"

namespace stowage::core {
namespace {

std::string describe_type(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Null: return "empty";
    default: return "'" + n.Scalar() + "'";
  }
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += separator;
    out += w;
  }
  return out;
}

// Prints a bound the way a user would write it back into the file.
std::string show(int64_t v) { return std::to_string(v); }
std::string show(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
std::string show(Bytes v) { return format_bytes(v, Prefix::kBinary); }
std::string show(BytesPerSecond v) { return format_bandwidth(v); }
std::string show(FlopsPerSecond v) { return format_flops_rate(v); }
std::string show(Seconds v) { return format_seconds(v); }

template <class T>
std::string range_text(Bounds<T> b) {
  return "between " + show(b.min) + " and " + show(b.max);
}

}  // namespace

Result<YAML::Node> load_yaml_text(const std::string& text, const std::string& file_name) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return fail({{file_name, e.mark.line + 1, e.mark.column + 1},
                 "YAML syntax error: " + e.msg,
                 "well-formed YAML"});
  }
}

Result<YAML::Node> load_yaml_file(const std::string& path) {
  // A plan or profile: a regular file of bounded size (issue 12).
  Result<std::string> text = read_input_file(path, InputKind::kProfile);
  if (!text) return std::unexpected(std::move(text.error()));
  return load_yaml_text(*text, path);
}

YamlMap::YamlMap(YAML::Node node, std::string file, Diagnostics& sink, std::string path)
    : node_(std::move(node)), file_(std::move(file)), sink_(&sink), path_(std::move(path)) {
  is_map_ = node_.IsMap();
  if (!is_map_) {
    const std::string what = path_.empty() ? std::string("the file is not a YAML mapping")
                                           : "'" + path_ + "' is " + describe_type(node_);
    sink_->push_back({location(node_.Mark()), what, "a mapping of 'key: value' lines"});
  }
}

SourceLocation YamlMap::location(const YAML::Mark& mark) const {
  if (mark.line < 0) return {file_, 0, 0};
  return {file_, mark.line + 1, mark.column + 1};
}

std::string YamlMap::qualified(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

SourceLocation YamlMap::location() const {
  return location(node_.Mark());
}

void YamlMap::record_places(std::map<std::string, SourceLocation, std::less<>>& out) const {
  if (!path_.empty()) out.emplace(path_, location());
  if (!is_map_) return;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (!it->first.IsScalar()) continue;
    const std::string key = it->first.Scalar();
    out.emplace(qualified(key), location_of(key));
  }
}

SourceLocation YamlMap::location_of(std::string_view key) const {
  if (is_map_) {
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      if (it->first.Scalar() == key) {
        // Copies: the iterator's pair is a temporary, a reference would dangle.
        const YAML::Node name = it->first;
        const YAML::Node value = it->second;
        return location(value.IsNull() ? name.Mark() : value.Mark());
      }
    }
  }
  return location(node_.Mark());
}

void YamlMap::report(std::string_view key, std::string what, std::string expected) {
  sink_->push_back({location_of(key), qualified(key) + ": " + std::move(what), std::move(expected)});
}

std::optional<YAML::Node> YamlMap::lookup(std::string_view key, Need need) {
  if (std::find(known_keys_.begin(), known_keys_.end(), key) == known_keys_.end()) {
    known_keys_.emplace_back(key);
  }
  if (!is_map_) return std::nullopt;
  const YAML::Node& map = node_;  // const: operator[] must not insert
  const YAML::Node value = map[std::string(key)];
  if (!value.IsDefined() || value.IsNull()) {
    if (need == Need::kRequired) {
      const bool present = value.IsDefined();
      sink_->push_back({location_of(key),
                        present ? qualified(key) + ": no value given"
                                : "missing field '" + qualified(key) + "'",
                        "a value for '" + std::string(key) + "'"});
    }
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> YamlMap::scalar(std::string_view key, Need need, std::string_view expected) {
  std::optional<YAML::Node> value = lookup(key, need);
  if (!value) return std::nullopt;
  if (!value->IsScalar()) {
    report(key, "wrong type: " + describe_type(*value), std::string(expected));
    return std::nullopt;
  }
  return value->Scalar();
}

std::optional<std::string> YamlMap::text(std::string_view key, Need need) {
  return scalar(key, need, "a text value");
}

std::optional<int64_t> YamlMap::integer(std::string_view key, Need need, Bounds<int64_t> bounds) {
  const std::string expected = "a whole number " + range_text(bounds);
  std::optional<std::string> s = scalar(key, need, expected);
  if (!s) return std::nullopt;
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() || end != s->data() + s->size()) {
    report(key, "wrong type: '" + *s + "' is not a whole number", expected);
    return std::nullopt;
  }
  if (v < bounds.min || v > bounds.max) {
    report(key, show(v) + " is out of range", expected);
    return std::nullopt;
  }
  return v;
}

std::optional<double> YamlMap::number(std::string_view key, Need need, Bounds<double> bounds) {
  const std::string expected = "a number " + range_text(bounds);
  std::optional<std::string> s = scalar(key, need, expected);
  if (!s) return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() || end != s->data() + s->size() || !std::isfinite(v)) {
    report(key, "wrong type: '" + *s + "' is not a number", expected);
    return std::nullopt;
  }
  if (v < bounds.min || v > bounds.max) {
    report(key, *s + " is out of range", expected);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> YamlMap::boolean(std::string_view key, Need need) {
  std::optional<std::string> s = scalar(key, need, "true or false");
  if (!s) return std::nullopt;
  if (*s == "true" || *s == "yes") return true;
  if (*s == "false" || *s == "no") return false;
  report(key, "wrong type: '" + *s + "' is not true or false", "true or false");
  return std::nullopt;
}

namespace {

// Shared body of the unit-carrying getters: parse, then check the range.
template <class T, class Parse>
std::optional<T> unit_value(YamlMap& map, std::optional<std::string> s, std::string_view key,
                            Bounds<T> bounds, Parse parse) {
  if (!s) return std::nullopt;
  auto parsed = parse(*s);
  if (!parsed) {
    map.report(key, parsed.error().what, parsed.error().expected);
    return std::nullopt;
  }
  if (*parsed < bounds.min || *parsed > bounds.max) {
    map.report(key, "'" + *s + "' is out of range", range_text(bounds));
    return std::nullopt;
  }
  return *parsed;
}

}  // namespace

std::optional<Bytes> YamlMap::bytes(std::string_view key, Need need, Bounds<Bytes> bounds) {
  return unit_value(*this, scalar(key, need, "a size such as '24 GiB'"), key, bounds, parse_bytes);
}

std::optional<BytesPerSecond> YamlMap::bandwidth(std::string_view key, Need need,
                                                 Bounds<BytesPerSecond> bounds) {
  return unit_value(*this, scalar(key, need, "a bandwidth such as '25 GB/s'"), key, bounds,
                    parse_bandwidth);
}

std::optional<FlopsPerSecond> YamlMap::flops_rate(std::string_view key, Need need,
                                                  Bounds<FlopsPerSecond> bounds) {
  return unit_value(*this, scalar(key, need, "a rate such as '312 TFLOP/s'"), key, bounds,
                    parse_flops_rate);
}

std::optional<Seconds> YamlMap::duration(std::string_view key, Need need, Bounds<Seconds> bounds) {
  return unit_value(*this, scalar(key, need, "a duration such as '1.5 s'"), key, bounds, parse_seconds);
}

std::optional<YamlMap> YamlMap::map(std::string_view key, Need need) {
  std::optional<YAML::Node> value = lookup(key, need);
  if (!value) return std::nullopt;
  YamlMap inner(*value, file_, *sink_, qualified(key));
  if (!inner.is_map()) return std::nullopt;
  return inner;
}

bool YamlMap::holds_map(std::string_view key) const {
  if (!is_map_) return false;
  const YAML::Node& map = node_;  // const: operator[] must not insert
  const YAML::Node value = map[std::string(key)];
  return value.IsDefined() && value.IsMap();
}

std::optional<std::vector<YamlMap>> YamlMap::list_of_maps(std::string_view key, Need need) {
  std::optional<YAML::Node> value = lookup(key, need);
  if (!value) return std::nullopt;
  if (!value->IsSequence()) {
    report(key, "wrong type: " + describe_type(*value), "a list of mappings, one '- {key: value, ...}' line each");
    return std::nullopt;
  }
  const YAML::Node& list = *value;  // const: operator[] must not insert
  std::vector<YamlMap> elements;
  elements.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    elements.emplace_back(list[i], file_, *sink_, qualified(key) + "[" + std::to_string(i) + "]");
  }
  return elements;
}

std::optional<std::vector<std::string>> YamlMap::texts(std::string_view key, Need need) {
  std::optional<YAML::Node> value = lookup(key, need);
  if (!value) return std::nullopt;
  const std::string expected = "a list of text values, e.g. [\"one\", \"two\"]";
  if (!value->IsSequence()) {
    report(key, "wrong type: " + describe_type(*value), expected);
    return std::nullopt;
  }
  const YAML::Node& list = *value;  // const: operator[] must not insert
  std::vector<std::string> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const YAML::Node element = list[i];
    if (!element.IsScalar()) {
      sink_->push_back({location(element.Mark()),
                        qualified(key) + "[" + std::to_string(i) + "]: wrong type: " + describe_type(element),
                        "a text value"});
      return std::nullopt;
    }
    out.push_back(element.Scalar());
  }
  return out;
}

std::optional<size_t> YamlMap::choice_index(std::string_view key, Need need,
                                            const std::vector<std::string>& words) {
  const std::string expected = "one of: " + join(words, ", ");
  std::optional<std::string> s = scalar(key, need, expected);
  if (!s) return std::nullopt;
  const auto it = std::find(words.begin(), words.end(), *s);
  if (it != words.end()) return static_cast<size_t>(it - words.begin());
  std::string hint = expected;
  if (std::optional<std::string> near = nearest_name(*s, words)) {
    hint = "did you mean '" + *near + "'? " + hint;
  }
  report(key, "unknown value '" + *s + "'", hint);
  return std::nullopt;
}

namespace {

// Whether a key may be printed back (issue 12 item 4): a file that is not a
// profile (`gpu: /etc/shadow`) has whole lines as keys, and its content must
// not reach the terminal. Field names are short words; anything else is
// reported by its line and column alone.
bool looks_like_a_field_name(const std::string& key) {
  constexpr size_t kLongestShown = 64;
  if (key.empty() || key.size() > kLongestShown) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.' || c == ' ';
  });
}

}  // namespace

void YamlMap::finish() {
  if (!is_map_) return;
  // A file of a million unknown keys took 35 s and 1.6 GB building a
  // suggestion for each (issue 12): the first kMostKeyProblems get one,
  // the rest (which the CLI counts but does not print) a bare line.
  constexpr size_t kMostKeyProblems = 50;
  size_t reported = 0;
  const auto report_key = [&](const SourceLocation& where, const std::string& what, auto expected) {
    sink_->push_back({where, what, reported++ < kMostKeyProblems ? expected() : std::string()});
  };
  // " 'key'" as a message names it, or why it is not shown.
  const auto shown_key = [&](const std::string& key) {
    return looks_like_a_field_name(key) ? " '" + qualified(key) + "'" : std::string(" (not shown: it is not a field name)");
  };
  std::unordered_map<std::string, int> first_line;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.Scalar();
    const SourceLocation where = location(it->first.Mark());
    if (auto [seen, fresh] = first_line.emplace(key, where.line); !fresh) {
      const int first = seen->second;
      report_key(where, "duplicate key" + shown_key(key),
                 [&] { return "each key once; first given on line " + std::to_string(first); });
      continue;
    }
    if (std::find(known_keys_.begin(), known_keys_.end(), key) != known_keys_.end()) continue;
    report_key(where, "unknown key" + shown_key(key), [&] {
      if (looks_like_a_field_name(key)) {
        if (std::optional<std::string> near = nearest_name(key, known_keys_)) return "did you mean '" + *near + "'?";
      }
      return "known keys: " + join(known_keys_, ", ");
    });
  }
}

bool check_format(YamlMap& map, const YAML::Node& root, std::string_view kind) {
  const std::string want = "stowage/" + std::string(kind) + "/v1";
  std::optional<std::string> format = map.text("format", Need::kRequired);
  if (!format) return map.is_map();
  if (root.IsMap() && root.begin()->first.Scalar() != "format") {
    map.report("format", "'format' must be the first key", "the file to start with 'format: " + want + "'");
  }
  if (*format == want) return true;
  const std::string prefix = "stowage/" + std::string(kind) + "/";
  if (format->starts_with(prefix)) {
    map.report("format", "unknown format version '" + *format + "'", "known versions: " + want);
  } else {
    map.report("format", "'" + *format + "' is not a " + std::string(kind) + " file",
               "format: " + want);
  }
  return false;
}

}  // namespace stowage::core
