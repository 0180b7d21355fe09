// Small deterministic random numbers for parameter init, batch sampling and
// the text generator. std:: distributions leave their algorithms to each
// standard library, so the same seed gives different numbers under
// libstdc++ and libc++; these give the same numbers everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace stowage::executor::model {

// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014), constants from Vigna's reference splitmix64.c.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n), n >= 1. The bias of scaling a 53-bit uniform
  // is below n / 2^53: nothing for the sizes used here.
  uint64_t below(uint64_t n) { return static_cast<uint64_t>(uniform() * static_cast<double>(n)); }

  // Standard normal by the Box-Muller transform (Box and Muller 1958), one
  // value per two uniforms; 1 - u keeps the logarithm's argument in (0, 1].
  double normal() {
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t state_;
};

// A seed for an independent stream derived from a seed and a stream index
// (a layer, a step): one SplitMix64 output of the combination.
inline uint64_t derive_seed(uint64_t seed, uint64_t stream) {
  return SplitMix64(seed ^ (stream * 0xd1b54a32d192ed03ull)).next();
}

}  // namespace stowage::executor::model
