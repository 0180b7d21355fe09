#include "executor/checkpoint/crc32c.h"

#include <gtest/gtest.h>

#include <array>
#include <string_view>
#include <vector>

#include "tests/executor/checkpoint/scratch_dir.h"

namespace stowage::executor::checkpoint_detail {
namespace {

std::span<const std::byte> bytes_of(std::string_view text) {
  return std::as_bytes(std::span(text));
}

// Check values from RFC 3720 §B.4 (iSCSI) and the classic "123456789".
TEST(Crc32c, MatchesPublishedCheckValues) {
  EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u);
  std::array<std::byte, 32> zeros{};
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  std::array<std::byte, 32> ones{};
  ones.fill(std::byte{0xFF});
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  std::array<std::byte, 32> ascending{};
  for (size_t i = 0; i < ascending.size(); ++i) ascending[i] = static_cast<std::byte>(i);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c({}), 0u);
}

// The saver checksums a blob chunk by chunk; the result must equal the CRC
// of the whole.
TEST(Crc32c, ExtendingOverPiecesEqualsTheWhole) {
  const std::vector<std::byte> data = testing::pattern_bytes(1000, 7);
  const std::span<const std::byte> all(data);
  const uint32_t whole = crc32c(all);
  for (size_t cut : {0u, 1u, 7u, 8u, 9u, 500u, 999u, 1000u}) {
    EXPECT_EQ(crc32c(all.subspan(cut), crc32c(all.first(cut))), whole) << "cut at " << cut;
  }
}

// The hardware path (when this CPU has SSE4.2) and the tables agree for
// every length and start alignment around the 8-byte step.
TEST(Crc32c, HardwareAndTablesAgree) {
  const std::vector<std::byte> data = testing::pattern_bytes(200, 3);
  for (size_t start = 0; start < 8; ++start) {
    for (size_t length = 0; length + start <= 100; ++length) {
      const auto piece = std::span(data).subspan(start, length);
      EXPECT_EQ(crc32c(piece, 0x1234u), crc32c_portable(piece, 0x1234u)) << start << "+" << length;
    }
  }
}

}  // namespace
}  // namespace stowage::executor::checkpoint_detail
