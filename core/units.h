// Physical quantities as distinct types (STYLE.md §4): Bytes, Seconds,
// BytesPerSecond, Flops, FlopsPerSecond. Only meaningful operators exist,
// e.g. Bytes / BytesPerSecond -> Seconds; Bytes + Seconds does not compile.
// Parsing and printing honour decimal (kB, MB, GB: 10^3n) and binary
// (KiB, MiB, GiB: 2^10n) prefixes exactly.
#pragma once

#include <compare>
#include <concepts>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

namespace stowage::core {

class Seconds;
class BytesPerSecond;
class FlopsPerSecond;

// A count of bytes. Exact integer; sizes up to 8 EiB.
class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(int64_t count) : count_(count) {}
  [[nodiscard]] constexpr int64_t count() const { return count_; }
  [[nodiscard]] constexpr double as_double() const { return static_cast<double>(count_); }

  constexpr Bytes& operator+=(Bytes o) { count_ += o.count_; return *this; }
  constexpr Bytes& operator-=(Bytes o) { count_ -= o.count_; return *this; }
  friend constexpr Bytes operator+(Bytes a, Bytes b) { return Bytes(a.count_ + b.count_); }
  friend constexpr Bytes operator-(Bytes a, Bytes b) { return Bytes(a.count_ - b.count_); }
  friend constexpr Bytes operator*(Bytes a, int64_t k) { return Bytes(a.count_ * k); }
  friend constexpr Bytes operator*(int64_t k, Bytes a) { return Bytes(a.count_ * k); }
  // Integer division rounds toward zero, as a partition of a buffer does.
  friend constexpr Bytes operator/(Bytes a, int64_t k) { return Bytes(a.count_ / k); }
  // Scaling by a fraction would silently truncate the factor: say how to round.
  template <std::floating_point F> friend Bytes operator*(Bytes, F) = delete;
  template <std::floating_point F> friend Bytes operator*(F, Bytes) = delete;
  template <std::floating_point F> friend Bytes operator/(Bytes, F) = delete;
  // The ratio of two sizes (dimensionless).
  friend constexpr double operator/(Bytes a, Bytes b) { return a.as_double() / b.as_double(); }
  friend constexpr auto operator<=>(Bytes, Bytes) = default;

 private:
  int64_t count_ = 0;
};

// A duration in seconds (double). Simulated time uses integer nanoseconds
// elsewhere; this type is for rates, costs and human-facing figures.
class Seconds {
 public:
  constexpr Seconds() = default;
  constexpr explicit Seconds(double value) : value_(value) {}
  [[nodiscard]] constexpr double value() const { return value_; }

  constexpr Seconds& operator+=(Seconds o) { value_ += o.value_; return *this; }
  friend constexpr Seconds operator+(Seconds a, Seconds b) { return Seconds(a.value_ + b.value_); }
  friend constexpr Seconds operator-(Seconds a, Seconds b) { return Seconds(a.value_ - b.value_); }
  friend constexpr Seconds operator*(Seconds a, double k) { return Seconds(a.value_ * k); }
  friend constexpr Seconds operator*(double k, Seconds a) { return Seconds(a.value_ * k); }
  friend constexpr Seconds operator/(Seconds a, double k) { return Seconds(a.value_ / k); }
  friend constexpr double operator/(Seconds a, Seconds b) { return a.value_ / b.value_; }
  friend constexpr auto operator<=>(Seconds, Seconds) = default;

 private:
  double value_ = 0;
};

// Floating-point operations (a count, not a rate).
class Flops {
 public:
  constexpr Flops() = default;
  constexpr explicit Flops(double count) : count_(count) {}
  [[nodiscard]] constexpr double count() const { return count_; }

  constexpr Flops& operator+=(Flops o) { count_ += o.count_; return *this; }
  friend constexpr Flops operator+(Flops a, Flops b) { return Flops(a.count_ + b.count_); }
  friend constexpr Flops operator-(Flops a, Flops b) { return Flops(a.count_ - b.count_); }
  friend constexpr Flops operator*(Flops a, double k) { return Flops(a.count_ * k); }
  friend constexpr Flops operator*(double k, Flops a) { return Flops(a.count_ * k); }
  friend constexpr Flops operator/(Flops a, double k) { return Flops(a.count_ / k); }
  friend constexpr double operator/(Flops a, Flops b) { return a.count_ / b.count_; }
  friend constexpr auto operator<=>(Flops, Flops) = default;

 private:
  double count_ = 0;
};

class BytesPerSecond {
 public:
  constexpr BytesPerSecond() = default;
  constexpr explicit BytesPerSecond(double value) : value_(value) {}
  [[nodiscard]] constexpr double value() const { return value_; }

  friend constexpr BytesPerSecond operator+(BytesPerSecond a, BytesPerSecond b) { return BytesPerSecond(a.value_ + b.value_); }
  friend constexpr BytesPerSecond operator-(BytesPerSecond a, BytesPerSecond b) { return BytesPerSecond(a.value_ - b.value_); }
  friend constexpr BytesPerSecond operator*(BytesPerSecond a, double k) { return BytesPerSecond(a.value_ * k); }
  friend constexpr BytesPerSecond operator*(double k, BytesPerSecond a) { return BytesPerSecond(a.value_ * k); }
  friend constexpr BytesPerSecond operator/(BytesPerSecond a, double k) { return BytesPerSecond(a.value_ / k); }
  friend constexpr double operator/(BytesPerSecond a, BytesPerSecond b) { return a.value_ / b.value_; }
  friend constexpr auto operator<=>(BytesPerSecond, BytesPerSecond) = default;

 private:
  double value_ = 0;
};

class FlopsPerSecond {
 public:
  constexpr FlopsPerSecond() = default;
  constexpr explicit FlopsPerSecond(double value) : value_(value) {}
  [[nodiscard]] constexpr double value() const { return value_; }

  friend constexpr FlopsPerSecond operator+(FlopsPerSecond a, FlopsPerSecond b) { return FlopsPerSecond(a.value_ + b.value_); }
  friend constexpr FlopsPerSecond operator*(FlopsPerSecond a, double k) { return FlopsPerSecond(a.value_ * k); }
  friend constexpr FlopsPerSecond operator*(double k, FlopsPerSecond a) { return FlopsPerSecond(a.value_ * k); }
  friend constexpr FlopsPerSecond operator/(FlopsPerSecond a, double k) { return FlopsPerSecond(a.value_ / k); }
  friend constexpr double operator/(FlopsPerSecond a, FlopsPerSecond b) { return a.value_ / b.value_; }
  friend constexpr auto operator<=>(FlopsPerSecond, FlopsPerSecond) = default;

 private:
  double value_ = 0;
};

// The cross-type operators that carry meaning.
constexpr Seconds operator/(Bytes b, BytesPerSecond r) { return Seconds(b.as_double() / r.value()); }
constexpr BytesPerSecond operator/(Bytes b, Seconds t) { return BytesPerSecond(b.as_double() / t.value()); }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.count() / r.value()); }
constexpr FlopsPerSecond operator/(Flops f, Seconds t) { return FlopsPerSecond(f.count() / t.value()); }

// Which prefix family a printer uses.
enum class Prefix { kDecimal, kBinary };

// Parsers accept "<number> <unit>" with optional spaces, or a plain number in
// base units (bytes, seconds, B/s, FLOP, FLOP/s). The number may have a
// fraction and an exponent ("1.5", "2e9", ".5"); surrounding whitespace is
// ignored. Units are case-sensitive as SI writes them ("KB" is the one alias).
// The number is applied to its unit exactly and rounded once, so "82.6 TFLOPS"
// is the double nearest 82.6e12. Negative, non-finite, empty, unit-less
// ("GB"), trailing text and out-of-range values fail. The error text names
// what was wrong and lists the accepted units, for a Diagnostic's `expected`
// part, with a "did you mean" when the case or "/s" is off.
struct UnitError {
  std::string what;      // "unknown unit 'Gb'"
  std::string expected;  // "a size such as '24 GiB' or '1.5 TB' ..."
};

// Bytes: B, kB/KB, MB, GB, TB, PB, EB (10^3n) and KiB, MiB, GiB, TiB, PiB,
// EiB (2^10n); EB and EiB are accepted so that what format_bytes prints parses.
// Exact: "1.5 TB" is 1'500'000'000'000; "1.5 GiB" is 1'610'612'736.
// A fractional byte count is rounded to the nearest byte, halves up ("0.5 B"
// is 1 B). Negative sizes fail, and so do sizes of 2^63 bytes (8 EiB) or more.
std::expected<Bytes, UnitError> parse_bytes(std::string_view text);
// Seconds: ns, µs (U+00B5 or U+03BC) or us, ms, s, min, h.
std::expected<Seconds, UnitError> parse_seconds(std::string_view text);
// Bandwidth: B/s with the byte prefixes above ("25 GB/s", "900 GiB/s").
std::expected<BytesPerSecond, UnitError> parse_bandwidth(std::string_view text);
// FLOP count: FLOP, kFLOP, MFLOP, GFLOP, TFLOP, PFLOP, EFLOP (decimal only).
std::expected<Flops, UnitError> parse_flops(std::string_view text);
// FLOP rate: FLOP/s or FLOPS with decimal prefixes ("989 TFLOP/s", "82.6 TFLOPS").
std::expected<FlopsPerSecond, UnitError> parse_flops_rate(std::string_view text);

// Printers choose the largest prefix that keeps the number >= 1 and print up
// to `significant` significant digits (clamped to 1..17) without trailing
// zeros: "24 GiB", "1.5 TB", "25 GB/s", "989 TFLOP/s", "7 µs" (U+00B5). A
// value that rounds up to the next prefix takes it ("999999 B" is "1 MB").
// Durations stay in seconds below 1000 s ("90 s", "999 s"), then use min
// below one hour ("16.67 min") and h from there on ("2.5 h"); below 1 ns they
// print in ns ("0.5 ns"). Past the largest prefix the number grows, rounded to
// `significant` digits, never in scientific notation ("12350000 EFLOP").
// Zero prints "0 B", "0 s"; negative values get a leading '-'; non-finite
// ones print "inf s", "-inf s", "nan s". Parsing the output gives back the
// value to within the printed precision, except for sizes so close to the
// largest Bytes that they round up past it (2^63 - 1 bytes prints "8 EiB").
std::string format_bytes(Bytes b, Prefix prefix = Prefix::kDecimal, int significant = 4);
std::string format_seconds(Seconds s, int significant = 4);
std::string format_bandwidth(BytesPerSecond r, Prefix prefix = Prefix::kDecimal, int significant = 4);
std::string format_flops(Flops f, int significant = 4);
std::string format_flops_rate(FlopsPerSecond r, int significant = 4);
// A wall-clock duration as a person reads a countdown, rounded to the
// second: "42 s", "3m 05s", "2h 07m" (minutes dropped past 100 hours:
// "731h"). Negative or non-finite: "0 s".
std::string format_clock(Seconds s);

// Literals for readable constants in code and tests: 24_GiB, 1500_GB
// (whole numbers only; there are no floating-point literals such as 1.5_TB).
namespace literals {
constexpr Bytes operator""_B(unsigned long long n) { return Bytes(static_cast<int64_t>(n)); }
constexpr Bytes operator""_KiB(unsigned long long n) { return Bytes(static_cast<int64_t>(n) << 10); }
constexpr Bytes operator""_MiB(unsigned long long n) { return Bytes(static_cast<int64_t>(n) << 20); }
constexpr Bytes operator""_GiB(unsigned long long n) { return Bytes(static_cast<int64_t>(n) << 30); }
constexpr Bytes operator""_TiB(unsigned long long n) { return Bytes(static_cast<int64_t>(n) << 40); }
constexpr Bytes operator""_kB(unsigned long long n) { return Bytes(static_cast<int64_t>(n) * 1000); }
constexpr Bytes operator""_MB(unsigned long long n) { return Bytes(static_cast<int64_t>(n) * 1000'000); }
constexpr Bytes operator""_GB(unsigned long long n) { return Bytes(static_cast<int64_t>(n) * 1000'000'000); }
constexpr Bytes operator""_TB(unsigned long long n) { return Bytes(static_cast<int64_t>(n) * 1000'000'000'000); }
}  // namespace literals

}  // namespace stowage::core
