#include "executor/checkpoint/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace stowage::executor::checkpoint_detail {
namespace {

// The reflected Castagnoli polynomial 0x1EDC6F41 (RFC 3720 §12.1).
constexpr uint32_t kPolynomial = 0x82F63B78u;

using Tables = std::array<std::array<uint32_t, 256>, 8>;

// tables[k][b] is the CRC of byte b followed by k zero bytes: slicing-by-8
// (Kounavis and Berry, "A Systematic Approach to Building High Performance
// Software-based CRC Generators", 2005) folds eight bytes per step.
constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1u) ? (crc >> 1) ^ kPolynomial : crc >> 1;
    t[0][i] = crc;
  }
  for (size_t k = 1; k < 8; ++k) {
    for (size_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu];
  }
  return t;
}

constexpr Tables kTables = make_tables();

uint32_t load_le32(const std::byte* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, sizeof v);  // x86 and the other hosts we build for are little-endian
  return v;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(std::span<const std::byte> data, uint32_t crc) {
  const std::byte* p = data.data();
  size_t n = data.size();
  uint64_t c = crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v = 0;
    std::memcpy(&v, p, sizeof v);
    c = _mm_crc32_u64(c, v);
  }
  auto c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, std::to_integer<uint8_t>(*p));
  return c32;
}

bool has_sse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t crc32c_portable(std::span<const std::byte> data, uint32_t previous) {
  uint32_t crc = ~previous;
  const std::byte* p = data.data();
  size_t n = data.size();
  for (; n >= 8; n -= 8, p += 8) {
    const uint32_t lo = load_le32(p) ^ crc;
    const uint32_t hi = load_le32(p + 4);
    crc = kTables[7][lo & 0xFFu] ^ kTables[6][(lo >> 8) & 0xFFu] ^ kTables[5][(lo >> 16) & 0xFFu] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xFFu] ^ kTables[2][(hi >> 8) & 0xFFu] ^
          kTables[1][(hi >> 16) & 0xFFu] ^ kTables[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) crc = (crc >> 8) ^ kTables[0][(crc ^ std::to_integer<uint32_t>(*p)) & 0xFFu];
  return ~crc;
}

uint32_t crc32c(std::span<const std::byte> data, uint32_t previous) {
#if defined(__x86_64__)
  if (has_sse42()) return ~crc32c_sse42(data, ~previous);
#endif
  return crc32c_portable(data, previous);
}

}  // namespace stowage::executor::checkpoint_detail
