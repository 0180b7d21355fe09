#include "gui/json_scanner.h"

#include <array>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace stowage::gui {
namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// A string with escapes or non-ASCII bytes, quotes included: nlohmann
// validates the escapes and the UTF-8 exactly as the exact reader would.
std::optional<std::string> decode(std::string_view quoted) {
  try {
    const nlohmann::json v = nlohmann::json::parse(quoted.begin(), quoted.end());
    if (v.is_string()) return v.get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

// What a byte means inside a string: most are plain and end no scan.
enum class InString : uint8_t { kPlain, kQuote, kEscape, kControl, kHigh };

constexpr std::array<InString, 256> kInString = [] {
  std::array<InString, 256> t{};
  for (size_t c = 0; c < 0x20; ++c) t[c] = InString::kControl;
  for (size_t c = 0x80; c < 256; ++c) t[c] = InString::kHigh;
  t['"'] = InString::kQuote;
  t['\\'] = InString::kEscape;
  return t;
}();

}  // namespace

bool JsonScanner::value(JsonValue& out, int depth) {
  skip_space();
  if (i_ >= s_.size()) return false;
  const size_t begin = i_;
  const auto skip_field = [](const JsonValue&, JsonScanner& sc, int d) {
    JsonValue ignored;
    return sc.value(ignored, d);
  };
  switch (s_[i_]) {
    case '"':
      return string(out);
    case '{':
      if (!object(depth, skip_field)) return false;
      out = {.type = JsonType::kObject, .text = s_.substr(begin, i_ - begin)};
      return true;
    case '[':
      if (!array(depth, [](const JsonValue&) {})) return false;
      out = {.type = JsonType::kArray, .text = s_.substr(begin, i_ - begin)};
      return true;
    case 't':
      return literal("true") && (out = {.type = JsonType::kLiteral, .text = "true"}, true);
    case 'f':
      return literal("false") && (out = {.type = JsonType::kLiteral, .text = "false"}, true);
    case 'n':
      return literal("null") && (out = {.type = JsonType::kLiteral, .text = "null"}, true);
    default:
      return number(out);
  }
}

bool JsonScanner::literal(std::string_view word) {
  if (s_.substr(i_, word.size()) != word) return false;
  i_ += word.size();
  return true;
}

bool JsonScanner::string(JsonValue& out) {
  skip_space();
  if (i_ >= s_.size() || s_[i_] != '"') return false;
  const size_t open = i_++;
  bool plain = true;
  const auto* bytes = reinterpret_cast<const unsigned char*>(s_.data());
  while (i_ < s_.size()) {
    const InString what = kInString[bytes[i_]];
    if (what == InString::kPlain) {
      ++i_;
      continue;
    }
    if (what == InString::kQuote) break;
    if (what == InString::kControl) return false;  // control characters must be escaped
    plain = false;
    if (what == InString::kEscape && ++i_ >= s_.size()) return false;
    ++i_;
  }
  if (i_ >= s_.size()) return false;
  ++i_;  // the closing quote
  const std::string_view quoted = s_.substr(open, i_ - open);
  if (!plain && !decode(quoted)) return false;
  out = {.type = JsonType::kString, .text = quoted.substr(1, quoted.size() - 2), .plain = plain};
  return true;
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, as RFC 8259 section 6.
bool JsonScanner::number(JsonValue& out) {
  const size_t begin = i_;
  const auto more = [&] { return i_ < s_.size(); };
  if (more() && s_[i_] == '-') ++i_;
  if (!more() || !digit(s_[i_])) return false;
  if (s_[i_] == '0') {
    ++i_;
  } else {
    while (more() && digit(s_[i_])) ++i_;
  }
  bool integer = true;
  if (more() && s_[i_] == '.') {
    integer = false;
    if (++i_ >= s_.size() || !digit(s_[i_])) return false;
    while (more() && digit(s_[i_])) ++i_;
  }
  if (more() && (s_[i_] == 'e' || s_[i_] == 'E')) {
    integer = false;
    ++i_;
    if (more() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
    if (!more() || !digit(s_[i_])) return false;
    while (more() && digit(s_[i_])) ++i_;
  }
  out = {.type = JsonType::kNumber, .text = s_.substr(begin, i_ - begin), .integer = integer};
  return true;
}

std::optional<std::string> json_string_value(const JsonValue& v) {
  if (v.type != JsonType::kString) return std::nullopt;
  if (v.plain) return std::string(v.text);
  // The view sits between its quotes in the line.
  return decode(std::string_view(v.text.data() - 1, v.text.size() + 2));
}

std::optional<int64_t> json_int64(const JsonValue& v) {
  if (v.type != JsonType::kNumber) return std::nullopt;
  if (v.integer) {
    int64_t out = 0;
    const auto [end, error] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), out);
    if (error != std::errc() || end != v.text.data() + v.text.size()) return std::nullopt;
    return out;
  }
  const std::optional<double> d = json_double(v);
  if (!d || !(std::fabs(*d) < 9.2e18)) return std::nullopt;
  return static_cast<int64_t>(*d);
}

std::optional<double> json_double(const JsonValue& v) {
  if (v.type != JsonType::kNumber) return std::nullopt;
  double out = 0;
  const auto [end, error] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), out);
  // Out of range: nlohmann gives inf or 0 from strtod; leave such files to it.
  if (error != std::errc() || end != v.text.data() + v.text.size()) return std::nullopt;
  return out;
}

}  // namespace stowage::gui
