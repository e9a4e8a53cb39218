#pragma once
// A small, fast, seedable PRNG (xoshiro256**, its state expanded from the seed by splitmix64): the policy
// enforcer's draws and the SSB generator's. Not thread-safe: one per thread. std::random_device per draw (as
// Quickstep did) costs microseconds; this costs nanoseconds and makes tests and generated data reproducible.
// Header-only, so the standard-library-only SSB generator can use it without linking common.

#include <cstdint>

namespace tessera {

class FastRandom {
 public:
  explicit FastRandom(uint64_t seed) {
    // splitmix64 expands the seed into the 256-bit state (never all zero).
    for (uint64_t& word : state_) {
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      word = z ^ (z >> 31);
    }
  }

  uint64_t Next() {
    const uint64_t result = Rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = Rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, 1).
  double NextDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace tessera
