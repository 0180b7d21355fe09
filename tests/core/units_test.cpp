// Tests for core/units.h: exact parsing, every way a parse fails and what it
// says, printing, the round trip between the two, and (at compile time)
// that only the meaningful operators between unit types exist.
#include "core/units.h"

#include <gtest/gtest.h>

#include <cmath>
#include <concepts>
#include <cstdint>
#include <expected>
#include <iomanip>
#include <limits>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace stowage::core {

// Failure messages show quantities as numbers rather than raw bytes. gtest
// finds these by argument-dependent lookup; `static` keeps them out of other
// test files' way.
static void PrintTo(Bytes b, std::ostream* os) { *os << b.count() << " B"; }
static void PrintTo(Seconds s, std::ostream* os) {
  *os << std::setprecision(17) << s.value() << " s";
}
static void PrintTo(BytesPerSecond r, std::ostream* os) {
  *os << std::setprecision(17) << r.value() << " B/s";
}
static void PrintTo(Flops f, std::ostream* os) {
  *os << std::setprecision(17) << f.count() << " FLOP";
}
static void PrintTo(FlopsPerSecond r, std::ostream* os) {
  *os << std::setprecision(17) << r.value() << " FLOP/s";
}

namespace {

using namespace literals;

constexpr int64_t kMaxBytes = std::numeric_limits<int64_t>::max();

// The parsed value, or a test failure that shows the error.
template <class T>
T value_of(const std::expected<T, UnitError>& parsed, std::string_view text) {
  if (!parsed) {
    ADD_FAILURE() << "'" << text << "' did not parse: " << parsed.error().what << " ("
                  << parsed.error().expected << ")";
    return T();
  }
  return *parsed;
}

// The error, or a test failure if the text parsed.
template <class T>
UnitError error_of(const std::expected<T, UnitError>& parsed, std::string_view text) {
  if (parsed) {
    ADD_FAILURE() << "'" << text << "' parsed but should have failed";
    return {};
  }
  return parsed.error();
}

Bytes bytes(std::string_view t) { return value_of(parse_bytes(t), t); }
Seconds seconds(std::string_view t) { return value_of(parse_seconds(t), t); }
BytesPerSecond bandwidth(std::string_view t) { return value_of(parse_bandwidth(t), t); }
Flops flops(std::string_view t) { return value_of(parse_flops(t), t); }
FlopsPerSecond flops_rate(std::string_view t) { return value_of(parse_flops_rate(t), t); }

UnitError bytes_error(std::string_view t) { return error_of(parse_bytes(t), t); }
UnitError seconds_error(std::string_view t) { return error_of(parse_seconds(t), t); }
UnitError bandwidth_error(std::string_view t) { return error_of(parse_bandwidth(t), t); }
UnitError flops_error(std::string_view t) { return error_of(parse_flops(t), t); }
UnitError flops_rate_error(std::string_view t) { return error_of(parse_flops_rate(t), t); }

bool starts_with(const std::string& s, std::string_view prefix) { return s.starts_with(prefix); }

constexpr std::string_view kSizeExpected =
    "a size such as '24 GiB' or '1.5 TB'; units B, kB (or KB), MB, GB, TB, PB, EB, "
    "KiB, MiB, GiB, TiB, PiB, EiB; a plain number is bytes";

// ------------------------------------------------------------ parse_bytes

TEST(ParseBytes, DecimalPrefixesArePowersOfTen) {
  EXPECT_EQ(bytes("1 B"), Bytes(1));
  EXPECT_EQ(bytes("1 kB"), Bytes(1'000));
  EXPECT_EQ(bytes("1 MB"), Bytes(1'000'000));
  EXPECT_EQ(bytes("1 GB"), Bytes(1'000'000'000));
  EXPECT_EQ(bytes("1 TB"), Bytes(1'000'000'000'000));
  EXPECT_EQ(bytes("1 PB"), Bytes(1'000'000'000'000'000));
  EXPECT_EQ(bytes("1 EB"), Bytes(1'000'000'000'000'000'000));
}

TEST(ParseBytes, UppercaseKbIsAcceptedAsKilobytes) {
  EXPECT_EQ(bytes("3 KB"), Bytes(3'000));
}

TEST(ParseBytes, BinaryPrefixesArePowersOfTwo) {
  EXPECT_EQ(bytes("1 KiB"), Bytes(int64_t{1} << 10));
  EXPECT_EQ(bytes("1 MiB"), Bytes(int64_t{1} << 20));
  EXPECT_EQ(bytes("1 GiB"), Bytes(int64_t{1} << 30));
  EXPECT_EQ(bytes("1 TiB"), Bytes(int64_t{1} << 40));
  EXPECT_EQ(bytes("1 PiB"), Bytes(int64_t{1} << 50));
  EXPECT_EQ(bytes("1 EiB"), Bytes(int64_t{1} << 60));
}

TEST(ParseBytes, PlainNumberIsBytes) {
  EXPECT_EQ(bytes("512"), Bytes(512));
  EXPECT_EQ(bytes("0"), Bytes(0));
}

TEST(ParseBytes, FractionsOfAUnitAreExact) {
  EXPECT_EQ(bytes("1.5 TB"), Bytes(1'500'000'000'000));
  EXPECT_EQ(bytes("1.5 GiB"), Bytes(1'610'612'736));  // 1.5 × 2^30
  EXPECT_EQ(bytes("24 GiB"), Bytes(25'769'803'776));  // 24 × 2^30
  EXPECT_EQ(bytes("0.5 KiB"), Bytes(512));
  EXPECT_EQ(bytes("0.1 GB"), Bytes(100'000'000));
  // 1.1 × 2^40 = 1'209'462'790'553.6, rounded to the nearest byte.
  EXPECT_EQ(bytes("1.1 TiB"), Bytes(1'209'462'790'554));
}

TEST(ParseBytes, ExactWhereADoubleWouldNotBe) {
  // 0.3 × 2^60 = 345'876'451'382'054'092.8. Through a double (0.3 * 2^60)
  // this comes out as ...080, because doubles there are 64 apart.
  EXPECT_EQ(bytes("0.3 EiB"), Bytes(345'876'451'382'054'093));
  EXPECT_EQ(bytes("1.234567890123456789 EB"), Bytes(1'234'567'890'123'456'789));
  EXPECT_EQ(bytes("9.223372036854775807 EB"), Bytes(kMaxBytes));
  EXPECT_EQ(bytes("9223372036854775807"), Bytes(kMaxBytes));
}

TEST(ParseBytes, ExponentsAreExact) {
  EXPECT_EQ(bytes("2e9"), Bytes(2'000'000'000));
  EXPECT_EQ(bytes("1e3 MB"), Bytes(1'000'000'000));
  EXPECT_EQ(bytes("1E3"), Bytes(1'000));
  EXPECT_EQ(bytes("1e+3 B"), Bytes(1'000));
  EXPECT_EQ(bytes("2.5e-3 MB"), Bytes(2'500));
  EXPECT_EQ(bytes("12e0 GiB"), Bytes(int64_t{12} << 30));
  // Only an 'e' followed by digits is an exponent; here 'E' starts the unit.
  EXPECT_EQ(bytes("5EB"), Bytes(5'000'000'000'000'000'000));
}

TEST(ParseBytes, FractionalBytesRoundToNearestWithHalvesUp) {
  EXPECT_EQ(bytes("0.4 B"), Bytes(0));
  EXPECT_EQ(bytes("0.5 B"), Bytes(1));
  EXPECT_EQ(bytes("1.5 B"), Bytes(2));
  EXPECT_EQ(bytes("2.5 B"), Bytes(3));
  EXPECT_EQ(bytes("2.49 B"), Bytes(2));
  EXPECT_EQ(bytes("5e-1 B"), Bytes(1));
  EXPECT_EQ(bytes("4.9e-1 B"), Bytes(0));
  EXPECT_EQ(bytes("0.0001 KiB"), Bytes(0));         // 0.1024 B
  EXPECT_EQ(bytes("0.00048828125 KiB"), Bytes(1));  // exactly 0.5 B
  EXPECT_EQ(bytes("0.000488281 KiB"), Bytes(0));    // 0.499999744 B
  EXPECT_EQ(bytes("1.0009765625 KiB"), Bytes(1'025));
  EXPECT_EQ(bytes("0.0000000015 GB"), Bytes(2));    // 1.5 B
}

TEST(ParseBytes, NumberFormsAreAccepted) {
  EXPECT_EQ(bytes(".5 KiB"), Bytes(512));
  EXPECT_EQ(bytes("5. KiB"), Bytes(5'120));
  EXPECT_EQ(bytes("007 B"), Bytes(7));
  EXPECT_EQ(bytes("+3 B"), Bytes(3));
  EXPECT_EQ(bytes("0.0 GB"), Bytes(0));
  EXPECT_EQ(bytes("1.50000000000000000000000000000 TB"), Bytes(1'500'000'000'000));
  EXPECT_EQ(bytes("0.000000000000000000000000001e27 B"), Bytes(1));
}

TEST(ParseBytes, NegativeZeroIsZeroNotAnError) {
  EXPECT_EQ(bytes("-0 B"), Bytes(0));
  EXPECT_EQ(bytes("-0.000 GiB"), Bytes(0));
}

TEST(ParseBytes, ExtremeExponentsSaturateInsteadOfOverflowing) {
  EXPECT_EQ(bytes("1e-999999999999999999999 B"), Bytes(0));
  EXPECT_EQ(bytes("0e999999999999999999999 B"), Bytes(0));
  EXPECT_EQ(bytes_error("1e999999999999999999999 B").what,
            "size '1e999999999999999999999 B' is too large");
}

TEST(ParseBytes, SpacesAreOptionalBetweenNumberAndUnit) {
  const Bytes expected(int64_t{24} << 30);
  EXPECT_EQ(bytes("24GiB"), expected);
  EXPECT_EQ(bytes("24 GiB"), expected);
  EXPECT_EQ(bytes("24   GiB"), expected);
  EXPECT_EQ(bytes("\t24\tGiB"), expected);
}

TEST(ParseBytes, LeadingAndTrailingWhitespaceIsIgnored) {
  EXPECT_EQ(bytes("  24 GiB  "), 24_GiB);
  EXPECT_EQ(bytes("\n24 GiB\r\n"), 24_GiB);
}

TEST(ParseBytes, EmptyTextSaysSo) {
  for (std::string_view text : {"", "   ", "\t\n"}) {
    const UnitError e = bytes_error(text);
    EXPECT_EQ(e.what, "no size given: the text is empty");
    EXPECT_EQ(e.expected, kSizeExpected);
  }
}

TEST(ParseBytes, MissingNumberSaysSo) {
  EXPECT_EQ(bytes_error("GB").what, "missing number at the start of 'GB'");
  EXPECT_EQ(bytes_error("  GB ").what, "missing number at the start of 'GB'");
  EXPECT_EQ(bytes_error(".").what, "missing number at the start of '.'");
  EXPECT_EQ(bytes_error("e9 B").what, "missing number at the start of 'e9 B'");
  EXPECT_EQ(bytes_error("-GB").what, "missing number at the start of '-GB'");
  EXPECT_EQ(bytes_error("GB").expected, kSizeExpected);
}

TEST(ParseBytes, NegativeSizeIsAnError) {
  const UnitError e = bytes_error("-3 GB");
  EXPECT_EQ(e.what, "negative size '-3 GB'");
  EXPECT_EQ(e.expected, kSizeExpected);
  EXPECT_EQ(bytes_error("-0.5 B").what, "negative size '-0.5 B'");
}

TEST(ParseBytes, NanAndInfinityAreErrors) {
  EXPECT_EQ(bytes_error("nan").what, "non-finite size 'nan'");
  EXPECT_EQ(bytes_error("NaN B").what, "non-finite size 'NaN B'");
  EXPECT_EQ(bytes_error("inf GB").what, "non-finite size 'inf GB'");
  EXPECT_EQ(bytes_error("-inf").what, "non-finite size '-inf'");
  EXPECT_EQ(bytes_error("+INF B").what, "non-finite size '+INF B'");
  EXPECT_EQ(bytes_error("Infinity").what, "non-finite size 'Infinity'");
}

TEST(ParseBytes, TrailingTextIsAnError) {
  const UnitError e = bytes_error("12 GB extra");
  EXPECT_EQ(e.what, "unexpected text 'extra' after '12 GB'");
  EXPECT_EQ(e.expected, kSizeExpected);
  EXPECT_EQ(bytes_error(" 12GB   extra words ").what,
            "unexpected text 'extra words' after '12GB'");
  EXPECT_EQ(bytes_error("12 GB 3").what, "unexpected text '3' after '12 GB'");
  EXPECT_EQ(bytes_error("12 3").what, "unknown unit '3' in '12 3'");
}

TEST(ParseBytes, UnknownUnitListsTheAcceptedUnits) {
  const UnitError e = bytes_error("12 xyz");
  EXPECT_EQ(e.what, "unknown unit 'xyz' in '12 xyz'");
  EXPECT_EQ(e.expected, kSizeExpected);
}

TEST(ParseBytes, WrongCaseSuggestsTheRightSpelling) {
  const UnitError e = bytes_error("12 Gb");
  EXPECT_EQ(e.what, "unknown unit 'Gb' in '12 Gb'");
  EXPECT_EQ(e.expected, "did you mean 'GB'? " + std::string(kSizeExpected));
  EXPECT_TRUE(starts_with(bytes_error("12 gb").expected, "did you mean 'GB'? "));
  EXPECT_TRUE(starts_with(bytes_error("12 gib").expected, "did you mean 'GiB'? "));
  EXPECT_TRUE(starts_with(bytes_error("12 KIB").expected, "did you mean 'KiB'? "));
  EXPECT_TRUE(starts_with(bytes_error("12 kb").expected, "did you mean 'kB'? "));
  EXPECT_TRUE(starts_with(bytes_error("12 b").expected, "did you mean 'B'? "));
  EXPECT_TRUE(starts_with(bytes_error("12 mB").expected, "did you mean 'MB'? "));
}

TEST(ParseBytes, PluralUnitSuggestsTheSingular) {
  EXPECT_TRUE(starts_with(bytes_error("12 GBs").expected, "did you mean 'GB'? "));
}

TEST(ParseBytes, BandwidthUnitSaysItIsABandwidth) {
  const UnitError e = bytes_error("12 GB/s");
  EXPECT_EQ(e.what, "'GB/s' in '12 GB/s' is a bandwidth unit, not a size unit");
  EXPECT_EQ(e.expected, kSizeExpected);
  EXPECT_EQ(bytes_error("3 s").what, "'s' in '3 s' is a duration unit, not a size unit");
}

TEST(ParseBytes, MalformedNumbersAreReportedAtTheUnit) {
  EXPECT_EQ(bytes_error("1.5.3 GB").what, "unknown unit '.3' in '1.5.3 GB'");
  EXPECT_EQ(bytes_error("1,5 GB").what, "unknown unit ',5' in '1,5 GB'");
  EXPECT_EQ(bytes_error("1e GB").what, "unknown unit 'e' in '1e GB'");
  EXPECT_EQ(bytes_error("0x10 B").what, "unknown unit 'x10' in '0x10 B'");
  EXPECT_EQ(bytes_error("1_000 B").what, "unknown unit '_000' in '1_000 B'");
}

TEST(ParseBytes, SizesFromTwoToTheSixtyThreeUpAreTooLarge) {
  for (std::string_view text : {"8 EiB", "9223372036854775808", "9.3 EB", "1e19", "1e30 B",
                                "10000 PB", "9.2233720368547758075 EB"}) {
    const UnitError e = bytes_error(text);
    EXPECT_EQ(e.what, "size '" + std::string(text) + "' is too large");
    EXPECT_EQ(e.expected,
              "below 8 EiB (at most 9223372036854775807 B); " + std::string(kSizeExpected));
  }
  // Just below the limit still fits, and rounding to a byte stays inside.
  EXPECT_EQ(bytes("9223372036854775807.4"), Bytes(kMaxBytes));
  EXPECT_FALSE(parse_bytes("9223372036854775807.5"));
}

// ---------------------------------------------------------- parse_seconds

TEST(ParseSeconds, UnitsScaleToSeconds) {
  EXPECT_EQ(seconds("3 ns"), Seconds(3e-9));
  EXPECT_EQ(seconds("7 us"), Seconds(7e-6));
  EXPECT_EQ(seconds("12.3 ms"), Seconds(12.3e-3));
  EXPECT_EQ(seconds("90 s"), Seconds(90));
  EXPECT_EQ(seconds("1.5 min"), Seconds(90));
  EXPECT_EQ(seconds("2 h"), Seconds(7'200));
  EXPECT_EQ(seconds("0.5 h"), Seconds(1'800));
}

TEST(ParseSeconds, PlainNumberIsSeconds) {
  EXPECT_EQ(seconds("90"), Seconds(90));
  EXPECT_EQ(seconds("1e-3"), Seconds(1e-3));
}

TEST(ParseSeconds, BothMicroSignsMeanMicroseconds) {
  EXPECT_EQ(seconds("7 \xC2\xB5s"), Seconds(7e-6));  // U+00B5 MICRO SIGN
  EXPECT_EQ(seconds("7 \xCE\xBCs"), Seconds(7e-6));  // U+03BC GREEK SMALL LETTER MU
  EXPECT_EQ(seconds("7\xC2\xB5s"), Seconds(7e-6));
  EXPECT_EQ(seconds("7\xCE\xBCs"), Seconds(7e-6));
}

TEST(ParseSeconds, ValueIsTheDoubleNearestTheWrittenNumber) {
  // A double literal is the nearest double to its decimal value, which is
  // what the parser promises; multiplying by the unit afterwards is not.
  EXPECT_EQ(seconds("0.1 s"), Seconds(0.1));
  EXPECT_EQ(seconds("82.6 ms"), Seconds(82.6e-3));
  // 1.1 h is 3960 s exactly; 1.1 * 3600.0 in doubles is 3960.0000000000005.
  EXPECT_EQ(seconds("1.1 h"), Seconds(3'960));
}

TEST(ParseSeconds, TinyValuesBecomeZeroAndHugeOnesFail) {
  EXPECT_EQ(seconds("1e-400 s"), Seconds(0));
  EXPECT_EQ(seconds("1.7e308 s"), Seconds(1.7e308));
  EXPECT_EQ(seconds_error("1e400 s").what, "duration '1e400 s' is too large");
  EXPECT_EQ(seconds_error("1e308 h").what, "duration '1e308 h' is too large");
}

TEST(ParseSeconds, WrongCaseSuggestsTheRightSpelling) {
  EXPECT_TRUE(starts_with(seconds_error("7 S").expected, "did you mean 's'? "));
  EXPECT_TRUE(starts_with(seconds_error("7 MS").expected, "did you mean 'ms'? "));
  EXPECT_TRUE(starts_with(seconds_error("7 NS").expected, "did you mean 'ns'? "));
  EXPECT_TRUE(starts_with(seconds_error("7 US").expected, "did you mean 'us'? "));
  EXPECT_TRUE(starts_with(seconds_error("7 Min").expected, "did you mean 'min'? "));
  EXPECT_TRUE(starts_with(seconds_error("7 H").expected, "did you mean 'h'? "));
  EXPECT_TRUE(starts_with(seconds_error("7 mins").expected, "did you mean 'min'? "));
}

TEST(ParseSeconds, UnknownUnitListsTheAcceptedUnits) {
  const UnitError e = seconds_error("7 sec");
  EXPECT_EQ(e.what, "unknown unit 'sec' in '7 sec'");
  EXPECT_EQ(e.expected,
            "a duration such as '7 \xC2\xB5s' or '1.5 h'; units ns, us, \xC2\xB5s, ms, s, min, h; "
            "a plain number is seconds");
  EXPECT_EQ(seconds_error("7 \xC2\xB5").what, "unknown unit '\xC2\xB5' in '7 \xC2\xB5'");
}

TEST(ParseSeconds, OtherErrorsNameTheDuration) {
  EXPECT_EQ(seconds_error("").what, "no duration given: the text is empty");
  EXPECT_EQ(seconds_error("s").what, "missing number at the start of 's'");
  EXPECT_EQ(seconds_error("-1 s").what, "negative duration '-1 s'");
  EXPECT_EQ(seconds_error("nan s").what, "non-finite duration 'nan s'");
  EXPECT_EQ(seconds_error("1 s later").what, "unexpected text 'later' after '1 s'");
  EXPECT_EQ(seconds_error("7 GB").what, "'GB' in '7 GB' is a size unit, not a duration unit");
}

// -------------------------------------------------------- parse_bandwidth

TEST(ParseBandwidth, ByteUnitsPerSecond) {
  EXPECT_EQ(bandwidth("25 GB/s"), BytesPerSecond(25e9));
  EXPECT_EQ(bandwidth("25GB/s"), BytesPerSecond(25e9));
  EXPECT_EQ(bandwidth("900 GiB/s"), BytesPerSecond(900 * 0x1p30));
  EXPECT_EQ(bandwidth("7450 MB/s"), BytesPerSecond(7.45e9));
  EXPECT_EQ(bandwidth("1.5 KiB/s"), BytesPerSecond(1'536));
  EXPECT_EQ(bandwidth("25 KB/s"), BytesPerSecond(25'000));
  EXPECT_EQ(bandwidth("3 B/s"), BytesPerSecond(3));
  EXPECT_EQ(bandwidth("1 EB/s"), BytesPerSecond(1e18));
  // 0.3 × 2^60 exactly is ...092.8; the nearest double to that.
  EXPECT_EQ(bandwidth("0.3 EiB/s"), BytesPerSecond(345876451382054092.8));
}

TEST(ParseBandwidth, PlainNumberIsBytesPerSecond) {
  EXPECT_EQ(bandwidth("25"), BytesPerSecond(25));
}

TEST(ParseBandwidth, SizeUnitSuggestsAddingPerSecond) {
  const UnitError e = bandwidth_error("25 GB");
  EXPECT_EQ(e.what, "'GB' in '25 GB' is a size unit, not a bandwidth unit");
  EXPECT_TRUE(starts_with(e.expected, "did you mean 'GB/s'? a bandwidth such as '25 GB/s'"));
}

TEST(ParseBandwidth, WrongCaseSuggestsTheRightSpelling) {
  EXPECT_TRUE(starts_with(bandwidth_error("25 gb/s").expected, "did you mean 'GB/s'? "));
  EXPECT_TRUE(starts_with(bandwidth_error("25 GB/S").expected, "did you mean 'GB/s'? "));
  EXPECT_TRUE(starts_with(bandwidth_error("25 gib").expected, "did you mean 'GiB/s'? "));
}

TEST(ParseBandwidth, OtherErrorsNameTheBandwidth) {
  const UnitError e = bandwidth_error("25 GBps");
  EXPECT_EQ(e.what, "unknown unit 'GBps' in '25 GBps'");
  EXPECT_TRUE(starts_with(e.expected, "a bandwidth such as '25 GB/s' or '900 GiB/s'; units B/s"));
  EXPECT_EQ(bandwidth_error("-1 GB/s").what, "negative bandwidth '-1 GB/s'");
  EXPECT_EQ(bandwidth_error("/s").what, "missing number at the start of '/s'");
  EXPECT_EQ(bandwidth_error("25 GB/s fast").what, "unexpected text 'fast' after '25 GB/s'");
  EXPECT_EQ(bandwidth_error("inf GB/s").what, "non-finite bandwidth 'inf GB/s'");
  EXPECT_EQ(bandwidth_error(" ").what, "no bandwidth given: the text is empty");
}

// ------------------------------------------------------------ parse_flops

TEST(ParseFlops, DecimalPrefixes) {
  EXPECT_EQ(flops("5"), Flops(5));
  EXPECT_EQ(flops("5 FLOP"), Flops(5));
  EXPECT_EQ(flops("7 kFLOP"), Flops(7e3));
  EXPECT_EQ(flops("2 MFLOP"), Flops(2e6));
  EXPECT_EQ(flops("2 GFLOP"), Flops(2e9));
  EXPECT_EQ(flops("3.2 TFLOP"), Flops(3.2e12));
  EXPECT_EQ(flops("2 PFLOP"), Flops(2e15));
  EXPECT_EQ(flops("1 EFLOP"), Flops(1e18));
}

TEST(ParseFlops, WrongCaseAndPluralSuggestTheUnit) {
  EXPECT_TRUE(starts_with(flops_error("7 KFLOP").expected, "did you mean 'kFLOP'? "));
  EXPECT_TRUE(starts_with(flops_error("6 TFLOPs").expected, "did you mean 'TFLOP'? "));
  EXPECT_TRUE(starts_with(flops_error("6 tflop").expected, "did you mean 'TFLOP'? "));
}

TEST(ParseFlops, RateUnitSaysItIsARate) {
  const UnitError e = flops_error("6 TFLOPS");
  EXPECT_EQ(e.what, "'TFLOPS' in '6 TFLOPS' is a FLOP rate unit, not a FLOP count unit");
  EXPECT_EQ(e.expected,
            "did you mean 'TFLOP'? a FLOP count such as '3.2 TFLOP'; units FLOP, kFLOP, MFLOP, "
            "GFLOP, TFLOP, PFLOP, EFLOP; a plain number is FLOP");
  EXPECT_EQ(flops_error("6 TFLOP/s").what,
            "'TFLOP/s' in '6 TFLOP/s' is a FLOP rate unit, not a FLOP count unit");
}

TEST(ParseFlops, NegativeCountIsAnError) {
  EXPECT_EQ(flops_error("-1 FLOP").what, "negative FLOP count '-1 FLOP'");
}

// ------------------------------------------------------- parse_flops_rate

TEST(ParseFlopsRate, PerSecondAndFlopsSpellings) {
  EXPECT_EQ(flops_rate("989 TFLOP/s"), FlopsPerSecond(989e12));
  EXPECT_EQ(flops_rate("82.6 TFLOPS"), FlopsPerSecond(82.6e12));
  EXPECT_EQ(flops_rate("312 TFLOP/s"), FlopsPerSecond(312e12));
  EXPECT_EQ(flops_rate("1 EFLOPS"), FlopsPerSecond(1e18));
  EXPECT_EQ(flops_rate("1 FLOP/s"), FlopsPerSecond(1));
  EXPECT_EQ(flops_rate("1 FLOPS"), FlopsPerSecond(1));
  EXPECT_EQ(flops_rate("5 kFLOPS"), FlopsPerSecond(5e3));
  EXPECT_EQ(flops_rate("5 GFLOP/s"), FlopsPerSecond(5e9));
}

TEST(ParseFlopsRate, PlainNumberIsFlopsPerSecond) {
  EXPECT_EQ(flops_rate("100"), FlopsPerSecond(100));
}

TEST(ParseFlopsRate, CountUnitSuggestsTheRate) {
  const UnitError e = flops_rate_error("989 TFLOP");
  EXPECT_EQ(e.what, "'TFLOP' in '989 TFLOP' is a FLOP count unit, not a FLOP rate unit");
  EXPECT_TRUE(starts_with(e.expected, "did you mean 'TFLOP/s'? a FLOP rate such as"));
}

TEST(ParseFlopsRate, WrongCaseSuggestsTheRightSpelling) {
  EXPECT_TRUE(starts_with(flops_rate_error("82.6 TFLOPs").expected, "did you mean 'TFLOPS'? "));
  EXPECT_TRUE(starts_with(flops_rate_error("1 tflop/s").expected, "did you mean 'TFLOP/s'? "));
}

TEST(ParseFlopsRate, OtherErrorsNameTheRate) {
  EXPECT_EQ(flops_rate_error("1e400 FLOP/s").what, "FLOP rate '1e400 FLOP/s' is too large");
  EXPECT_EQ(flops_rate_error("1 TFLOP/s/s").what, "unknown unit 'TFLOP/s/s' in '1 TFLOP/s/s'");
  EXPECT_EQ(flops_rate_error("-5 TFLOPS").what, "negative FLOP rate '-5 TFLOPS'");
  EXPECT_EQ(flops_rate_error("TFLOPS").what, "missing number at the start of 'TFLOPS'");
}

TEST(ParseErrors, EveryErrorSaysWhatIsWrongAndWhatIsAccepted) {
  const std::vector<UnitError> errors = {
      bytes_error(""),           bytes_error("GB"),          bytes_error("-1 B"),
      bytes_error("nan"),        bytes_error("1 B x"),       bytes_error("1 Q"),
      bytes_error("1e99 B"),     seconds_error("1 Q"),       seconds_error("1e999"),
      bandwidth_error("1 Q"),    bandwidth_error("1e999"),   flops_error("1 Q"),
      flops_error("1e999"),      flops_rate_error("1 Q"),    flops_rate_error("1e999"),
  };
  for (const UnitError& e : errors) {
    EXPECT_FALSE(e.what.empty());
    EXPECT_NE(e.expected.find(" such as '"), std::string::npos) << e.expected;
  }
}

// ---------------------------------------------------------------- printing

TEST(FormatBytes, UsesTheLargestPrefixThatKeepsTheNumberAtLeastOne) {
  EXPECT_EQ(format_bytes(Bytes(int64_t{24} << 30), Prefix::kBinary), "24 GiB");
  EXPECT_EQ(format_bytes(Bytes(1'500'000'000'000)), "1.5 TB");
  EXPECT_EQ(format_bytes(Bytes(999)), "999 B");
  EXPECT_EQ(format_bytes(Bytes(1'000)), "1 kB");
  EXPECT_EQ(format_bytes(Bytes(1'536)), "1.536 kB");
  EXPECT_EQ(format_bytes(Bytes(1'023), Prefix::kBinary), "1023 B");
  EXPECT_EQ(format_bytes(Bytes(1'024), Prefix::kBinary), "1 KiB");
  EXPECT_EQ(format_bytes(Bytes(1'536), Prefix::kBinary), "1.5 KiB");
}

TEST(FormatBytes, EachPrefixFamilyHasItsOwnNames) {
  const std::vector<std::string> decimal = {"1 B", "1 kB", "1 MB", "1 GB", "1 TB", "1 PB",
                                            "1 EB"};
  const std::vector<std::string> binary = {"1 B",   "1 KiB", "1 MiB", "1 GiB",
                                           "1 TiB", "1 PiB", "1 EiB"};
  int64_t power_of_ten = 1;
  for (size_t i = 0; i < decimal.size(); ++i) {
    if (i > 0) power_of_ten *= 1000;
    EXPECT_EQ(format_bytes(Bytes(power_of_ten)), decimal[i]);
    EXPECT_EQ(format_bytes(Bytes(int64_t{1} << (10 * i)), Prefix::kBinary), binary[i]);
  }
}

TEST(FormatBytes, PrintsUpToSignificantDigitsWithoutTrailingZeros) {
  const Bytes b(1'234'567);
  EXPECT_EQ(format_bytes(b), "1.235 MB");
  EXPECT_EQ(format_bytes(b, Prefix::kDecimal, 1), "1 MB");
  EXPECT_EQ(format_bytes(b, Prefix::kDecimal, 2), "1.2 MB");
  EXPECT_EQ(format_bytes(b, Prefix::kDecimal, 7), "1.234567 MB");
  EXPECT_EQ(format_bytes(b, Prefix::kDecimal, 9), "1.234567 MB");
  EXPECT_EQ(format_bytes(Bytes(2'000'000)), "2 MB");
  // Fewer digits than the integer part needs: rounded, padded with zeros.
  EXPECT_EQ(format_bytes(Bytes(123), Prefix::kDecimal, 2), "120 B");
}

TEST(FormatBytes, RoundingUpToTheNextPrefixUsesIt) {
  EXPECT_EQ(format_bytes(Bytes(999'949)), "999.9 kB");
  EXPECT_EQ(format_bytes(Bytes(999'999)), "1 MB");                     // 999.999 kB
  EXPECT_EQ(format_bytes(Bytes(1'048'575), Prefix::kBinary), "1 MiB");  // 1023.999 KiB
  EXPECT_EQ(format_bytes(Bytes(1'100), Prefix::kBinary, 1), "1 KiB");
}

TEST(FormatBytes, StaysWhenTheNextPrefixWouldShowLessThanOne) {
  // 1'048'474 B is 1023.9004 KiB, which rounds to 1024 KiB at 4 digits; but
  // in MiB it is 0.99990 and rounds to 0.9999, below 1. So KiB it stays.
  EXPECT_EQ(format_bytes(Bytes(1'048'474), Prefix::kBinary), "1024 KiB");
}

TEST(FormatBytes, SignificantDigitsAreClampedToOneToSeventeen) {
  EXPECT_EQ(format_bytes(Bytes(1'536), Prefix::kBinary, 0), "2 KiB");
  EXPECT_EQ(format_bytes(Bytes(1'536), Prefix::kBinary, -5), "2 KiB");
  EXPECT_EQ(format_bytes(Bytes(1'536), Prefix::kBinary, 100), "1.5 KiB");
}

TEST(FormatBytes, ZeroAndNegativeSizes) {
  EXPECT_EQ(format_bytes(Bytes(0)), "0 B");
  EXPECT_EQ(format_bytes(Bytes(0), Prefix::kBinary), "0 B");
  EXPECT_EQ(format_bytes(Bytes(-1)), "-1 B");
  EXPECT_EQ(format_bytes(Bytes(-1'536), Prefix::kBinary), "-1.5 KiB");
}

TEST(FormatBytes, LargestSizes) {
  EXPECT_EQ(format_bytes(Bytes(kMaxBytes)), "9.223 EB");
  EXPECT_EQ(format_bytes(Bytes(kMaxBytes), Prefix::kBinary), "8 EiB");
  EXPECT_EQ(format_bytes(Bytes(std::numeric_limits<int64_t>::min())), "-9.223 EB");
}

TEST(FormatSeconds, UsesNsMicrosecondsMsAndSecondsBelowAThousandSeconds) {
  EXPECT_EQ(format_seconds(Seconds(7e-6)), "7 \xC2\xB5s");  // U+00B5 MICRO SIGN
  EXPECT_EQ(format_seconds(Seconds(0.0123)), "12.3 ms");
  EXPECT_EQ(format_seconds(Seconds(90)), "90 s");
  EXPECT_EQ(format_seconds(Seconds(1)), "1 s");
  EXPECT_EQ(format_seconds(Seconds(999)), "999 s");
  EXPECT_EQ(format_seconds(Seconds(1e-9)), "1 ns");
  EXPECT_EQ(format_seconds(Seconds(3e-9)), "3 ns");
}

TEST(FormatClock, CountsDownInSecondsMinutesAndHours) {
  EXPECT_EQ(format_clock(Seconds(0.4)), "0 s");
  EXPECT_EQ(format_clock(Seconds(42.5)), "43 s");
  EXPECT_EQ(format_clock(Seconds(59.4)), "59 s");
  EXPECT_EQ(format_clock(Seconds(59.6)), "1m 00s");
  EXPECT_EQ(format_clock(Seconds(185)), "3m 05s");
  EXPECT_EQ(format_clock(Seconds(3600)), "1h 00m");
  EXPECT_EQ(format_clock(Seconds(2 * 3600 + 7 * 60 + 59)), "2h 07m");
  EXPECT_EQ(format_clock(Seconds(731 * 3600.0 + 1)), "731h");
  EXPECT_EQ(format_clock(Seconds(-3)), "0 s");
  EXPECT_EQ(format_clock(Seconds(std::numeric_limits<double>::infinity())), "0 s");
  EXPECT_EQ(format_clock(Seconds(std::nan(""))), "0 s");
}

TEST(FormatSeconds, BelowOneNanosecondStaysInNanoseconds) {
  EXPECT_EQ(format_seconds(Seconds(5e-10)), "0.5 ns");
  EXPECT_EQ(format_seconds(Seconds(1.5e-12)), "0.0015 ns");
}

TEST(FormatSeconds, MinutesFromAThousandSecondsAndHoursFromAnHour) {
  // 999.96 s rounds to 1000 s at 4 digits, so it takes minutes: 16.666 min.
  EXPECT_EQ(format_seconds(Seconds(999.96)), "16.67 min");
  EXPECT_EQ(format_seconds(Seconds(1'000)), "16.67 min");
  EXPECT_EQ(format_seconds(Seconds(1'800)), "30 min");
  EXPECT_EQ(format_seconds(Seconds(3'599)), "59.98 min");
  EXPECT_EQ(format_seconds(Seconds(3'599.97)), "1 h");  // 59.9995 min rounds to 60
  EXPECT_EQ(format_seconds(Seconds(3'600)), "1 h");
  EXPECT_EQ(format_seconds(Seconds(9'000)), "2.5 h");
  EXPECT_EQ(format_seconds(Seconds(1e7)), "2778 h");      // 2777.78 h
  EXPECT_EQ(format_seconds(Seconds(1e9)), "277800 h");    // 277777.8 h, 4 digits
}

TEST(FormatSeconds, RoundingUpInMinutesDoesNotClimbToLessThanAnHour) {
  // 3395 s is 56.6 min, which rounds to 60 min at 1 digit; in hours it is
  // 0.94 h, which would print as "0.9 h", below 1.
  EXPECT_EQ(format_seconds(Seconds(3'395.14), 1), "60 min");
}

TEST(FormatSeconds, DecimalPrefixesShiftTheDecimalPointWithoutRounding) {
  // 0.1 as a double is 0.1000000000000000055511...; its 17 digits, shifted
  // to ms, are exact. Dividing by 1e-3 first would have rounded once more.
  EXPECT_EQ(format_seconds(Seconds(0.1), 17), "100.00000000000001 ms");
  EXPECT_EQ(seconds("100.00000000000001 ms"), Seconds(0.1));
}

TEST(FormatSeconds, ZeroNegativeAndNonFinite) {
  EXPECT_EQ(format_seconds(Seconds(0)), "0 s");
  EXPECT_EQ(format_seconds(Seconds(-0.0)), "0 s");
  EXPECT_EQ(format_seconds(Seconds(-0.0123)), "-12.3 ms");
  EXPECT_EQ(format_seconds(Seconds(std::numeric_limits<double>::infinity())), "inf s");
  EXPECT_EQ(format_seconds(Seconds(-std::numeric_limits<double>::infinity())), "-inf s");
  EXPECT_EQ(format_seconds(Seconds(std::numeric_limits<double>::quiet_NaN())), "nan s");
}

TEST(FormatBandwidth, ByteUnitsPerSecond) {
  EXPECT_EQ(format_bandwidth(BytesPerSecond(25e9)), "25 GB/s");
  EXPECT_EQ(format_bandwidth(BytesPerSecond(7.45e9)), "7.45 GB/s");
  EXPECT_EQ(format_bandwidth(BytesPerSecond(900 * 0x1p30), Prefix::kBinary), "900 GiB/s");
  EXPECT_EQ(format_bandwidth(BytesPerSecond(0.5)), "0.5 B/s");
  EXPECT_EQ(format_bandwidth(BytesPerSecond(0)), "0 B/s");
  EXPECT_EQ(format_bandwidth(BytesPerSecond(-25e9)), "-25 GB/s");
}

TEST(FormatFlops, DecimalPrefixesAndGrowthPastTheLargest) {
  EXPECT_EQ(format_flops(Flops(3.2e12)), "3.2 TFLOP");
  EXPECT_EQ(format_flops(Flops(5)), "5 FLOP");
  EXPECT_EQ(format_flops(Flops(0)), "0 FLOP");
  // 12'345'678.9 EFLOP: no larger prefix, so more digits, never "1.235e7".
  EXPECT_EQ(format_flops(Flops(1.23456789e25)), "12350000 EFLOP");
  EXPECT_EQ(format_flops(Flops(1e30)), "1000000000000 EFLOP");
}

TEST(FormatFlopsRate, PrefixedFlopPerSecond) {
  EXPECT_EQ(format_flops_rate(FlopsPerSecond(989e12)), "989 TFLOP/s");
  EXPECT_EQ(format_flops_rate(FlopsPerSecond(82.6e12)), "82.6 TFLOP/s");
  EXPECT_EQ(format_flops_rate(FlopsPerSecond(1e21)), "1000 EFLOP/s");
  EXPECT_EQ(format_flops_rate(FlopsPerSecond(0)), "0 FLOP/s");
}

// -------------------------------------------------------------- round trip

// Printing to `significant` digits loses at most half a unit in the last
// digit, a relative 0.5 × 10^-(significant-1); the bound here is the looser
// 10^-(significant-1) that the header promises.
double tolerance(double value, int significant) {
  return std::fabs(value) * std::pow(10.0, -(significant - 1));
}

TEST(RoundTrip, ParsingPrintedBytesGivesThemBackWithinThePrintedPrecision) {
  const std::vector<int64_t> counts = {1,           7,          999,         1'000,
                                       1'023,       1'024,      1'536,       123'456,
                                       999'999,     1'048'575,  int64_t{24} << 30,
                                       1'500'000'000'000, 123'456'789'012'345,
                                       int64_t{1} << 60, 4'000'000'000'000'000'000,
                                       kMaxBytes / 2};
  for (Prefix prefix : {Prefix::kDecimal, Prefix::kBinary}) {
    for (int significant = 1; significant <= 8; ++significant) {
      for (int64_t count : counts) {
        const std::string text = format_bytes(Bytes(count), prefix, significant);
        SCOPED_TRACE(text);
        const Bytes parsed = bytes(text);
        EXPECT_NEAR(parsed.as_double(), static_cast<double>(count),
                    tolerance(static_cast<double>(count), significant));
      }
    }
  }
}

TEST(RoundTrip, SeventeenDigitsGiveBackTheExactDouble) {
  // 17 significant digits identify a double, and decimal and binary
  // prefixes are applied exactly both ways. (min and h divide by 60 and
  // 3600, which can round, so durations are left out.)
  for (double value : {0.1, 1.0 / 3.0, 25e9, 900 * 0x1p30, 7.45e9, 82.6e12, 6.02e23}) {
    for (Prefix prefix : {Prefix::kDecimal, Prefix::kBinary}) {
      const std::string text = format_bandwidth(BytesPerSecond(value), prefix, 17);
      EXPECT_EQ(bandwidth(text), BytesPerSecond(value)) << text;
    }
    const std::string count = format_flops(Flops(value), 17);
    EXPECT_EQ(flops(count), Flops(value)) << count;
    const std::string rate = format_flops_rate(FlopsPerSecond(value), 17);
    EXPECT_EQ(flops_rate(rate), FlopsPerSecond(value)) << rate;
  }
  for (double value : {1e-10, 7e-6, 0.0123, 1.0 / 3.0, 999.5}) {
    const std::string text = format_seconds(Seconds(value), 17);
    EXPECT_EQ(seconds(text), Seconds(value)) << text;
  }
}

TEST(RoundTrip, ParsingPrintedDurationsGivesThemBack) {
  for (double value : {1e-12, 3e-9, 7e-6, 1.234567e-4, 0.0123, 1.0, 59.5, 90.0, 999.96, 1'000.0,
                       3'599.0, 3'600.0, 86'400.0, 1e7}) {
    for (int significant = 1; significant <= 8; ++significant) {
      const std::string text = format_seconds(Seconds(value), significant);
      SCOPED_TRACE(text);
      EXPECT_NEAR(seconds(text).value(), value, tolerance(value, significant));
    }
  }
}

TEST(RoundTrip, ParsingPrintedBandwidthsGivesThemBack) {
  for (double value : {0.5, 1.0, 25e9, 900 * 0x1p30, 7.45e9, 1.23456789e15}) {
    for (Prefix prefix : {Prefix::kDecimal, Prefix::kBinary}) {
      for (int significant = 1; significant <= 8; ++significant) {
        const std::string text = format_bandwidth(BytesPerSecond(value), prefix, significant);
        SCOPED_TRACE(text);
        EXPECT_NEAR(bandwidth(text).value(), value, tolerance(value, significant));
      }
    }
  }
}

TEST(RoundTrip, ParsingPrintedFlopsAndRatesGivesThemBack) {
  for (double value : {1.0, 3.2e12, 82.6e12, 989e12, 6.02e23, 1.23456789e25}) {
    for (int significant = 1; significant <= 8; ++significant) {
      const std::string count = format_flops(Flops(value), significant);
      const std::string rate = format_flops_rate(FlopsPerSecond(value), significant);
      SCOPED_TRACE(count + " / " + rate);
      EXPECT_NEAR(flops(count).count(), value, tolerance(value, significant));
      EXPECT_NEAR(flops_rate(rate).value(), value, tolerance(value, significant));
    }
  }
}

// -------------------------------------------------------------- operators

TEST(Operators, TransferTimeIsBytesOverBandwidth) {
  // 50 GB at 25 GB/s: 2 s. And back: 50 GB in 2 s is 25 GB/s.
  EXPECT_EQ(Bytes(50'000'000'000) / BytesPerSecond(25e9), Seconds(2));
  EXPECT_EQ(Bytes(50'000'000'000) / Seconds(2), BytesPerSecond(25e9));
  static_assert(std::is_same_v<decltype(Bytes() / BytesPerSecond()), Seconds>);
  static_assert(std::is_same_v<decltype(Bytes() / Seconds()), BytesPerSecond>);
}

TEST(Operators, ComputeTimeIsFlopsOverRate) {
  // 1978 TFLOP at 989 TFLOP/s: 2 s.
  EXPECT_EQ(Flops(1978e12) / FlopsPerSecond(989e12), Seconds(2));
  EXPECT_EQ(Flops(1978e12) / Seconds(2), FlopsPerSecond(989e12));
  static_assert(std::is_same_v<decltype(Flops() / FlopsPerSecond()), Seconds>);
  static_assert(std::is_same_v<decltype(Flops() / Seconds()), FlopsPerSecond>);
}

TEST(Operators, BytesArithmeticIsExactInteger) {
  static_assert(Bytes(3) + Bytes(4) == Bytes(7));
  static_assert(Bytes(3) - Bytes(4) == Bytes(-1));
  static_assert(Bytes(3) * 4 == Bytes(12));
  static_assert(4 * Bytes(3) == Bytes(12));
  // Dividing a buffer into parts rounds toward zero.
  static_assert(Bytes(7) / 2 == Bytes(3));
  static_assert(Bytes(-7) / 2 == Bytes(-3));
  static_assert(Bytes(3) / Bytes(4) == 0.75);
  static_assert(std::is_same_v<decltype(Bytes() / Bytes()), double>);
  Bytes b(10);
  b += Bytes(5);
  EXPECT_EQ(b, Bytes(15));
  b -= Bytes(20);
  EXPECT_EQ(b, Bytes(-5));
  EXPECT_LT(Bytes(1), Bytes(2));
}

TEST(Operators, DoubleQuantitiesScaleAddAndCompare) {
  static_assert(Seconds(1.5) + Seconds(0.5) == Seconds(2));
  static_assert(Seconds(1.5) - Seconds(0.5) == Seconds(1));
  static_assert(Seconds(1.5) * 2.0 == Seconds(3));
  static_assert(2.0 * Seconds(1.5) == Seconds(3));
  static_assert(Seconds(3) / 2.0 == Seconds(1.5));
  static_assert(Seconds(3) / Seconds(2) == 1.5);
  static_assert(Flops(2) + Flops(3) == Flops(5));
  static_assert(Flops(6) / Flops(3) == 2.0);
  static_assert(BytesPerSecond(2) * 3.0 == BytesPerSecond(6));
  static_assert(BytesPerSecond(6) - BytesPerSecond(2) == BytesPerSecond(4));
  static_assert(FlopsPerSecond(2) + FlopsPerSecond(3) == FlopsPerSecond(5));
  static_assert(FlopsPerSecond(6) / FlopsPerSecond(3) == 2.0);
  static_assert(Seconds(1) < Seconds(2));
  Seconds t(1);
  t += Seconds(2);
  EXPECT_EQ(t, Seconds(3));
  Flops f(1);
  f += Flops(2);
  EXPECT_EQ(f, Flops(3));
}

// Which expressions compile, asked without compiling them.
template <class A, class B>
concept Addable = requires(A a, B b) { a + b; };
template <class A, class B>
concept Subtractable = requires(A a, B b) { a - b; };
template <class A, class B>
concept Multipliable = requires(A a, B b) { a * b; };
template <class A, class B>
concept Divisible = requires(A a, B b) { a / b; };
template <class A, class B>
concept Comparable = requires(A a, B b) { a < b; };

// The checks below are the test: it compiles only if they hold.
TEST(Operators, MeaninglessOperatorsDoNotExist) {
  // Positive controls, so a broken concept cannot pass everything.
  static_assert(Addable<Bytes, Bytes>);
  static_assert(Divisible<Bytes, BytesPerSecond>);
  static_assert(Multipliable<Seconds, double>);
  static_assert(Comparable<Seconds, Seconds>);

  // Different quantities do not add, subtract or compare.
  static_assert(!Addable<Bytes, Seconds>);
  static_assert(!Addable<Bytes, BytesPerSecond>);
  static_assert(!Addable<Flops, FlopsPerSecond>);
  static_assert(!Addable<Flops, Bytes>);
  static_assert(!Addable<BytesPerSecond, FlopsPerSecond>);
  static_assert(!Subtractable<Seconds, Bytes>);
  static_assert(!Subtractable<Flops, Seconds>);
  static_assert(!Comparable<Bytes, Seconds>);
  static_assert(!Comparable<BytesPerSecond, FlopsPerSecond>);
  static_assert(!std::equality_comparable_with<Bytes, Flops>);

  // Bare numbers have no unit, so they neither add to nor compare with one.
  static_assert(!Addable<Seconds, double>);
  static_assert(!Addable<Bytes, int64_t>);
  static_assert(!Comparable<Bytes, int64_t>);
  static_assert(!Comparable<Seconds, double>);

  // Products and quotients without a unit type to land in.
  static_assert(!Multipliable<Bytes, Bytes>);
  static_assert(!Multipliable<Seconds, Seconds>);
  static_assert(!Multipliable<Bytes, Seconds>);
  static_assert(!Divisible<Seconds, Bytes>);
  static_assert(!Divisible<BytesPerSecond, Bytes>);
  static_assert(!Divisible<double, Seconds>);
  static_assert(!Divisible<Bytes, FlopsPerSecond>);
  static_assert(!Divisible<Flops, BytesPerSecond>);

  // Constructors are explicit and there are no conversions out.
  static_assert(!std::is_convertible_v<double, Seconds>);
  static_assert(!std::is_convertible_v<int64_t, Bytes>);
  static_assert(!std::is_convertible_v<Seconds, double>);
  static_assert(!std::is_convertible_v<Bytes, int64_t>);
  static_assert(!std::is_convertible_v<Bytes, Seconds>);
  static_assert(!std::is_convertible_v<BytesPerSecond, FlopsPerSecond>);
  SUCCEED();
}

// --------------------------------------------------------------- literals

TEST(Literals, BinaryAndDecimalSizes) {
  static_assert(5_B == Bytes(5));
  static_assert(1_KiB == Bytes(1'024));
  static_assert(3_MiB == Bytes(int64_t{3} << 20));
  static_assert(24_GiB == Bytes(int64_t{24} << 30));
  static_assert(2_TiB == Bytes(int64_t{2} << 40));
  static_assert(1_kB == Bytes(1'000));
  static_assert(7_MB == Bytes(7'000'000));
  static_assert(3_GB == Bytes(3'000'000'000));
  static_assert(2_TB == Bytes(2'000'000'000'000));
}

TEST(Literals, AgreeWithTheParser) {
  EXPECT_EQ(bytes("24 GiB"), 24_GiB);
  EXPECT_EQ(bytes("1500 GB"), 1500_GB);
  EXPECT_EQ(bytes("1.5 TB"), 1500_GB);
  EXPECT_EQ(bytes("0.5 KiB"), 512_B);
}

}  // namespace
}  // namespace stowage::core
