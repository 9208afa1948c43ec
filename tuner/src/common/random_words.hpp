// Random words from a 64-bit state, the same on every platform, so that a seed replays the same
// sample, plan and search everywhere (the std distributions differ between standard libraries).
#pragma once

#include <cstdint>

namespace tiletune::random_words {

/// splitmix64: advances state and returns the next well-mixed word of it.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/// Uniform in [0, n) from a random word: multiply-shift, biased by at most n / 2^64.
inline std::uint64_t below(std::uint64_t random, std::uint64_t n) {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(random) * n) >> 64);
}

}  // namespace tiletune::random_words
