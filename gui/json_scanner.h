// A small JSON scanner for one trace event on one line: it validates the
// grammar as strictly as nlohmann::json does (RFC 8259 numbers, escapes,
// UTF-8) and hands back values as views into the line, without building a
// tree. Strings with escapes or non-ASCII bytes are checked (and later
// decoded) by nlohmann; they are rare in traces. Used by the fast trace
// reader (trace_line_reader.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stowage::gui {

enum class JsonType : uint8_t { kAbsent, kString, kNumber, kLiteral, kObject, kArray };

struct JsonValue {
  JsonType type = JsonType::kAbsent;
  // kString: the bytes between the quotes; kNumber: the token; others: the
  // whole text of the value.
  std::string_view text;
  bool plain = true;     // kString: ASCII without escapes, so `text` is the value
  bool integer = false;  // kNumber: no fraction and no exponent
};

class JsonScanner {
 public:
  explicit JsonScanner(std::string_view text) : s_(text) {}

  // Scans one value of any type into `out`; false on a grammar error.
  bool value(JsonValue& out, int depth = 0);
  bool string(JsonValue& out);
  // Consumes `c` after optional whitespace.
  bool eat(char c) {
    skip_space();
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  // Only whitespace is left.
  bool at_end() {
    skip_space();
    return i_ == s_.size();
  }
  [[nodiscard]] bool next_is(char c) {
    skip_space();
    return i_ < s_.size() && s_[i_] == c;
  }

  // Scans an object, calling field(key, *this, depth) for each key; the
  // callback must scan the value. False on a grammar error or when a
  // callback returns false.
  template <class Field>
  bool object(int depth, Field&& field) {
    if (depth > kMaxDepth || !eat('{')) return false;
    if (eat('}')) return true;
    do {
      JsonValue key;
      if (!string(key) || !eat(':') || !field(key, *this, depth + 1)) return false;
    } while (eat(','));
    return eat('}');
  }
  // Scans an array, calling element(value) for each element.
  template <class Element>
  bool array(int depth, Element&& element) {
    if (depth > kMaxDepth || !eat('[')) return false;
    if (eat(']')) return true;
    do {
      JsonValue v;
      if (!value(v, depth + 1)) return false;
      element(v);
    } while (eat(','));
    return eat(']');
  }

  static constexpr int kMaxDepth = 64;

 private:
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r' || s_[i_] == '\n')) ++i_;
  }
  bool number(JsonValue& out);
  bool literal(std::string_view word);

  std::string_view s_;
  size_t i_ = 0;
};

// The value of a string as JSON defines it (escapes decoded); nullopt when
// `v` is no string.
[[nodiscard]] std::optional<std::string> json_string_value(const JsonValue& v);

// A number as nlohmann::json's get<int64_t>() gives it; nullopt when it is
// no number or one this reader does not convert exactly as nlohmann would
// (an integer beyond int64, a fraction beyond int64's range).
[[nodiscard]] std::optional<int64_t> json_int64(const JsonValue& v);
// As get<double>(); nullopt when it is no number.
[[nodiscard]] std::optional<double> json_double(const JsonValue& v);

}  // namespace stowage::gui
