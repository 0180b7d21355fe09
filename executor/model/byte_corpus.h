// Byte-level training data: a text whose bytes are the tokens (vocab 256),
// split into a training part and a held-out tail, with deterministic batch
// sampling and the unigram entropy the trained model must beat.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "core/diagnostic.h"
#include "core/units.h"

namespace stowage::executor::model {

struct CorpusOptions {
  double held_out_fraction = 0.1;  // the last 10% of the bytes, in (0, 1)
  int64_t seq = 256;               // longest sequence sampled; each part needs seq + 1 bytes
};

enum class CorpusPart { kTrain, kHeldOut };

// A micro-batch of token ids: `batch` windows of seq + 1 consecutive bytes,
// inputs the first seq, targets the last seq (targets[b, t] = inputs[b, t + 1]).
struct TokenBatch {
  int64_t batch = 0;
  int64_t seq = 0;
  std::vector<int32_t> inputs;   // [batch, seq]
  std::vector<int32_t> targets;  // [batch, seq]
};

class ByteCorpus {
 public:
  // The bytes of a regular file of at most the corpus limit (2 GiB: it is
  // held in memory, twice while split; STOWAGE_MAX_CORPUS_BYTES overrides it,
  // core/text_file.h). A file that
  // cannot be read, is not a regular file (a FIFO, /dev/zero, a directory:
  // refused before reading, issue 12), is larger, or is too small for both
  // parts to hold seq + 1 bytes, gives a diagnostic naming it.
  static core::Result<ByteCorpus> load(const std::filesystem::path& path, const CorpusOptions& options = {});
  // The same from bytes in memory; `name` stands for the file in diagnostics.
  static core::Result<ByteCorpus> from_text(std::string text, std::string name, const CorpusOptions& options = {});

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] std::span<const uint8_t> part(CorpusPart part) const;
  // Unigram entropy of the training bytes in nats: the loss of the best
  // model that ignores context.
  [[nodiscard]] double train_unigram_entropy() const { return train_entropy_; }

  // `batch` windows at positions drawn uniformly from the part, a function
  // of (seed, step, part) only. 1 <= seq <= options.seq. Throws
  // std::invalid_argument otherwise (a caller's bug).
  [[nodiscard]] TokenBatch sample(CorpusPart part, uint64_t seed, int64_t step, int64_t batch, int64_t seq) const;

 private:
  ByteCorpus(std::string name, std::vector<uint8_t> bytes, size_t train_bytes, int64_t max_seq);

  std::string name_;
  std::vector<uint8_t> bytes_;
  size_t train_bytes_ = 0;
  int64_t max_seq_ = 0;
  double train_entropy_ = 0.0;
};

// -sum p ln p over the byte frequencies of `bytes`, in nats; 0 for none.
[[nodiscard]] double unigram_entropy(std::span<const uint8_t> bytes);

}  // namespace stowage::executor::model
