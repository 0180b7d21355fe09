// CRC32C (Castagnoli), the checksum each checkpoint blob carries so that a
// flipped bit on disk is caught at load. Our own implementation (no external
// library): slicing-by-8 tables, and the SSE4.2 crc32 instruction where the
// CPU has it, which keeps checksumming hundreds of MB far below disk time.
// executor/nvme/crc32c.h computes the same function; this copy lives in its
// own namespace so the checkpoint library need not link liburing. The two
// should become one shared file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace stowage::executor::checkpoint_detail {

// CRC32C of `data` continuing from `previous`, the CRC of the bytes before
// it (0 for none), so crc32c(b, crc32c(a)) == crc32c(a followed by b).
// Same definition as iSCSI (RFC 3720 §B.4): crc32c("123456789") == 0xE3069283.
[[nodiscard]] uint32_t crc32c(std::span<const std::byte> data, uint32_t previous = 0);

// The table-driven path alone, for comparing against the hardware path.
[[nodiscard]] uint32_t crc32c_portable(std::span<const std::byte> data, uint32_t previous);

}  // namespace stowage::executor::checkpoint_detail
