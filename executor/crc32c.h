// CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected), the checksum the
// NVMe block store keeps per block and checkpoints keep per blob, so that
// data read back from disk is never used unverified. Same convention as iSCSI (RFC 3720 B.4), ext4 and
// leveldb's crc32c: initial value ~0, final xor ~0; crc32c("123456789") is
// 0xE3069283.
#pragma once

#include <cstdint>
#include <span>

namespace stowage::executor {

// Which implementation computes the sum. All give the same value.
//   kAuto   the SSE4.2 `crc32` instruction when this CPU has it, else kTable
//   kTable  portable byte-at-a-time table (slicing-by-8), ~1-2 GB/s
//   kSse42  the instruction; only where crc32c_hardware_available()
enum class Crc32cImpl { kAuto, kTable, kSse42 };

// Whether this CPU runs the SSE4.2 crc32 instruction (checked at run time).
[[nodiscard]] bool crc32c_hardware_available();

// The CRC32C of `crc`'s message followed by `data`; crc32c_extend(0, d) is
// the CRC32C of d. Lets a sum be computed over pieces. Throws
// std::invalid_argument for kSse42 on a CPU without it.
[[nodiscard]] uint32_t crc32c_extend(uint32_t crc, std::span<const std::byte> data,
                                     Crc32cImpl impl = Crc32cImpl::kAuto);

[[nodiscard]] inline uint32_t crc32c(std::span<const std::byte> data, Crc32cImpl impl = Crc32cImpl::kAuto) {
  return crc32c_extend(0, data, impl);
}

}  // namespace stowage::executor
