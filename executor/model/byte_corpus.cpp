// ByteCorpus: reading, splitting at a fixed fraction, and sampling windows
// with SplitMix64 streams keyed by (seed, step, part).
#include "executor/model/byte_corpus.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "core/text_file.h"
#include "executor/model/rng.h"

namespace stowage::executor::model {

double unigram_entropy(std::span<const uint8_t> bytes) {
  std::array<int64_t, 256> counts{};
  for (uint8_t b : bytes) ++counts[b];
  const double n = static_cast<double>(bytes.size());
  double h = 0.0;
  for (int64_t c : counts) {
    if (c == 0) continue;
    const double p = static_cast<double>(c) / n;
    h -= p * std::log(p);
  }
  return h;
}

core::Result<ByteCorpus> ByteCorpus::load(const std::filesystem::path& path, const CorpusOptions& options) {
  core::Result<std::string> text = core::read_input_file(path, core::InputKind::kCorpus);
  if (!text) return std::unexpected(text.error());
  return from_text(std::move(*text), path.string(), options);
}

core::Result<ByteCorpus> ByteCorpus::from_text(std::string text, std::string name, const CorpusOptions& options) {
  if (!(options.held_out_fraction > 0.0 && options.held_out_fraction < 1.0) || options.seq < 1) {
    return core::fail({.where = {.file = name},
                       .what = "corpus options: held-out fraction " + std::to_string(options.held_out_fraction) +
                               ", seq " + std::to_string(options.seq),
                       .expected = "a fraction in (0, 1) and seq >= 1"});
  }
  const size_t total = text.size();
  const auto held_out = static_cast<size_t>(std::ceil(static_cast<double>(total) * options.held_out_fraction));
  const size_t train = total - std::min(held_out, total);
  const auto window = static_cast<size_t>(options.seq + 1);
  if (train < window || total - train < window) {
    return core::fail({.where = {.file = name},
                       .what = "corpus of " + std::to_string(total) + " bytes is too small: training part " +
                               std::to_string(train) + ", held-out part " + std::to_string(total - train),
                       .expected = "each part at least seq + 1 = " + std::to_string(window) + " bytes"});
  }
  std::vector<uint8_t> bytes(text.begin(), text.end());
  return ByteCorpus(std::move(name), std::move(bytes), train, options.seq);
}

ByteCorpus::ByteCorpus(std::string name, std::vector<uint8_t> bytes, size_t train_bytes, int64_t max_seq)
    : name_(std::move(name)), bytes_(std::move(bytes)), train_bytes_(train_bytes), max_seq_(max_seq) {
  train_entropy_ = unigram_entropy(part(CorpusPart::kTrain));
}

std::span<const uint8_t> ByteCorpus::part(CorpusPart p) const {
  const std::span<const uint8_t> all(bytes_);
  return p == CorpusPart::kTrain ? all.first(train_bytes_) : all.subspan(train_bytes_);
}

TokenBatch ByteCorpus::sample(CorpusPart p, uint64_t seed, int64_t step, int64_t batch, int64_t seq) const {
  if (batch < 1 || seq < 1 || seq > max_seq_) {
    throw std::invalid_argument("ByteCorpus::sample: batch " + std::to_string(batch) + ", seq " + std::to_string(seq) +
                                " (expected batch >= 1, 1 <= seq <= " + std::to_string(max_seq_) + ")");
  }
  const std::span<const uint8_t> bytes = part(p);
  const uint64_t part_key = p == CorpusPart::kTrain ? 0 : 1;
  SplitMix64 rng(derive_seed(derive_seed(seed, static_cast<uint64_t>(step)), part_key));
  const uint64_t starts = bytes.size() - static_cast<uint64_t>(seq);  // window start in [0, size - seq - 1]
  TokenBatch out{.batch = batch, .seq = seq};
  out.inputs.reserve(static_cast<size_t>(batch * seq));
  out.targets.reserve(static_cast<size_t>(batch * seq));
  for (int64_t b = 0; b < batch; ++b) {
    const size_t start = rng.below(starts);
    for (int64_t t = 0; t < seq; ++t) {
      out.inputs.push_back(bytes[start + static_cast<size_t>(t)]);
      out.targets.push_back(bytes[start + static_cast<size_t>(t) + 1]);
    }
  }
  return out;
}

}  // namespace stowage::executor::model
