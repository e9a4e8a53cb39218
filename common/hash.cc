#include "common/hash.h"

#include <cstring>

namespace tessera {

uint64_t HashBytes(const void* data, size_t length, uint64_t seed) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  if (length <= 8) {  // short keys (flags, codes, small names): one word, one mix
    uint64_t word = 0;
    std::memcpy(&word, bytes, length);
    return HashInt64(word ^ seed ^ (length * 0x9e3779b97f4a7c15ULL));
  }
  uint64_t h = seed ^ (length * 0x9e3779b97f4a7c15ULL);
  size_t i = 0;
  for (; i + 8 <= length; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, 8);
    // One multiply per word; the final HashInt64 below does the avalanche.
    h = (h ^ word) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, bytes + i, length - i);
  return HashInt64(h ^ tail ^ (length << 56));
}

}  // namespace tessera
