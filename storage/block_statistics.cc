#include "storage/block_statistics.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

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
    } else {
      // Row by row over the live rows (ANALYZE only): the zone maps still cover the deleted ones.
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
      case 1: SketchFixed<uint8_t>(block, column, deleted, &stats.distinct); break;
      case 4: SketchFixed<uint32_t>(block, column, deleted, &stats.distinct); break;
      case 8: SketchFixed<uint64_t>(block, column, deleted, &stats.distinct); break;
      case 16: SketchFixed<int128>(block, column, deleted, &stats.distinct); break;
      case 0: {
        if (block.encoding(column) == ColumnEncoding::kDictionary && deleted == nullptr) {
          // The sketch ignores repeats: each distinct value of the block once.
          const StringDictionary dictionary = block.Dictionary(column);
          for (uint32_t code = 0; code < dictionary.size(); ++code) stats.distinct.AddHash(HashString(dictionary[code]));
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
    out.stored_bytes += static_cast<int64_t>(sizeof(ColumnChunk)) + align8(chunk.values_bytes) + validity +
                        align8(chunk.heap_bytes);
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
