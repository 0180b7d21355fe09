// synthetic_text.h. A sentence is
//   Subject Verb Object [Preposition Object] [Adverb] ["," Conjunction Subject Verb Object] "."
// Subject: a name or a noun phrase; a noun phrase: determiner, optional
// adjective, noun. Words are drawn with a skew towards the start of each
// list (u^2 scaling, roughly Zipf-like), and 80% of verbs come from the
// five the subject's noun prefers, 80% of objects from the six the verb
// prefers.
#include "executor/model/synthetic_text.h"

#include <string_view>

#include "executor/model/rng.h"

namespace stowage::executor::model {
namespace {


constexpr std::string_view kNouns[] = {
    "ship",    "captain", "sailor",  "harbor", "cargo",  "crate",  "river",   "garden",  "house",  "door",
    "window",  "table",   "chair",   "book",   "letter", "map",    "road",    "bridge",  "tower",  "city",
    "village", "market",  "child",   "woman",  "man",    "friend", "teacher", "doctor",  "farmer", "baker",
    "dog",     "cat",     "horse",   "bird",   "fish",   "tree",   "flower",  "stone",   "box",    "basket",
    "lamp",    "clock",   "coat",    "hat",    "boat",   "wagon",  "train",   "station", "school", "office",
    "kitchen", "room",    "island",  "forest", "hill",   "field",  "storm",   "rope",    "sail",   "anchor"};
constexpr std::string_view kVerbs[] = {
    "saw",     "found",  "made",   "took",    "gave",    "kept",   "held",   "brought", "built",  "moved",
    "carried", "loaded", "opened", "closed",  "watched", "painted", "followed", "wanted", "needed", "liked",
    "cleaned", "counted", "lifted", "pushed", "pulled",  "chose",  "sold",   "bought",  "met",    "left",
    "called",  "helped", "fixed",  "stored",  "packed",  "washed", "checked", "mended", "hid",    "drew"};
constexpr std::string_view kAdjectives[] = {
    "small", "large", "old",   "new",   "good",   "little", "long",   "young", "big",    "high",
    "red",   "blue",  "green", "dark",  "bright", "quiet",  "heavy",  "light", "warm",   "cold",
    "early", "late",  "strong", "simple", "full", "empty",  "wooden", "narrow", "wide", "happy",
    "careful", "busy", "tired", "clean", "broken", "open"};
constexpr std::string_view kAdverbs[] = {"quickly", "slowly", "carefully", "quietly", "often",   "again",  "soon",
                                         "early",   "later",  "together",  "finally", "suddenly", "gladly", "twice"};
constexpr std::string_view kDeterminers[] = {"the", "the", "the", "a", "this", "that", "every", "one", "her", "his"};
constexpr std::string_view kPrepositions[] = {"in",   "on",   "near",   "under", "behind", "across", "with",
                                              "from", "into", "over",   "beside", "after", "before", "along"};
constexpr std::string_view kNames[] = {"Anna", "Ben",  "Clara", "David", "Elena", "Frank", "Grace", "Henry",
                                       "Iris", "Jack", "Karl",  "Lena",  "Maria", "Noah",  "Olga",  "Peter"};
constexpr std::string_view kConjunctions[] = {"and", "but", "so", "while", "because"};

class Writer {
 public:
  explicit Writer(uint64_t seed) : rng_(seed) {}

  void paragraph(std::string& out) {
    const uint64_t sentences = 3 + rng_.below(5);
    for (uint64_t i = 0; i < sentences; ++i) {
      if (i > 0) out += ' ';
      sentence(out);
    }
    out += '\n';
  }

 private:
  // Index into a list of n, skewed towards the front.
  size_t skewed(size_t n) {
    const double u = rng_.uniform();
    return static_cast<size_t>(u * u * static_cast<double>(n));
  }
  // One of `width` indices that `key` prefers (80%), else any.
  size_t preferred(size_t key, size_t stride, size_t width, size_t n) {
    if (rng_.uniform() < 0.8) return (key * stride + rng_.below(width)) % n;
    return skewed(n);
  }
  bool chance(double p) { return rng_.uniform() < p; }

  void word(std::string& out, std::string_view w) {
    if (capitalize_) {
      out += static_cast<char>(w[0] - ('a' <= w[0] && w[0] <= 'z' ? 'a' - 'A' : 0));
      out += w.substr(1);
      capitalize_ = false;
    } else {
      out += ' ';
      out += w;
    }
  }

  // Determiner, optional adjective, noun; returns the noun's index.
  size_t noun_phrase(std::string& out, size_t noun) {
    std::string_view det = kDeterminers[skewed(std::size(kDeterminers))];
    std::string_view adjective = chance(0.4) ? kAdjectives[skewed(std::size(kAdjectives))] : std::string_view();
    const std::string_view next = adjective.empty() ? kNouns[noun] : adjective;
    if (det == "a" && std::string_view("aeiou").find(next[0]) != std::string_view::npos) det = "an";
    word(out, det);
    if (!adjective.empty()) word(out, adjective);
    word(out, kNouns[noun]);
    return noun;
  }

  // Subject, verb, object; the subject's noun (a name counts as its own
  // index) steers the verb, the verb steers the object.
  void clause(std::string& out) {
    size_t key = 0;
    if (chance(0.3)) {
      key = skewed(std::size(kNames));
      word(out, kNames[key]);
    } else {
      key = noun_phrase(out, skewed(std::size(kNouns)));
    }
    const size_t verb = preferred(key, 7, 5, std::size(kVerbs));
    word(out, kVerbs[verb]);
    noun_phrase(out, preferred(verb, 11, 6, std::size(kNouns)));
  }

  void sentence(std::string& out) {
    capitalize_ = true;
    clause(out);
    if (chance(0.35)) {
      word(out, kPrepositions[skewed(std::size(kPrepositions))]);
      noun_phrase(out, skewed(std::size(kNouns)));
    }
    if (chance(0.25)) word(out, kAdverbs[skewed(std::size(kAdverbs))]);
    if (chance(0.2)) {
      out += ',';
      word(out, kConjunctions[skewed(std::size(kConjunctions))]);
      clause(out);
    }
    out += '.';
  }

  SplitMix64 rng_;
  bool capitalize_ = false;
};

}  // namespace

std::string synthetic_text(const SyntheticTextOptions& options) {
  const size_t bytes = options.bytes > 0 ? static_cast<size_t>(options.bytes) : 0;
  std::string out;
  out.reserve(bytes + 1024);
  Writer writer(options.seed);
  while (out.size() < bytes) writer.paragraph(out);
  out.resize(bytes);
  return out;
}

}  // namespace stowage::executor::model
