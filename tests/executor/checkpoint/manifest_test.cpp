#include "executor/checkpoint/manifest.h"

#include <gtest/gtest.h>

#include <cstdint>
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
  EXPECT_TRUE(manifest_to_text(sample()).starts_with("{\n  \"format\": \"stowage/checkpoint/v1\",\n"));
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
  const auto parsed = parse_manifest(text, "m.json");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error()[0].what.find("blobs[1]: key 'crc32c' is not an integer from 0 to 4294967295"),
            std::string::npos)
      << core::to_string(parsed.error());
}

// Issue 12: a manifest nested 100,000 deep overflowed the stack. It is
// refused before parsing, with the place where the cap is passed.
TEST(Manifest, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = R"({"format": "stowage/checkpoint/v1", "metadata": )" + std::string(100000, '[') +
                           std::string(100000, ']') + "}";
  const auto parsed = parse_manifest(deep, "m.json");
  ASSERT_FALSE(parsed);
  EXPECT_NE(core::to_string(parsed.error()).find("m.json:1:"), std::string::npos);
  EXPECT_NE(core::to_string(parsed.error()).find("nested deeper than 64"), std::string::npos);
}

}  // namespace
}  // namespace stowage::executor
