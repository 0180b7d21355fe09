#include "executor/checkpoint/manifest.h"

#include <gtest/gtest.h>

#include "executor/crc32c.h"

#include <cstdint>
#include <string>
#include <stdexcept>

namespace stowage::executor {
namespace {

Manifest sample() {
  return {.metadata_json = R"({"step":200,"seed":1234})",
          .files = {{.file = "blobs.bin", .size = core::Bytes(8200)}},
          .blobs = {{.name = "a",
                     .tier = "gpu",
                     .size = core::Bytes(10),
                     .file = "blobs.bin",
                     .offset = core::Bytes(0),
                     .crc32c = 0xE3069283u},
                    {.name = "b",
                     .tier = "nvme",
                     .size = core::Bytes(8),
                     .file = "blobs.bin",
                     .offset = core::Bytes(8192),
                     .crc32c = 0xFFFFFFFFu}}};
}

// STYLE.md §18: every file Stowage writes starts with its format.
TEST(Manifest, TextStartsWithTheFormat) {
  EXPECT_TRUE(manifest_to_text(sample()).starts_with("{\n  \"format\": \"stowage/checkpoint/v2\",\n"));
}

TEST(Manifest, RoundTripsEveryField) {
  const Manifest m = sample();
  const auto parsed = parse_manifest(manifest_to_text(m), "manifest.json");
  ASSERT_TRUE(parsed) << core::to_string(parsed.error());
  EXPECT_EQ(parsed->metadata_json, m.metadata_json);
  ASSERT_EQ(parsed->files.size(), 1u);
  EXPECT_EQ(parsed->files[0].file, "blobs.bin");
  EXPECT_EQ(parsed->files[0].size, core::Bytes(8200));
  ASSERT_EQ(parsed->blobs.size(), 2u);
  EXPECT_EQ(parsed->blobs[1].name, "b");
  EXPECT_EQ(parsed->blobs[1].tier, "nvme");
  EXPECT_EQ(parsed->blobs[1].size, core::Bytes(8));
  EXPECT_EQ(parsed->blobs[1].offset, core::Bytes(8192));
  EXPECT_EQ(parsed->blobs[0].crc32c, 0xE3069283u);
  EXPECT_EQ(parsed->blobs[1].crc32c, 0xFFFFFFFFu);
}

TEST(Manifest, MetadataMustBeAnObject) {
  Manifest m = sample();
  m.metadata_json = "42";
  EXPECT_THROW((void)manifest_to_text(m), std::invalid_argument);
}

// Blob b (8 bytes at 8192) would end at 8200; with the file listed as 8199
// bytes it lies partly outside, which the parser refuses before any read.
TEST(Manifest, BlobOutsideItsFileIsRefused) {
  Manifest m = sample();
  m.files[0].size = core::Bytes(8199);
  const auto parsed = parse_manifest(manifest_to_text(m), "m.json");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error()[0].to_string(),
            "m.json: blob 'b' ends at byte 8200 of file 'blobs.bin', which has 8199 bytes (blobs inside "
            "their file)");
}

// Issue 12: offset + size near INT64_MAX overflowed while the message was
// made (UBSan). 2 * (2^63 - 1) = 18446744073709551614.
TEST(Manifest, ABlobNearInt64MaxIsRefusedWithoutOverflow) {
  Manifest m = sample();
  m.blobs[1].offset = core::Bytes(INT64_MAX);
  m.blobs[1].size = core::Bytes(INT64_MAX);
  const auto parsed = parse_manifest(manifest_to_text(m), "m.json");
  ASSERT_FALSE(parsed);
  EXPECT_NE(core::to_string(parsed.error()).find("ends at byte 18446744073709551614"), std::string::npos)
      << core::to_string(parsed.error());
}

TEST(Manifest, CrcAbove32BitsIsRefused) {
  std::string text = manifest_to_text(sample());
  text.replace(text.find("4294967295"), 10, "4294967296");
  const auto parsed = parse_manifest(seal_manifest_text(text), "m.json");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error()[0].what.find("blobs[1]: key 'crc32c' is not an integer from 0 to 4294967295"),
            std::string::npos)
      << core::to_string(parsed.error());
}

// Issue 12: a manifest nested 100,000 deep overflowed the stack. It is
// refused before parsing, with the place where the cap is passed.
TEST(Manifest, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = R"({"format": "stowage/checkpoint/v2", "metadata": )" + std::string(100000, '[') +
                           std::string(100000, ']') + "}";
  const auto parsed = parse_manifest(deep, "m.json");
  ASSERT_FALSE(parsed);
  EXPECT_NE(core::to_string(parsed.error()).find("m.json:1:"), std::string::npos);
  EXPECT_NE(core::to_string(parsed.error()).find("nested deeper than 64"), std::string::npos);
}

// The last key is the CRC32C of every byte before it (docs/formats/checkpoint.md).
TEST(Manifest, EndsWithTheChecksumOfTheBytesBeforeIt) {
  const std::string text = manifest_to_text(sample());
  const size_t key = text.rfind("\"manifest_crc32c\": ");
  ASSERT_NE(key, std::string::npos) << text;
  const std::string before = text.substr(0, key);
  const uint32_t crc = crc32c(std::as_bytes(std::span(before.data(), before.size())));
  EXPECT_EQ(text.substr(key), "\"manifest_crc32c\": " + std::to_string(crc) + "\n}\n");
  EXPECT_TRUE(before.ends_with("],\n  ")) << before;
}

TEST(Manifest, SealingASealedTextChangesNothing) {
  const std::string text = manifest_to_text(sample());
  EXPECT_EQ(seal_manifest_text(text), text);
}

// Issue 12 item 5: every byte of a manifest, flipped in any of three bits,
// is refused (by the checksum, or as JSON that no longer parses), never
// read as another manifest.
TEST(Manifest, EveryFlippedByteIsRefused) {
  const std::string text = manifest_to_text(sample());
  int refused = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    for (const int bit : {0x01, 0x10, 0x80}) {
      std::string flipped = text;
      flipped[i] = static_cast<char>(static_cast<unsigned char>(flipped[i]) ^ bit);
      const auto parsed = parse_manifest(flipped, "m.json");
      EXPECT_FALSE(parsed) << "byte " << i << " xor " << bit << " was accepted";
      refused += parsed ? 0 : 1;
    }
  }
  EXPECT_EQ(refused, static_cast<int>(3 * text.size()));
}

TEST(Manifest, AnEditIsRefusedAtTheChecksum) {
  std::string text = manifest_to_text(sample());
  text.replace(text.find("\"nvme\""), 6, "\"cpu\" ");
  const auto parsed = parse_manifest(text, "m.json");
  ASSERT_FALSE(parsed);
  ASSERT_EQ(parsed.error().size(), 1u);
  const std::string message = parsed.error()[0].to_string();
  EXPECT_NE(message.find("key 'manifest_crc32c': the manifest says "), std::string::npos) << message;
  EXPECT_NE(message.find("corrupt or edited checkpoint manifest"), std::string::npos) << message;
  EXPECT_EQ(parsed.error()[0].where.column, 3);
}

TEST(Manifest, AMissingOrMisplacedChecksumIsRefused) {
  const std::string unsealed = R"({"format": "stowage/checkpoint/v2", "metadata": {}, "files": [], "blobs": []})";
  const auto missing = parse_manifest(unsealed, "m.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(core::to_string(missing.error()).find("key 'manifest_crc32c' is missing"), std::string::npos)
      << core::to_string(missing.error());
  ASSERT_TRUE(parse_manifest(seal_manifest_text(unsealed), "m.json"));
  const std::string first =
      R"({"format": "stowage/checkpoint/v2", "manifest_crc32c": 1, "metadata": {}, "files": [], "blobs": []})";
  const auto misplaced = parse_manifest(first, "m.json");
  ASSERT_FALSE(misplaced);
  EXPECT_NE(core::to_string(misplaced.error()).find("is not the manifest's last key"), std::string::npos)
      << core::to_string(misplaced.error());
}

// Found by manifest_fuzzer: a number past double's range threw
// out_of_range, which escaped parse_manifest.
TEST(Manifest, ANumberPastDoublesRangeIsRefused) {
  const auto parsed = parse_manifest("1e999", "m.json");
  ASSERT_FALSE(parsed);
  EXPECT_NE(core::to_string(parsed.error()).find("m.json:1:1: not valid JSON"), std::string::npos)
      << core::to_string(parsed.error());
}

// A manifest of the format before the checksum is refused, saying why.
TEST(Manifest, AVersionOneManifestIsRefusedSayingWhy) {
  const auto parsed = parse_manifest(
      R"({"format": "stowage/checkpoint/v1", "metadata": {}, "files": [], "blobs": []})", "m.json");
  ASSERT_FALSE(parsed);
  EXPECT_NE(core::to_string(parsed.error()).find("written by an older Stowage, whose manifests carry no checksum"),
            std::string::npos)
      << core::to_string(parsed.error());
}

}  // namespace
}  // namespace stowage::executor
