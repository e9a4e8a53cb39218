#include "relational_operators/key_hashing.h"

#include <cstring>

#include "common/hash.h"

namespace tessera {
namespace {

template <typename T>
uint64_t HashValue(const T& value) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    // Short strings (flags, codes, CHAR(1) as in TPC-H Q1's group keys) as one word: the general byte hash costs
    // more than the rest of a group lookup. Key hashes live only in memory (tables, filters), never on disk.
    // The bytes are read with fixed-size loads (a memcpy of a variable size was a libc call whose stores the
    // next load waited for: half of TPC-H Q1's hashing): 4-7 bytes as the first and the last four
    // (overlapping), 1-3 as the first, middle and last byte; with the size, they determine the value. Equal
    // hashes are never taken for equal strings (callers compare the values), so mixing the size in may collide.
    const size_t size = value.size();
    if (size <= 7) {
      const auto* p = reinterpret_cast<const uint8_t*>(value.data());
      uint64_t word = 0;
      if (size >= 4) {
        uint32_t first, last;
        std::memcpy(&first, p, 4);
        std::memcpy(&last, p + size - 4, 4);
        word = first | (static_cast<uint64_t>(last) << 32);
      } else if (size > 0) {
        word = p[0] | (static_cast<uint64_t>(p[size / 2]) << 8) | (static_cast<uint64_t>(p[size - 1]) << 16);
      }
      return HashInt64(word ^ (static_cast<uint64_t>(size) << 56));
    }
    return HashString(value);
  } else if constexpr (sizeof(T) == 16) {
    uint64_t words[2];
    std::memcpy(words, &value, 16);
    return HashInt64(words[0] ^ HashInt64(words[1]));
  } else if constexpr (std::is_same_v<T, double>) {
    double normalized = value == 0.0 ? 0.0 : value;  // -0.0 equals 0.0
    uint64_t bits;
    std::memcpy(&bits, &normalized, 8);
    return HashInt64(bits);
  } else {
    return HashIntegerKey(static_cast<int64_t>(value));
  }
}

template <typename T>
void HashTyped(const ColumnVector& vector, const SelectionVector* selection, uint32_t size, bool first,
               uint64_t* hashes) {
  const T* values = vector.values<T>();
  auto hash_row = [&](uint32_t i) {
    uint64_t h = vector.IsNull(i) ? 0x5bd1e995ULL : HashValue(values[i]);
    hashes[i] = first ? h : CombineHashes(hashes[i], h);
  };
  if (selection == nullptr) {
    for (uint32_t i = 0; i < size; ++i) hash_row(i);
  } else {
    for (uint32_t s = 0; s < selection->count; ++s) hash_row(selection->rows[s]);
  }
}

template <typename T>
bool EqualTyped(const ColumnVector& vector, uint32_t row, const BlockView& block, int column, uint32_t block_row) {
  T a = vector.values<T>()[row];
  T b;
  std::memcpy(&b, block.Values<uint8_t>(column) + static_cast<size_t>(block_row) * sizeof(T), sizeof(T));
  return a == b;
}

}  // namespace

void HashVectorRows(const ColumnVector& vector, uint32_t size, bool first, uint64_t* hashes) {
  HashSelectedRows(vector, nullptr, size, first, hashes);
}

void HashSelectedRows(const ColumnVector& vector, const SelectionVector* selection, uint32_t size, bool first,
                      uint64_t* hashes) {
  const Type& type = vector.type();
  switch (type.id()) {
    case TypeId::kBoolean:
      HashTyped<uint8_t>(vector, selection, size, first, hashes);
      break;
    case TypeId::kInteger:
    case TypeId::kDate:
      HashTyped<int32_t>(vector, selection, size, first, hashes);
      break;
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
      HashTyped<int64_t>(vector, selection, size, first, hashes);
      break;
    case TypeId::kDouble:
      HashTyped<double>(vector, selection, size, first, hashes);
      break;
    case TypeId::kDecimal:
      if (type.IsWideDecimal()) HashTyped<int128>(vector, selection, size, first, hashes);
      else HashTyped<int64_t>(vector, selection, size, first, hashes);
      break;
    case TypeId::kInterval:
      HashTyped<int128>(vector, selection, size, first, hashes);
      break;
    case TypeId::kChar:
    case TypeId::kVarchar:
      HashTyped<std::string_view>(vector, selection, size, first, hashes);
      break;
    case TypeId::kNull: {
      const uint32_t rows = selection != nullptr ? selection->count : size;
      for (uint32_t s = 0; s < rows && first; ++s) hashes[selection != nullptr ? selection->rows[s] : s] = 0;
      break;
    }
  }
}

bool VectorValueEqualsBlockValue(const ColumnVector& vector, uint32_t row, const BlockView& block, int column,
                                 uint32_t block_row) {
  const Type& type = vector.type();
  switch (type.id()) {
    case TypeId::kBoolean:
      return EqualTyped<uint8_t>(vector, row, block, column, block_row);
    case TypeId::kInteger:
    case TypeId::kDate:
      return EqualTyped<int32_t>(vector, row, block, column, block_row);
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
      return EqualTyped<int64_t>(vector, row, block, column, block_row);
    case TypeId::kDouble:
      return EqualTyped<double>(vector, row, block, column, block_row);
    case TypeId::kDecimal:
      return type.IsWideDecimal() ? EqualTyped<int128>(vector, row, block, column, block_row)
                                  : EqualTyped<int64_t>(vector, row, block, column, block_row);
    case TypeId::kInterval: {
      Interval a = vector.values<Interval>()[row];
      Interval b;
      std::memcpy(&b, block.Values<uint8_t>(column) + static_cast<size_t>(block_row) * sizeof(Interval),
                  sizeof(Interval));
      return a == b;
    }
    case TypeId::kChar:
    case TypeId::kVarchar:
      return vector.strings()[row] == block.GetString(column, block_row);
    case TypeId::kNull:
      return false;
  }
  return false;
}

namespace {

template <int kWidth>
void GatherFixedFromVector(const ColumnVector& from, const uint32_t* rows, uint32_t count, ColumnVector* to) {
  const uint8_t* source = from.values<uint8_t>();
  uint8_t* target = to->mutable_values<uint8_t>();
  for (uint32_t i = 0; i < count; ++i) std::memcpy(target + i * kWidth, source + rows[i] * kWidth, kWidth);
}

// Rows are scattered over the build side's blocks (join gathers), so each value is a cache miss: prefetch this
// many rows ahead to overlap them.
constexpr uint32_t kGatherPrefetchDistance = 16;

template <int kWidth>
void GatherFixedFromBlocks(const BlockView* const* blocks, const uint32_t* block_rows, uint32_t count, int column,
                           ColumnVector* to) {
  uint8_t* target = to->mutable_values<uint8_t>();
  for (uint32_t i = 0; i < count; ++i) {
    if (i + kGatherPrefetchDistance < count) {
      const uint32_t ahead = i + kGatherPrefetchDistance;
      __builtin_prefetch(blocks[ahead]->Values<uint8_t>(column) + static_cast<size_t>(block_rows[ahead]) * kWidth);
    }
    std::memcpy(target + i * kWidth, blocks[i]->Values<uint8_t>(column) + static_cast<size_t>(block_rows[i]) * kWidth,
                kWidth);
  }
}

}  // namespace

void GatherVectorValues(const ColumnVector& from, const uint32_t* rows, uint32_t count, ColumnVector* to) {
  if (from.has_nulls()) {
    for (uint32_t i = 0; i < count; ++i) {
      if (from.IsNull(rows[i])) to->SetNull(i);
    }
  }
  if (to->type().IsString()) {
    const std::string_view* source = from.strings();
    std::string_view* target = to->mutable_strings();
    for (uint32_t i = 0; i < count; ++i) target[i] = source[rows[i]];
    return;
  }
  switch (to->type().FixedWidth()) {
    case 1:
      GatherFixedFromVector<1>(from, rows, count, to);
      break;
    case 4:
      GatherFixedFromVector<4>(from, rows, count, to);
      break;
    case 8:
      GatherFixedFromVector<8>(from, rows, count, to);
      break;
    case 16:
      GatherFixedFromVector<16>(from, rows, count, to);
      break;
    default:
      break;
  }
}

void GatherBlockValues(const BlockView* const* blocks, const uint32_t* block_rows, uint32_t count, int column,
                       ColumnVector* to) {
  for (uint32_t i = 0; i < count; ++i) {
    if (blocks[i]->IsNull(column, block_rows[i])) to->SetNull(i);
  }
  if (to->type().IsString()) {
    std::string_view* target = to->mutable_strings();
    for (uint32_t i = 0; i < count; ++i) {
      if (i + kGatherPrefetchDistance < count) {
        const uint32_t ahead = i + kGatherPrefetchDistance;
        __builtin_prefetch(blocks[ahead]->StringOffsets(column) + block_rows[ahead]);
      }
      target[i] = blocks[i]->GetString(column, block_rows[i]);
    }
    return;
  }
  switch (to->type().FixedWidth()) {
    case 1:
      GatherFixedFromBlocks<1>(blocks, block_rows, count, column, to);
      break;
    case 4:
      GatherFixedFromBlocks<4>(blocks, block_rows, count, column, to);
      break;
    case 8:
      GatherFixedFromBlocks<8>(blocks, block_rows, count, column, to);
      break;
    case 16:
      GatherFixedFromBlocks<16>(blocks, block_rows, count, column, to);
      break;
    default:
      break;
  }
}

}  // namespace tessera
