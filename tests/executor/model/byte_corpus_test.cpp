// ByteCorpus: split sizes, entropy, deterministic windows, targets shifted
// by one, and diagnostics that name the file.
#include "executor/model/byte_corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace stowage::executor::model {
namespace {

std::string counting_text(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
  return s;
}

ByteCorpus must(core::Result<ByteCorpus> r) {
  if (!r) throw std::runtime_error(core::to_string(r.error()));
  return std::move(*r);
}

TEST(ByteCorpus, UnigramEntropyOfKnownStrings) {
  const std::string aabb = "aabb";
  // Two bytes at 1/2 each: ln 2.
  EXPECT_DOUBLE_EQ(unigram_entropy({reinterpret_cast<const uint8_t*>(aabb.data()), aabb.size()}), std::log(2.0));
  const std::string aaab = "aaab";
  // -(3/4 ln 3/4 + 1/4 ln 1/4) = 0.5623351446...
  EXPECT_NEAR(unigram_entropy({reinterpret_cast<const uint8_t*>(aaab.data()), aaab.size()}), 0.5623351446188083,
              1e-15);
  EXPECT_EQ(unigram_entropy({}), 0.0);
}

TEST(ByteCorpus, HeldOutIsTheLastTenPercent) {
  const ByteCorpus c = must(ByteCorpus::from_text(counting_text(1000), "mem", {.seq = 16}));
  EXPECT_EQ(c.part(CorpusPart::kTrain).size(), 900u);
  EXPECT_EQ(c.part(CorpusPart::kHeldOut).size(), 100u);
  EXPECT_EQ(c.part(CorpusPart::kHeldOut)[0], 'a' + 900 % 26);
  // The 26 letters of the first 900 bytes: 16 appear 35 times, 10 appear 34
  // times (900 = 26 * 34 + 16); all near-uniform, so close to ln 26.
  EXPECT_NEAR(c.train_unigram_entropy(), std::log(26.0), 1e-3);
}

TEST(ByteCorpus, BatchesAreDeterministicAndTargetsAreShiftedInputs) {
  const ByteCorpus c = must(ByteCorpus::from_text(counting_text(5000), "mem", {.seq = 32}));
  const TokenBatch a = c.sample(CorpusPart::kTrain, 7, 3, 4, 32);
  const TokenBatch b = c.sample(CorpusPart::kTrain, 7, 3, 4, 32);
  const TokenBatch next = c.sample(CorpusPart::kTrain, 7, 4, 4, 32);
  ASSERT_EQ(a.inputs.size(), 128u);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_NE(a.inputs, next.inputs);
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    // In the alphabet cycle the next byte is the next letter.
    EXPECT_EQ(a.targets[i], 'a' + (a.inputs[i] - 'a' + 1) % 26);
    if (i % 32 != 31) {
      EXPECT_EQ(a.targets[i], a.inputs[i + 1]);
    }
  }
}

TEST(ByteCorpus, HeldOutWindowsStayInTheHeldOutPart) {
  std::string text(900, 'x');
  text += std::string(100, 'y');
  const ByteCorpus c = must(ByteCorpus::from_text(text, "mem", {.seq = 16}));
  for (int step = 0; step < 20; ++step) {
    const TokenBatch b = c.sample(CorpusPart::kHeldOut, 1, step, 3, 16);
    for (int32_t t : b.inputs) ASSERT_EQ(t, 'y');
    for (int32_t t : b.targets) ASSERT_EQ(t, 'y');
  }
}

TEST(ByteCorpus, TooSmallOrMissingFilesAreNamed) {
  const core::Result<ByteCorpus> small = ByteCorpus::from_text(counting_text(100), "tiny.txt", {.seq = 16});
  ASSERT_FALSE(small);
  const std::string text = core::to_string(small.error());
  EXPECT_NE(text.find("tiny.txt"), std::string::npos) << text;
  EXPECT_NE(text.find("seq + 1 = 17"), std::string::npos) << text;
  const core::Result<ByteCorpus> missing = ByteCorpus::load("/nonexistent/corpus.txt");
  ASSERT_FALSE(missing);
  EXPECT_NE(core::to_string(missing.error()).find("/nonexistent/corpus.txt"), std::string::npos);
}

TEST(ByteCorpus, LoadsAFile) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "stowage_byte_corpus_test.txt";
  std::ofstream(path, std::ios::binary) << counting_text(2000);
  const ByteCorpus c = must(ByteCorpus::load(path, {.seq = 64}));
  std::filesystem::remove(path);
  EXPECT_EQ(c.name(), path.string());
  EXPECT_EQ(c.part(CorpusPart::kTrain).size(), 1800u);
}

TEST(ByteCorpus, SampleRejectsALongerSequenceThanLoadedFor) {
  const ByteCorpus c = must(ByteCorpus::from_text(counting_text(1000), "mem", {.seq = 16}));
  EXPECT_THROW((void)c.sample(CorpusPart::kTrain, 1, 0, 1, 17), std::invalid_argument);
}

}  // namespace
}  // namespace stowage::executor::model
