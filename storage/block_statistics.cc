#include "storage/block_statistics.h"

#include <cstring>

#include "common/hash.h"

namespace tessera {
namespace {

template <typename T>
void SketchFixed(const BlockView& block, int column, DistinctSketch* sketch) {
  const T* values = block.Values<T>(column);
  const uint8_t* validity = block.Validity(column);
  const uint32_t rows = block.row_count();
  for (uint32_t i = 0; i < rows; ++i) {
    if (validity != nullptr && !GetBit(validity, i)) continue;
    uint64_t bits[2] = {0, 0};
    std::memcpy(bits, &values[i], sizeof(T));
    sketch->AddHash(HashInt64(bits[0] ^ HashInt64(bits[1])));
  }
}

}  // namespace

void AccumulateBlockStatistics(const BlockView& block, const std::vector<ColumnSchema>& columns,
                               std::vector<ColumnStatistics>* statistics) {
  for (size_t c = 0; c < columns.size(); ++c) {
    const int column = static_cast<int>(c);
    const Type& type = columns[c].type;
    ColumnStatistics& stats = (*statistics)[c];
    stats.null_count += block.NullCount(column);
    stats.UpdateMinMax(block.ZoneMin(column, type));
    stats.UpdateMinMax(block.ZoneMax(column, type));
    switch (type.FixedWidth()) {
      case 1: SketchFixed<uint8_t>(block, column, &stats.distinct); break;
      case 4: SketchFixed<uint32_t>(block, column, &stats.distinct); break;
      case 8: SketchFixed<uint64_t>(block, column, &stats.distinct); break;
      case 16: SketchFixed<int128>(block, column, &stats.distinct); break;
      case 0: {
        const uint8_t* validity = block.Validity(column);
        for (uint32_t i = 0; i < block.row_count(); ++i) {
          if (validity != nullptr && !GetBit(validity, i)) continue;
          stats.distinct.AddHash(HashString(block.GetString(column, i)));
        }
        break;
      }
    }
  }
}

}  // namespace tessera
