#include "storage/block_statistics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/hash.h"

namespace tessera {
namespace {

template <typename T>
void SketchValues(const T* values, uint32_t first, uint32_t count, const uint8_t* validity, const uint64_t* deleted,
                  DistinctSketch* sketch) {
  for (uint32_t i = 0; i < count; ++i) {
    if (validity != nullptr && !GetBit(validity, first + i)) continue;
    if (deleted != nullptr && ((deleted[(first + i) >> 6] >> ((first + i) & 63)) & 1)) continue;
    uint64_t bits[2] = {0, 0};
    std::memcpy(bits, &values[i], sizeof(T));
    sketch->AddHash(HashInt64(bits[0] ^ HashInt64(bits[1])));
  }
}

template <typename T>
void SketchFixed(const BlockView& block, int column, const uint64_t* deleted, DistinctSketch* sketch) {
  const uint8_t* validity = block.Validity(column);
  const uint32_t rows = block.row_count();
  if (!block.IsEncoded(column)) {
    SketchValues(block.Values<T>(column), 0, rows, validity, deleted, sketch);
    return;
  }
  if constexpr (sizeof(T) >= 4) {
    // Frame of reference: decoded a vector at a time (the sketch hashes the physical bits, signed or not).
    using Physical = std::conditional_t<sizeof(T) == 4, int32_t, std::conditional_t<sizeof(T) == 8, int64_t, int128>>;
    constexpr uint32_t kStep = 1024;
    Physical decoded[kStep];
    for (uint32_t first = 0; first < rows; first += kStep) {
      const uint32_t count = std::min(kStep, rows - first);
      block.DecodeFixed<Physical>(column, first, count, decoded);
      SketchValues(decoded, first, count, validity, deleted, sketch);
    }
  }
}

// Bits of the rows of `row_count` that are live (not in `deleted`) and not NULL (set in `validity`, if any), 64
// rows of word `w` at a time; the bits past the last row are clear.
uint64_t LiveNonNullBits(const uint64_t* deleted, const uint8_t* validity, uint32_t row_count, uint32_t w) {
  uint64_t bits = ~deleted[w];
  if (validity != nullptr) {
    uint64_t valid = 0;
    std::memcpy(&valid, validity + w * 8, std::min<size_t>(8, (row_count + 7) / 8 - w * 8));  // little-endian
    bits &= valid;
  }
  if ((w + 1) * 64 > row_count) bits &= (uint64_t{1} << (row_count & 63)) - 1;
  return bits;
}

// The rows of the least and the greatest value among the live, non-NULL rows of a block's column, found by
// `less` (a strict order equal to Value::Compare's on the column's values; the first of equal values wins, as
// UpdateMinMax keeps it), read by `value(row)` in row order; -1 when there is no such row. Words of the deletion
// and validity bitmaps 64 rows at a time, then one step per set bit: no Value per row.
template <typename Read, typename Less>
std::pair<int64_t, int64_t> LiveMinMaxRows(const BlockView& block, int column, const uint64_t* deleted, Read value,
                                           Less less) {
  const uint8_t* validity = block.Validity(column);
  const uint32_t rows = block.row_count();
  int64_t min_row = -1;
  int64_t max_row = -1;
  decltype(value(0)) min{};
  decltype(value(0)) max{};
  for (uint32_t w = 0; w * 64 < rows; ++w) {
    for (uint64_t bits = LiveNonNullBits(deleted, validity, rows, w); bits != 0; bits &= bits - 1) {
      const uint32_t row = w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
      const auto v = value(row);
      if (min_row < 0 || less(v, min)) min = v, min_row = row;
      if (max_row < 0 || less(max, v)) max = v, max_row = row;
    }
  }
  return {min_row, max_row};
}

// A fixed-width column's values as physical T, a vector at a time for a frame-of-reference column.
template <typename T>
class FixedReader {
 public:
  FixedReader(const BlockView& block, int column) : block_(block), column_(column) {
    if (!block.IsEncoded(column)) plain_ = block.Values<T>(column);
  }
  T operator()(uint32_t row) {
    if (plain_ != nullptr) return plain_[row];
    if (row < first_ || row >= first_ + kStep) {  // rows come in increasing order: decode the vector holding it
      first_ = row - row % kStep;
      block_.DecodeFixed<T>(column_, first_, std::min(kStep, block_.row_count() - first_), decoded_);
    }
    return decoded_[row - first_];
  }

 private:
  static constexpr uint32_t kStep = 1024;
  const BlockView& block_;
  int column_;
  const T* plain_ = nullptr;
  uint32_t first_ = 0xFFFFFFFFu - kStep;  // no vector decoded yet
  T decoded_[kStep];
};

// Min and max of the live rows of a block with deletions (ANALYZE): the rows holding them found by the typed
// comparisons of LiveMinMaxRows, then two Values made from those rows. False for a type it does not cover
// (INTERVAL, an encoded column of a type that frame of reference does not encode), which then goes row by row.
bool UpdateLiveMinMax(const BlockView& block, int column, const Type& type, const uint64_t* deleted,
                      ColumnStatistics* stats) {
  std::pair<int64_t, int64_t> rows;
  const bool encoded = block.IsEncoded(column);
  switch (type.id()) {
    case TypeId::kBoolean:
      if (encoded) return false;
      rows = LiveMinMaxRows(
          block, column, deleted, [&](uint32_t r) { return block.Values<uint8_t>(column)[r]; }, std::less<>());
      break;
    case TypeId::kInteger:
    case TypeId::kDate: {
      FixedReader<int32_t> read(block, column);
      rows = LiveMinMaxRows(block, column, deleted, std::ref(read), std::less<>());
      break;
    }
    case TypeId::kBigInt:
    case TypeId::kTimestamp:
    case TypeId::kDecimal:
      if (type.IsWideDecimal()) {
        FixedReader<int128> read(block, column);
        rows = LiveMinMaxRows(block, column, deleted, std::ref(read), std::less<>());
      } else {
        FixedReader<int64_t> read(block, column);
        rows = LiveMinMaxRows(block, column, deleted, std::ref(read), std::less<>());
      }
      break;
    case TypeId::kDouble:
      if (encoded) return false;
      // Value::Compare's order of doubles: NaN above every number.
      rows = LiveMinMaxRows(
          block, column, deleted, [&](uint32_t r) { return block.Values<double>(column)[r]; },
          [](double a, double b) { return std::isnan(b) ? !std::isnan(a) : a < b; });
      break;
    case TypeId::kChar:
    case TypeId::kVarchar:
      if (block.encoding(column) == ColumnEncoding::kDictionary) {
        // The dictionary is sorted, so code order is value order.
        const ColumnChunk& chunk = block.chunk(column);
        rows = LiveMinMaxRows(
            block, column, deleted,
            [&](uint32_t r) { return UnpackCode(block.data() + chunk.values_offset, chunk.bit_width, r); },
            std::less<>());
        break;
      }
      // Bytewise, as std::string::compare (Value::Compare) orders them.
      rows = LiveMinMaxRows(
          block, column, deleted, [&](uint32_t r) { return block.GetString(column, r); },
          std::less<std::string_view>());
      break;
    default:
      return false;
  }
  if (rows.first >= 0) {
    stats->UpdateMinMax(block.GetValue(column, static_cast<uint32_t>(rows.first), type));
    stats->UpdateMinMax(block.GetValue(column, static_cast<uint32_t>(rows.second), type));
  }
  return true;
}

// NULLs among the live rows of a block with deletions: a popcount per 64 rows.
int64_t LiveNullCount(const BlockView& block, int column, const uint64_t* deleted) {
  const uint8_t* validity = block.Validity(column);
  if (validity == nullptr) return 0;
  const uint32_t rows = block.row_count();
  int64_t nulls = 0;
  for (uint32_t w = 0; w * 64 < rows; ++w) {
    uint64_t live = ~deleted[w];
    if ((w + 1) * 64 > rows) live &= (uint64_t{1} << (rows & 63)) - 1;
    nulls += __builtin_popcountll(live & ~LiveNonNullBits(deleted, validity, rows, w));
  }
  return nulls;
}

}  // namespace

void AccumulateBlockStatistics(const BlockView& block, const std::vector<ColumnSchema>& columns,
                               std::vector<ColumnStatistics>* statistics, const uint64_t* deleted) {
  auto is_deleted = [deleted](uint32_t row) { return deleted != nullptr && ((deleted[row >> 6] >> (row & 63)) & 1); };
  for (size_t c = 0; c < columns.size(); ++c) {
    const int column = static_cast<int>(c);
    const Type& type = columns[c].type;
    ColumnStatistics& stats = (*statistics)[c];
    if (deleted == nullptr) {
      stats.null_count += block.NullCount(column);
      stats.UpdateMinMax(block.ZoneMin(column, type));
      stats.UpdateMinMax(block.ZoneMax(column, type));
    } else if (UpdateLiveMinMax(block, column, type, deleted, &stats)) {
      // The live rows only (ANALYZE): the zone maps still cover the deleted ones.
      stats.null_count += LiveNullCount(block, column, deleted);
    } else {
      // Row by row over the live rows (an INTERVAL column).
      for (uint32_t row = 0; row < block.row_count(); ++row) {
        if (is_deleted(row)) continue;
        const Value value = block.GetValue(column, row, type);
        if (value.is_null()) {
          ++stats.null_count;
        } else {
          stats.UpdateMinMax(value);
        }
      }
    }
    switch (type.FixedWidth()) {
      case 1:
        SketchFixed<uint8_t>(block, column, deleted, &stats.distinct);
        break;
      case 4:
        SketchFixed<uint32_t>(block, column, deleted, &stats.distinct);
        break;
      case 8:
        SketchFixed<uint64_t>(block, column, deleted, &stats.distinct);
        break;
      case 16:
        SketchFixed<int128>(block, column, deleted, &stats.distinct);
        break;
      case 0: {
        if (block.encoding(column) == ColumnEncoding::kDictionary) {
          // The sketch ignores repeats: each distinct value of the block once; with deletions, each value a live
          // row holds (its code marked from the bitmap words).
          const StringDictionary dictionary = block.Dictionary(column);
          if (deleted == nullptr) {
            for (uint32_t code = 0; code < dictionary.size(); ++code) {
              stats.distinct.AddHash(HashString(dictionary[code]));
            }
            break;
          }
          std::vector<bool> used(dictionary.size(), false);
          const ColumnChunk& chunk = block.chunk(column);
          const uint8_t* validity = block.Validity(column);
          for (uint32_t w = 0; w * 64 < block.row_count(); ++w) {
            for (uint64_t bits = LiveNonNullBits(deleted, validity, block.row_count(), w); bits != 0;
                 bits &= bits - 1) {
              const uint32_t row = w * 64 + static_cast<uint32_t>(__builtin_ctzll(bits));
              used[UnpackCode(block.data() + chunk.values_offset, chunk.bit_width, row)] = true;
            }
          }
          for (uint32_t code = 0; code < dictionary.size(); ++code) {
            if (used[code]) stats.distinct.AddHash(HashString(dictionary[code]));
          }
          break;
        }
        const uint8_t* validity = block.Validity(column);
        for (uint32_t i = 0; i < block.row_count(); ++i) {
          if (validity != nullptr && !GetBit(validity, i)) continue;
          if (is_deleted(i)) continue;
          stats.distinct.AddHash(HashString(block.GetString(column, i)));
        }
        break;
      }
    }
  }
}

std::string ColumnStorage::EncodingSummary() const {
  std::string summary;
  int used = 0;
  for (int64_t blocks : blocks_by_encoding) used += blocks > 0;
  for (int e = 0; e < 3; ++e) {
    if (blocks_by_encoding[e] == 0) continue;
    if (!summary.empty()) summary += ", ";
    summary += ColumnEncodingName(static_cast<ColumnEncoding>(e));
    if (used > 1) summary += " " + std::to_string(blocks_by_encoding[e]);
  }
  return summary.empty() ? "none" : summary;
}

void AccumulateColumnStorage(const BlockView& block, const std::vector<ColumnSchema>& columns,
                             std::vector<ColumnStorage>* storage) {
  auto align8 = [](int64_t n) { return (n + 7) & ~int64_t{7}; };
  const int64_t rows = block.row_count();
  for (int column = 0; column < block.column_count(); ++column) {
    const ColumnChunk& chunk = block.chunk(column);
    ColumnStorage& out = (*storage)[column];
    const int64_t validity = chunk.validity_offset != 0 ? align8((rows + 7) / 8) : 0;
    out.stored_bytes +=
        static_cast<int64_t>(sizeof(ColumnChunk)) + align8(chunk.values_bytes) + validity + align8(chunk.heap_bytes);
    ++out.blocks_by_encoding[std::min<int>(chunk.encoding, 2)];
    const Type& type = columns[column].type;
    int64_t plain = static_cast<int64_t>(sizeof(ColumnChunk)) + validity;
    if (type.IsString()) {
      int64_t heap = 0;
      if (block.encoding(column) == ColumnEncoding::kDictionary) {
        for (uint32_t r = 0; r < rows; ++r) heap += static_cast<int64_t>(block.GetString(column, r).size());
      } else {
        heap = chunk.heap_bytes;
      }
      plain += align8((rows + 1) * static_cast<int64_t>(sizeof(uint32_t))) + align8(heap);
    } else {
      plain += align8(rows * type.FixedWidth());
    }
    out.plain_bytes += plain;
  }
}

}  // namespace tessera
