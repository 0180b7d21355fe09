// CRC32C against the published check values, and the table and the SSE4.2
// instruction against each other on every length and misalignment that
// exercises their 8-byte main loops and byte tails.
#include "executor/crc32c.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace stowage::executor {
namespace {

constexpr Crc32cImpl kImpls[] = {Crc32cImpl::kAuto, Crc32cImpl::kTable, Crc32cImpl::kSse42};

bool runnable(Crc32cImpl impl) {
  return impl != Crc32cImpl::kSse42 || crc32c_hardware_available();
}

std::span<const std::byte> bytes_of(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

TEST(Crc32c, MatchesPublishedCheckValues) {
  // "123456789" -> 0xE3069283: the check value of CRC-32C (Castagnoli) in
  // the catalogue of parametrised CRCs (reveng) and in RFC 3720's test set.
  // 32 bytes of 0x00, 0xFF and 0..31: RFC 3720, appendix B.4.
  std::array<std::byte, 32> zeros{}, ones{}, ascending{};
  for (size_t i = 0; i < 32; ++i) {
    ones[i] = std::byte{0xFF};
    ascending[i] = static_cast<std::byte>(i);
  }
  for (const Crc32cImpl impl : kImpls) {
    if (!runnable(impl)) continue;
    EXPECT_EQ(crc32c(bytes_of("123456789"), impl), 0xE3069283u);
    EXPECT_EQ(crc32c(zeros, impl), 0x8A9136AAu);
    EXPECT_EQ(crc32c(ones, impl), 0x62A8AB43u);
    EXPECT_EQ(crc32c(ascending, impl), 0x46DD794Eu);
    EXPECT_EQ(crc32c({}, impl), 0u);
  }
}

TEST(Crc32c, TableAndInstructionAgreeOnEveryLengthAndAlignment) {
  // The instruction path runs three chains over 3 x 8192 and 3 x 256 byte
  // stretches, then 8 bytes, then single bytes: lengths around 768 and
  // 24576 and their sums reach every seam.
  if (!crc32c_hardware_available()) GTEST_SKIP() << "this CPU has no SSE4.2 crc32 instruction";
  std::vector<std::byte> data(60000);
  uint32_t x = 12345;
  for (auto& b : data) b = static_cast<std::byte>((x = x * 1103515245u + 12345u) >> 24);
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 1600; n += 7) lengths.push_back(n);
  for (const size_t n :
       {767, 768, 769, 24575, 24576, 24577, 24576 + 768 + 9, 2 * 24576 + 3 * 768 + 15, 59990}) {
    lengths.push_back(n);
  }
  for (size_t offset = 0; offset < 8; ++offset) {
    for (const size_t length : lengths) {
      const auto piece = std::span(data).subspan(offset, length);
      ASSERT_EQ(crc32c(piece, Crc32cImpl::kTable), crc32c(piece, Crc32cImpl::kSse42))
          << "offset " << offset << " length " << length;
    }
  }
}

TEST(Crc32c, ExtendingByPiecesEqualsTheWhole) {
  const auto whole = bytes_of("the quick brown fox jumps over the lazy dog");
  for (const Crc32cImpl impl : kImpls) {
    if (!runnable(impl)) continue;
    for (size_t cut = 0; cut <= whole.size(); ++cut) {
      EXPECT_EQ(crc32c_extend(crc32c(whole.first(cut), impl), whole.subspan(cut), impl), crc32c(whole, impl));
    }
  }
}

}  // namespace
}  // namespace stowage::executor
