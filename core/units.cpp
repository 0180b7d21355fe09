// Parsing and printing for the unit types of units.h. A parsed number stays
// decimal digits and a power of ten until its unit is applied, so binary
// prefixes and minutes multiply exactly, a byte count is rounded once to an
// integer and a double is rounded once, by from_chars.
#include "core/units.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace stowage::core {
namespace {

// ------------------------------------------------------------------ units

// One accepted spelling of a unit: it is multiplier × 10^decimal_exponent
// base units. Decimal prefixes are exponents and binary ones multipliers, so
// both can be applied to the written digits without rounding.
struct UnitSpelling {
  std::string_view name;
  int decimal_exponent = 0;
  uint64_t multiplier = 1;
};

constexpr uint64_t kKi = uint64_t{1} << 10;
constexpr uint64_t kMi = uint64_t{1} << 20;
constexpr uint64_t kGi = uint64_t{1} << 30;
constexpr uint64_t kTi = uint64_t{1} << 40;
constexpr uint64_t kPi = uint64_t{1} << 50;
constexpr uint64_t kEi = uint64_t{1} << 60;

// What a number without a unit means: base units.
constexpr UnitSpelling kPlainNumber{"", 0, 1};

constexpr auto kByteUnits = std::to_array<UnitSpelling>({
    {"B", 0, 1}, {"kB", 3, 1}, {"KB", 3, 1}, {"MB", 6, 1}, {"GB", 9, 1}, {"TB", 12, 1},
    {"PB", 15, 1}, {"EB", 18, 1}, {"KiB", 0, kKi}, {"MiB", 0, kMi}, {"GiB", 0, kGi},
    {"TiB", 0, kTi}, {"PiB", 0, kPi}, {"EiB", 0, kEi},
});

constexpr auto kBandwidthUnits = std::to_array<UnitSpelling>({
    {"B/s", 0, 1}, {"kB/s", 3, 1}, {"KB/s", 3, 1}, {"MB/s", 6, 1}, {"GB/s", 9, 1},
    {"TB/s", 12, 1}, {"PB/s", 15, 1}, {"EB/s", 18, 1}, {"KiB/s", 0, kKi}, {"MiB/s", 0, kMi},
    {"GiB/s", 0, kGi}, {"TiB/s", 0, kTi}, {"PiB/s", 0, kPi}, {"EiB/s", 0, kEi},
});

// µ is accepted both as MICRO SIGN (U+00B5, what keyboards type) and GREEK
// SMALL LETTER MU (U+03BC, what Unicode normalisation turns it into).
constexpr auto kSecondUnits = std::to_array<UnitSpelling>({
    {"ns", -9, 1}, {"us", -6, 1}, {"\xC2\xB5s", -6, 1}, {"\xCE\xBCs", -6, 1}, {"ms", -3, 1},
    {"s", 0, 1}, {"min", 0, 60}, {"h", 0, 3600},
});

constexpr auto kFlopUnits = std::to_array<UnitSpelling>({
    {"FLOP", 0, 1}, {"kFLOP", 3, 1}, {"MFLOP", 6, 1}, {"GFLOP", 9, 1}, {"TFLOP", 12, 1},
    {"PFLOP", 15, 1}, {"EFLOP", 18, 1},
});

constexpr auto kFlopRateUnits = std::to_array<UnitSpelling>({
    {"FLOP/s", 0, 1}, {"kFLOP/s", 3, 1}, {"MFLOP/s", 6, 1}, {"GFLOP/s", 9, 1},
    {"TFLOP/s", 12, 1}, {"PFLOP/s", 15, 1}, {"EFLOP/s", 18, 1},
    {"FLOPS", 0, 1}, {"kFLOPS", 3, 1}, {"MFLOPS", 6, 1}, {"GFLOPS", 9, 1},
    {"TFLOPS", 12, 1}, {"PFLOPS", 15, 1}, {"EFLOPS", 18, 1},
});

// What one parser reads: its name in messages, what it accepts (for
// UnitError::expected) and its unit spellings.
struct Quantity {
  std::string_view noun;
  std::string_view expected;
  std::span<const UnitSpelling> units;
};

constexpr Quantity kSize{
    "size",
    "a size such as '24 GiB' or '1.5 TB'; units B, kB (or KB), MB, GB, TB, PB, EB, "
    "KiB, MiB, GiB, TiB, PiB, EiB; a plain number is bytes",
    kByteUnits};
constexpr Quantity kDuration{
    "duration",
    "a duration such as '7 \xC2\xB5s' or '1.5 h'; units ns, us, \xC2\xB5s, ms, s, min, h; "
    "a plain number is seconds",
    kSecondUnits};
constexpr Quantity kBandwidth{
    "bandwidth",
    "a bandwidth such as '25 GB/s' or '900 GiB/s'; units B/s, kB/s, MB/s, GB/s, TB/s, PB/s, "
    "EB/s, KiB/s, MiB/s, GiB/s, TiB/s, PiB/s, EiB/s; a plain number is B/s",
    kBandwidthUnits};
constexpr Quantity kFlopCount{
    "FLOP count",
    "a FLOP count such as '3.2 TFLOP'; units FLOP, kFLOP, MFLOP, GFLOP, TFLOP, PFLOP, EFLOP; "
    "a plain number is FLOP",
    kFlopUnits};
constexpr Quantity kFlopRate{
    "FLOP rate",
    "a FLOP rate such as '989 TFLOP/s' or '82.6 TFLOPS'; units FLOP/s or FLOPS with a prefix "
    "k, M, G, T, P or E; a plain number is FLOP/s",
    kFlopRateUnits};

constexpr std::array<const Quantity*, 5> kQuantities = {&kSize, &kDuration, &kBandwidth,
                                                        &kFlopCount, &kFlopRate};

const UnitSpelling* find_unit(const Quantity& q, std::string_view name) {
  if (name.empty()) return &kPlainNumber;
  const auto it = std::ranges::find(q.units, name, &UnitSpelling::name);
  return it == q.units.end() ? nullptr : &*it;
}

// ASCII only: units are ASCII apart from µ, whose case never matters here,
// and the C locale functions would depend on the process locale.
char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, {}, ascii_lower, ascii_lower);
}

std::optional<std::string_view> spelled_like(const Quantity& q, std::string_view name) {
  for (const UnitSpelling& u : q.units) {
    if (same_ignoring_case(u.name, name)) return u.name;
  }
  return std::nullopt;
}

// The unit the writer probably meant: the right letters in the wrong case
// ("gb", "Mb"), a rate without its "/s" ("25 GB" for a bandwidth) or a plural
// ("TFLOPs" for a count).
std::optional<std::string_view> likely_unit(const Quantity& q, std::string_view token) {
  const std::string per_second = std::string(token) + "/s";
  const bool plural = token.ends_with('s') || token.ends_with('S');
  const std::string_view singular = plural ? token.substr(0, token.size() - 1) : std::string_view();
  for (std::string_view candidate : {token, std::string_view(per_second), singular}) {
    if (candidate.empty()) continue;
    if (std::optional<std::string_view> found = spelled_like(q, candidate)) return found;
  }
  return std::nullopt;
}

// The quantity, other than q, that spells a unit exactly like `token`, so a
// bandwidth in a size field says so instead of "unknown unit".
const Quantity* owner_of(const Quantity& q, std::string_view token) {
  for (const Quantity* other : kQuantities) {
    if (other != &q && find_unit(*other, token) != nullptr) return other;
  }
  return nullptr;
}

// ----------------------------------------------------------------- errors

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::unexpected<UnitError> fail(std::string what, std::string expected) {
  return std::unexpected(UnitError{std::move(what), std::move(expected)});
}

std::unexpected<UnitError> unknown_unit(const Quantity& q, std::string_view token,
                                        std::string_view body) {
  std::string expected(q.expected);
  if (std::optional<std::string_view> meant = likely_unit(q, token)) {
    expected = "did you mean " + quoted(*meant) + "? " + expected;
  }
  if (const Quantity* other = owner_of(q, token)) {
    return fail(quoted(token) + " in " + quoted(body) + " is a " + std::string(other->noun) +
                    " unit, not a " + std::string(q.noun) + " unit",
                std::move(expected));
  }
  return fail("unknown unit " + quoted(token) + " in " + quoted(body), std::move(expected));
}

// ---------------------------------------------------------------- numbers

constexpr std::string_view kSpaces = " \t\n\r\f\v";

std::string_view trim(std::string_view s) {
  const size_t first = s.find_first_not_of(kSpaces);
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(kSpaces) - first + 1);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A number as written, exactly: digits × 10^exponent, the digits without
// leading or trailing zeros ("" is zero).
struct Decimal {
  std::string digits;
  int64_t exponent = 0;
};

struct ScannedNumber {
  Decimal value;
  bool negative = false;
  bool non_finite = false;  // "nan", "inf", "infinity" in any case
  size_t length = 0;        // characters read; 0 when there is no number
};

// Any exponent past this is far outside every range (doubles end near
// 10^308), so saturating here keeps the arithmetic in int64_t.
constexpr int64_t kExponentCap = 1'000'000'000;

// "123.45": appends the significant digits to d and counts the fraction
// digits into its exponent. Returns the index after the mantissa.
size_t scan_mantissa(std::string_view text, size_t i, Decimal& d) {
  bool in_fraction = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (!is_digit(c)) break;
    if (in_fraction) --d.exponent;
    if (c != '0' || !d.digits.empty()) d.digits += c;
  }
  return i;
}

// "e9", "E-3": adds the exponent to d and returns the index after it. An 'e'
// without digits is left alone, so the 'E' of "5EB" stays part of the unit.
size_t scan_exponent(std::string_view text, size_t i, Decimal& d) {
  if (i >= text.size() || (text[i] != 'e' && text[i] != 'E')) return i;
  size_t j = i + 1;
  const bool negative = j < text.size() && text[j] == '-';
  if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
  if (j >= text.size() || !is_digit(text[j])) return i;
  int64_t value = 0;
  for (; j < text.size() && is_digit(text[j]); ++j) {
    value = std::min(value * 10 + (text[j] - '0'), kExponentCap);
  }
  d.exponent += negative ? -value : value;
  return j;
}

void strip_trailing_zeros(Decimal& d) {
  while (!d.digits.empty() && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exponent;
  }
}

// Reads "[+-]digits[.digits][e[+-]digits]" from the front of text.
ScannedNumber scan_number(std::string_view text) {
  ScannedNumber out;
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) out.negative = text[i++] == '-';
  const std::string_view rest = text.substr(i);
  if (same_ignoring_case(rest.substr(0, 3), "nan") || same_ignoring_case(rest.substr(0, 3), "inf")) {
    out.non_finite = true;
    return out;
  }
  const size_t end = scan_mantissa(text, i, out.value);
  if (!std::any_of(text.begin() + static_cast<ptrdiff_t>(i),
                   text.begin() + static_cast<ptrdiff_t>(end), is_digit)) {
    return out;
  }
  out.length = scan_exponent(text, end, out.value);
  strip_trailing_zeros(out.value);
  return out;
}

// digits × m, exactly, in place. m <= 2^60, so a digit times m plus a carry
// (which stays <= m) is below 10 × 2^60 and fits in uint64_t.
void multiply_digits(std::string& digits, uint64_t m) {
  uint64_t carry = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    const uint64_t product = static_cast<uint64_t>(*it - '0') * m + carry;
    *it = static_cast<char>('0' + product % 10);
    carry = product / 10;
  }
  std::string head;
  for (; carry > 0; carry /= 10) head.insert(head.begin(), static_cast<char>('0' + carry % 10));
  digits.insert(0, head);
}

Decimal apply_unit(Decimal d, const UnitSpelling& unit) {
  if (d.digits.empty()) return d;
  multiply_digits(d.digits, unit.multiplier);
  d.exponent += unit.decimal_exponent;
  strip_trailing_zeros(d);
  return d;
}

// INT64_MAX is 9.2e18, so no value with more integer digits than this fits.
constexpr int64_t kInt64Digits = 19;

// The value rounded to the nearest integer, halves up; nullopt above
// INT64_MAX.
std::optional<int64_t> round_to_int64(const Decimal& d) {
  if (d.digits.empty()) return 0;
  const int64_t written = static_cast<int64_t>(d.digits.size());
  const int64_t integer_digits = written + d.exponent;
  if (integer_digits > kInt64Digits) return std::nullopt;
  if (integer_digits < 0) return 0;  // below 0.1
  uint64_t value = 0;
  for (int64_t i = 0; i < integer_digits; ++i) {
    const char c = i < written ? d.digits[static_cast<size_t>(i)] : '0';
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (integer_digits < written && d.digits[static_cast<size_t>(integer_digits)] >= '5') ++value;
  if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(value);
}

// Decimal magnitudes that are certainly past the largest double (1.8e308)
// or below the smallest subnormal (4.9e-324); checked before from_chars so
// that exponents near kExponentCap never reach it.
constexpr int64_t kDoubleTooLarge = 310;
constexpr int64_t kDoubleTooSmall = -330;

// The double nearest the value; nullopt past the largest double. Values
// below the smallest subnormal become 0, as any decimal-to-double does.
std::optional<double> round_to_double(const Decimal& d) {
  if (d.digits.empty()) return 0.0;
  // The value lies in [10^(magnitude-1), 10^magnitude).
  const int64_t magnitude = static_cast<int64_t>(d.digits.size()) + d.exponent;
  if (magnitude > kDoubleTooLarge) return std::nullopt;
  if (magnitude < kDoubleTooSmall) return 0.0;
  const std::string text = d.digits + "e" + std::to_string(d.exponent);
  double value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec == std::errc::result_out_of_range) {
    if (magnitude > 0) return std::nullopt;
    return 0.0;
  }
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

// ---------------------------------------------------------------- parsing

// Reads "<number> <unit>" as quantity q: the exact value in base units, or
// the first problem in reading order.
std::expected<Decimal, UnitError> parse_decimal(std::string_view text, const Quantity& q) {
  const std::string_view body = trim(text);
  const std::string noun(q.noun);
  const std::string expected(q.expected);
  if (body.empty()) return fail("no " + noun + " given: the text is empty", expected);
  const ScannedNumber number = scan_number(body);
  if (number.non_finite) return fail("non-finite " + noun + " " + quoted(body), expected);
  if (number.length == 0) return fail("missing number at the start of " + quoted(body), expected);
  const std::string_view after = trim(body.substr(number.length));
  const std::string_view token = after.substr(0, after.find_first_of(kSpaces));
  const UnitSpelling* unit = find_unit(q, token);
  if (unit == nullptr) return unknown_unit(q, token, body);
  const std::string_view junk = trim(after.substr(token.size()));
  if (!junk.empty()) {
    const std::string_view read = trim(body.substr(0, body.size() - junk.size()));
    return fail("unexpected text " + quoted(junk) + " after " + quoted(read), expected);
  }
  if (number.negative && !number.value.digits.empty()) {
    return fail("negative " + noun + " " + quoted(body), expected);
  }
  return apply_unit(number.value, *unit);
}

std::unexpected<UnitError> too_large(const Quantity& q, std::string_view text,
                                     std::string_view limit) {
  return fail(std::string(q.noun) + " " + quoted(trim(text)) + " is too large",
              std::string(limit) + std::string(q.expected));
}

// The parsers whose type holds a double differ only in quantity and type.
template <class T>
std::expected<T, UnitError> parse_real(std::string_view text, const Quantity& q) {
  const std::expected<Decimal, UnitError> number = parse_decimal(text, q);
  if (!number) return std::unexpected(number.error());
  const std::optional<double> value = round_to_double(*number);
  if (!value) return too_large(q, text, "at most about 1.8e308; ");
  return T(*value);
}

// --------------------------------------------------------------- printing

// One unit on a printer's ladder: divisor × 10^decimal_exponent base units.
// Decimal prefixes only move the decimal point and binary ones divide by a
// power of two, so neither adds a rounding; only min and h divide by 60 and
// 3600. A rung takes over once a value reaches `threshold` of the rung below.
struct Rung {
  std::string_view name;
  int decimal_exponent = 0;
  double divisor = 1;
  double threshold = 0;
};

// Units from smallest to largest, and the base unit that zero and
// non-finite values print in ("0 s", not "0 ns").
struct Ladder {
  std::span<const Rung> rungs;
  std::string_view base;
};

constexpr auto kDecimalByteRungs = std::to_array<Rung>({
    {"B", 0, 1, 0}, {"kB", 3, 1, 1000}, {"MB", 6, 1, 1000}, {"GB", 9, 1, 1000},
    {"TB", 12, 1, 1000}, {"PB", 15, 1, 1000}, {"EB", 18, 1, 1000},
});

constexpr auto kBinaryByteRungs = std::to_array<Rung>({
    {"B", 0, 1, 0}, {"KiB", 0, 0x1p10, 1024}, {"MiB", 0, 0x1p20, 1024},
    {"GiB", 0, 0x1p30, 1024}, {"TiB", 0, 0x1p40, 1024}, {"PiB", 0, 0x1p50, 1024},
    {"EiB", 0, 0x1p60, 1024},
});

// Seconds last up to 1000 s rather than 60 s: "90 s" and "600 s" read more
// directly than "1.5 min" and "10 min" in a profile. From an hour on, h.
constexpr auto kSecondRungs = std::to_array<Rung>({
    {"ns", -9, 1, 0}, {"\xC2\xB5s", -6, 1, 1000}, {"ms", -3, 1, 1000}, {"s", 0, 1, 1000},
    {"min", 0, 60, 1000}, {"h", 0, 3600, 60},
});

constexpr auto kFlopRungs = std::to_array<Rung>({
    {"FLOP", 0, 1, 0}, {"kFLOP", 3, 1, 1000}, {"MFLOP", 6, 1, 1000}, {"GFLOP", 9, 1, 1000},
    {"TFLOP", 12, 1, 1000}, {"PFLOP", 15, 1, 1000}, {"EFLOP", 18, 1, 1000},
});

constexpr Ladder kDecimalBytes{kDecimalByteRungs, "B"};
constexpr Ladder kBinaryBytes{kBinaryByteRungs, "B"};
constexpr Ladder kSecondsLadder{kSecondRungs, "s"};
constexpr Ladder kFlopsLadder{kFlopRungs, "FLOP"};

// A double carries 17 significant decimal digits at most.
constexpr int kMaxSignificant = std::numeric_limits<double>::max_digits10;

const Ladder& byte_ladder(Prefix prefix) {
  return prefix == Prefix::kBinary ? kBinaryBytes : kDecimalBytes;
}

// A value rounded to some significant digits: d.ddd × 10^exponent, with
// `digits` holding "dddd".
struct Rounded {
  std::string digits;
  int exponent = 0;
};

// magnitude (finite, > 0, base units) in `rung`'s unit, rounded to
// `significant` digits. to_chars rounds correctly from the exact double.
Rounded round_in_rung(double magnitude, const Rung& rung, int significant) {
  std::array<char, 64> buffer{};  // "d.dddddddddddddddde-308" fits easily
  const char* end = std::to_chars(buffer.data(), buffer.data() + buffer.size(),
                                  magnitude / rung.divisor, std::chars_format::scientific,
                                  significant - 1)
                        .ptr;
  const std::string_view text(buffer.data(), end);
  const size_t e = text.find('e');
  Rounded r;
  for (char c : text.substr(0, e)) {
    if (c != '.') r.digits += c;
  }
  std::string_view exponent = text.substr(e + 1);
  if (exponent.front() == '+') exponent.remove_prefix(1);
  std::from_chars(exponent.data(), end, r.exponent);
  r.exponent -= rung.decimal_exponent;
  return r;
}

// The rounded value as a double, for comparing with thresholds.
double value_of(const Rounded& r) {
  if (r.exponent > std::numeric_limits<double>::max_exponent10) {
    return std::numeric_limits<double>::infinity();
  }
  const int last_digit = r.exponent - static_cast<int>(r.digits.size()) + 1;
  const std::string text = r.digits + "e" + std::to_string(last_digit);
  double value = 0;  // stays 0 on underflow
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// The rounded digits without an exponent or trailing zeros:
// ("15", 1) -> "15"; ("15", -3) -> "0.0015"; ("12", 4) -> "12000".
std::string positional(const Rounded& r) {
  std::string integer = "0";
  std::string fraction;
  if (r.exponent < 0) {
    fraction = std::string(static_cast<size_t>(-r.exponent - 1), '0') + r.digits;
  } else {
    const size_t integer_digits = static_cast<size_t>(r.exponent) + 1;
    integer = r.digits.substr(0, integer_digits);
    integer.resize(integer_digits, '0');
    if (integer_digits < r.digits.size()) fraction = r.digits.substr(integer_digits);
  }
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  return fraction.empty() ? integer : integer + "." + fraction;
}

// Whether magnitude (> 0, base units) is printed in rungs[i + 1] rather than
// rungs[i]: it reaches the threshold, before or after rounding (999.96 s at
// 4 digits is "16.67 min", not "1000 s"), and still rounds to at least 1
// there (56.6 min at 1 digit rounds to 60 min, but is "60 min", not "0.9 h").
bool climbs(double magnitude, std::span<const Rung> rungs, size_t i, int significant) {
  const double threshold = rungs[i + 1].threshold;
  const bool reaches =
      value_of(round_in_rung(magnitude, rungs[i], kMaxSignificant)) >= threshold ||
      value_of(round_in_rung(magnitude, rungs[i], significant)) >= threshold;
  return reaches && value_of(round_in_rung(magnitude, rungs[i + 1], significant)) >= 1;
}

std::string format_quantity(double value, const Ladder& ladder, std::string_view suffix,
                            int significant) {
  const std::string base = " " + std::string(ladder.base) + std::string(suffix);
  if (std::isnan(value)) return "nan" + base;
  const std::string sign = value < 0 ? "-" : "";
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign + "inf" + base;
  if (magnitude == 0) return "0" + base;
  const int digits = std::clamp(significant, 1, kMaxSignificant);
  size_t i = 0;
  while (i + 1 < ladder.rungs.size() && climbs(magnitude, ladder.rungs, i, digits)) ++i;
  const Rung& rung = ladder.rungs[i];
  return sign + positional(round_in_rung(magnitude, rung, digits)) + " " + std::string(rung.name) +
         std::string(suffix);
}

}  // namespace

std::expected<Bytes, UnitError> parse_bytes(std::string_view text) {
  const std::expected<Decimal, UnitError> number = parse_decimal(text, kSize);
  if (!number) return std::unexpected(number.error());
  const std::optional<int64_t> count = round_to_int64(*number);
  if (!count) return too_large(kSize, text, "below 8 EiB (at most 9223372036854775807 B); ");
  return Bytes(*count);
}

std::expected<Seconds, UnitError> parse_seconds(std::string_view text) {
  return parse_real<Seconds>(text, kDuration);
}

std::expected<BytesPerSecond, UnitError> parse_bandwidth(std::string_view text) {
  return parse_real<BytesPerSecond>(text, kBandwidth);
}

std::expected<Flops, UnitError> parse_flops(std::string_view text) {
  return parse_real<Flops>(text, kFlopCount);
}

std::expected<FlopsPerSecond, UnitError> parse_flops_rate(std::string_view text) {
  return parse_real<FlopsPerSecond>(text, kFlopRate);
}

std::string format_bytes(Bytes b, Prefix prefix, int significant) {
  return format_quantity(b.as_double(), byte_ladder(prefix), "", significant);
}

std::string format_seconds(Seconds s, int significant) {
  return format_quantity(s.value(), kSecondsLadder, "", significant);
}

std::string format_bandwidth(BytesPerSecond r, Prefix prefix, int significant) {
  return format_quantity(r.value(), byte_ladder(prefix), "/s", significant);
}

std::string format_flops(Flops f, int significant) {
  return format_quantity(f.count(), kFlopsLadder, "", significant);
}

std::string format_flops_rate(FlopsPerSecond r, int significant) {
  return format_quantity(r.value(), kFlopsLadder, "/s", significant);
}

std::string format_clock(Seconds s) {
  const double v = s.value();
  const int64_t total = std::isfinite(v) && v > 0 ? std::llround(std::min(v, 1e15)) : 0;
  char buf[48];
  if (total < 60) {
    std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>(total));
  } else if (total < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm %02llds", static_cast<long long>(total / 60),
                  static_cast<long long>(total % 60));
  } else if (total < 100 * 3600) {
    std::snprintf(buf, sizeof buf, "%lldh %02lldm", static_cast<long long>(total / 3600),
                  static_cast<long long>(total % 3600 / 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldh", static_cast<long long>(total / 3600));
  }
  return buf;
}

}  // namespace stowage::core
