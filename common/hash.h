#pragma once
// Fast non-cryptographic hashing for hash tables, filters and distinct-count sketches.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tessera {

// A strong 64-bit mixer (the murmur3 finalizer); good enough alone for integer keys.
inline uint64_t HashInt64(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  key *= 0xc4ceb9fe1a85ec53ULL;
  key ^= key >> 33;
  return key;
}

// Hashes arbitrary bytes; stable across runs and machines (it is persisted in statistics sketches).
uint64_t HashBytes(const void* data, size_t length, uint64_t seed = 0);

inline uint64_t HashString(std::string_view s) { return HashBytes(s.data(), s.size()); }

inline uint64_t CombineHashes(uint64_t a, uint64_t b) { return HashInt64(a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6))); }

}  // namespace tessera
