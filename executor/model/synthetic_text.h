// English-like training text generated from a seed, so the executor has
// data to learn from without a download. Sentences follow a small grammar
// over a built-in vocabulary of about 200 words, and each subject prefers
// a few verbs and each verb a few objects: structure beyond byte and word
// frequencies that a model can learn and a unigram model cannot.
#pragma once

#include <cstdint>
#include <string>

namespace stowage::executor::model {

struct SyntheticTextOptions {
  uint64_t seed = 1;
  int64_t bytes = 4 << 20;  // exact length of the text, 4 MiB by default
};

// Printable ASCII words, spaces, punctuation and '\n' between paragraphs.
// The same options give the same text on every platform.
[[nodiscard]] std::string synthetic_text(const SyntheticTextOptions& options);

}  // namespace stowage::executor::model
