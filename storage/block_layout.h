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
// Base blocks written by a load (format version 2) are compressed and checksummed: each column has an encoding
// (storage/column_encoding.h: plain, frame of reference, dictionary) chosen for this block, a CRC-32C of its
// sections, and the header a CRC-32C of itself and the column directory. Temporary blocks are plain and carry no
// checksum. Blocks of format version 1 (plain, no checksums) are still read.
//
// BlockView reads a finished block without copying; it is a cheap value type, safe to use from any number of
// threads while the block is pinned.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "absl/status/status.h"
#include "catalog/types.h"
#include "catalog/value.h"
#include "common/bitmap.h"
#include "storage/column_encoding.h"

namespace tessera {

constexpr uint32_t kBlockMagic = 0x314B4254;  // "TBK1"
constexpr uint16_t kBlockFormatVersion = 2;
constexpr uint16_t kOldestBlockFormatVersion = 1;  // plain blocks without checksums, read as they are
constexpr uint32_t kBlockChecksummed = 1;          // BlockHeader::flags

struct BlockHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t column_count;
  uint32_t row_count;
  uint32_t used_bytes;
  uint32_t checksum;  // with kBlockChecksummed: CRC-32C of the 16 bytes above and the column directory
  uint32_t flags;
  uint32_t plain_bytes;  // what the block takes with every column plain (0 in version 1 blocks)
  uint8_t reserved[36];
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
  uint8_t encoding;      // ColumnEncoding (column_encoding.h); 0 = plain
  uint8_t bit_width;     // codes of packed encodings
  uint32_t checksum;     // with kBlockChecksummed: CRC-32C of the values, validity and heap sections
  uint8_t zone_min[16];
  uint8_t zone_max[16];
};
static_assert(sizeof(ColumnChunk) == 64);

class BlockView {
 public:
  BlockView() = default;
  explicit BlockView(const void* data) : data_(static_cast<const uint8_t*>(data)) {}

  // Checks that `bytes` bytes at `data` hold a well-formed block with `column_count` columns: magic, version,
  // checksums, every section inside the block (plain fixed-width values covering the rows), every code inside its
  // dictionary. Used on blocks read from disk, and on blocks received from another rank, before anything else
  // touches them. `from_disk`: every base block of format 2 or later is sealed, so one without checksums is
  // damaged (a flipped flag bit must not switch the verification off); blocks in messages are temporary blocks,
  // never sealed. `types` (optional; the table's, column_count of them): each column's chunk must be of that type
  // (format 2 and later) and a plain fixed-width one hold a value of that width per row, so that reading it as
  // the table's type stays inside it (a DECIMAL's width, 8 or 16 bytes, follows from the table's precision).
  // A damaged column is a DataLoss error with the payload kDamagedColumnPayload holding the column's index
  // (decimal text), so callers can name it.
  static absl::Status Validate(const void* data, size_t bytes, size_t column_count, bool from_disk = false,
                               const std::vector<Type>* types = nullptr);
  static constexpr const char* kDamagedColumnPayload = "tessera.damaged-column";

  // Seals a finished block: computes every column's checksum and the header's, and sets kBlockChecksummed.
  static void Seal(void* data);

  const uint8_t* data() const { return data_; }
  const BlockHeader& header() const { return *reinterpret_cast<const BlockHeader*>(data_); }
  uint32_t row_count() const { return header().row_count; }
  uint32_t used_bytes() const { return header().used_bytes; }
  int column_count() const { return header().column_count; }

  const ColumnChunk& chunk(int column) const {
    return reinterpret_cast<const ColumnChunk*>(data_ + sizeof(BlockHeader))[column];
  }

  ColumnEncoding encoding(int column) const { return static_cast<ColumnEncoding>(chunk(column).encoding); }
  bool IsEncoded(int column) const { return chunk(column).encoding != 0; }

  // The raw sections of a plain column; an encoded column is read through GetFixed / GetString / GetValue or
  // decoded a vector at a time (expressions/batch.h).
  template <typename T>
  const T* Values(int column) const {
    return reinterpret_cast<const T*>(data_ + chunk(column).values_offset);
  }
  const uint32_t* StringOffsets(int column) const { return Values<uint32_t>(column); }
  const char* StringHeap(int column) const { return reinterpret_cast<const char*>(data_ + chunk(column).heap_offset); }
  std::string_view GetString(int column, uint32_t row) const {
    if (IsEncoded(column)) return GetEncodedString(column, row);
    const uint32_t* offsets = StringOffsets(column);
    return {StringHeap(column) + offsets[row], offsets[row + 1] - offsets[row]};
  }
  // One fixed-width value in its physical representation T (catalog/types.h), whatever the encoding.
  template <typename T>
  T GetFixed(int column, uint32_t row) const {
    T value;
    if (encoding(column) == ColumnEncoding::kFrameOfReference) {
      value = DecodeFrameOfReference<T>(column, row);
    } else {
      std::memcpy(&value, data_ + chunk(column).values_offset + sizeof(T) * row, sizeof(T));
    }
    return value;
  }
  // Rows [first, first + count) of an encoded column a vector at a time, NULL rows as the plain format has them
  // (zero / empty). DecodeFixed: a kFrameOfReference column of physical type T (int32_t, int64_t, int128);
  // DecodeStrings: a kDictionary column, as views into the block's dictionary.
  template <typename T>
  void DecodeFixed(int column, uint32_t first, uint32_t count, T* out) const;
  void DecodeStrings(int column, uint32_t first, uint32_t count, std::string_view* out) const;
  // DecodeFixed of only rows first + rows[i] (ascending offsets), each into out[rows[i]]; the other slots of
  // `out` are left as they are. For sparse selections, where unpacking the whole vector costs more.
  template <typename T>
  void DecodeFixedRows(int column, uint32_t first, const uint32_t* rows, uint32_t row_count, T* out) const;
  // DecodeStrings of only rows first + rows[i] (ascending offsets), each into out[rows[i]], NULL rows as ''; the
  // other slots of `out` are left as they are.
  void DecodeStringsRows(int column, uint32_t first, const uint32_t* rows, uint32_t row_count,
                         std::string_view* out) const;

  // The dictionary of a kDictionary column.
  StringDictionary Dictionary(int column) const { return StringDictionary(data_ + chunk(column).heap_offset); }

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
  std::string_view GetEncodedString(int column, uint32_t row) const;
  template <typename T>
  T DecodeFrameOfReference(int column, uint32_t row) const {
    const ColumnChunk& c = chunk(column);
    if (IsNull(column, row)) return T{};  // the contract for NULL slots: zero bytes
    const uint64_t code = UnpackCode(data_ + c.values_offset, c.bit_width, row);
    T base;
    std::memcpy(&base, c.zone_min, sizeof(T));
    // Unsigned arithmetic: the sum is the stored value, but base + code may pass through no signed range.
    if constexpr (std::is_same_v<T, int32_t>) {
      return static_cast<int32_t>(static_cast<uint32_t>(base) + static_cast<uint32_t>(code));
    } else if constexpr (std::is_same_v<T, int64_t>) {
      return static_cast<int64_t>(static_cast<uint64_t>(base) + code);
    } else if constexpr (std::is_same_v<T, int128>) {
      return static_cast<int128>(static_cast<unsigned __int128>(base) + code);
    } else {
      return T{};  // other types are never frame-of-reference encoded
    }
  }

  const uint8_t* data_ = nullptr;
};

}  // namespace tessera
