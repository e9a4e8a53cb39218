#pragma once
// Bit-level helpers for validity bitmaps (bit i set = row i is valid, i.e. not NULL).

#include <cstddef>
#include <cstdint>

namespace tessera {

inline size_t BitmapBytes(size_t bits) { return (bits + 7) / 8; }
inline bool GetBit(const uint8_t* bitmap, size_t i) { return (bitmap[i >> 3] >> (i & 7)) & 1; }
inline void SetBit(uint8_t* bitmap, size_t i) { bitmap[i >> 3] |= static_cast<uint8_t>(1u << (i & 7)); }
inline void ClearBit(uint8_t* bitmap, size_t i) { bitmap[i >> 3] &= static_cast<uint8_t>(~(1u << (i & 7))); }

}  // namespace tessera
