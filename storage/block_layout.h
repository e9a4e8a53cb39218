#pragma once
// The PAX block: a self-contained slice of one table, identical in memory and on disk (position independent,
// so a block file is read straight into a buffer-pool slot).
//
//   BlockHeader (64 B) | ColumnChunk[column_count] (64 B each) | per column: values | validity | string heap
//
// Fixed-width columns store a dense array of the type's physical representation (catalog/types.h). String
// columns store uint32 offsets[row_count + 1] into their heap; value i is heap[offsets[i], offsets[i+1]).
// Validity is a bitmap (bit set = not NULL), present only when the column has NULLs in this block; a NULL row's
// value slot holds zero bytes (or an empty string). Every section starts at an 8-byte-aligned offset.
//
// Zone map per column: min and max over the block's non-NULL values, in the physical representation
// (little-endian, zero-extended to 16 bytes); for strings, (offset, length) pairs of the min and max values
// inside the column's heap.
//
// BlockView reads a finished block without copying; it is a cheap value type, safe to use from any number of
// threads while the block is pinned.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/status/status.h"
#include "catalog/types.h"
#include "catalog/value.h"
#include "common/bitmap.h"

namespace tessera {

constexpr uint32_t kBlockMagic = 0x314B4254;  // "TBK1"
constexpr uint16_t kBlockFormatVersion = 1;

struct BlockHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t column_count;
  uint32_t row_count;
  uint32_t used_bytes;
  uint8_t reserved[48];
};
static_assert(sizeof(BlockHeader) == 64);

struct ColumnChunk {
  uint32_t values_offset;
  uint32_t values_bytes;
  uint32_t validity_offset;  // 0 when the column has no NULLs in this block
  uint32_t null_count;
  uint32_t heap_offset;  // strings only
  uint32_t heap_bytes;
  uint8_t type_id;
  uint8_t has_zone_map;  // 0 when every value is NULL (or the block is empty)
  uint8_t reserved[6];
  uint8_t zone_min[16];
  uint8_t zone_max[16];
};
static_assert(sizeof(ColumnChunk) == 64);

class BlockView {
 public:
  BlockView() = default;
  explicit BlockView(const void* data) : data_(static_cast<const uint8_t*>(data)) {}

  // Checks that `bytes` bytes at `data` hold a well-formed block with `column_count` columns: magic, version,
  // every section inside the block. Used on blocks read from disk before anything else touches them.
  static absl::Status Validate(const void* data, size_t bytes, size_t column_count);

  const uint8_t* data() const { return data_; }
  const BlockHeader& header() const { return *reinterpret_cast<const BlockHeader*>(data_); }
  uint32_t row_count() const { return header().row_count; }
  uint32_t used_bytes() const { return header().used_bytes; }
  int column_count() const { return header().column_count; }

  const ColumnChunk& chunk(int column) const {
    return reinterpret_cast<const ColumnChunk*>(data_ + sizeof(BlockHeader))[column];
  }

  template <typename T>
  const T* Values(int column) const {
    return reinterpret_cast<const T*>(data_ + chunk(column).values_offset);
  }
  const uint32_t* StringOffsets(int column) const { return Values<uint32_t>(column); }
  const char* StringHeap(int column) const {
    return reinterpret_cast<const char*>(data_ + chunk(column).heap_offset);
  }
  std::string_view GetString(int column, uint32_t row) const {
    const uint32_t* offsets = StringOffsets(column);
    return {StringHeap(column) + offsets[row], offsets[row + 1] - offsets[row]};
  }

  // Null when the column has no NULLs in this block.
  const uint8_t* Validity(int column) const {
    uint32_t offset = chunk(column).validity_offset;
    return offset == 0 ? nullptr : data_ + offset;
  }
  bool IsNull(int column, uint32_t row) const {
    const uint8_t* validity = Validity(column);
    return validity != nullptr && !GetBit(validity, row);
  }
  uint32_t NullCount(int column) const { return chunk(column).null_count; }

  // One value, row-at-a-time (result printing, COPY TO, tests); `type` is the column's schema type.
  Value GetValue(int column, uint32_t row, const Type& type) const;
  // The zone map's min / max as values; NULL values when the column has no zone map.
  Value ZoneMin(int column, const Type& type) const;
  Value ZoneMax(int column, const Type& type) const;

 private:
  Value ZoneValue(int column, const Type& type, const uint8_t* raw) const;

  const uint8_t* data_ = nullptr;
};

}  // namespace tessera
