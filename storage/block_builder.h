#pragma once
// Builds one PAX block (storage/block_layout.h) row by row, then writes it out in one pass.
//
// Usage per row: call exactly one Append* for every column in order, then CommitRow(). CommitRow() returns false
// when the row would push the block past its size limit; the row is then rolled back, and the caller finishes
// this block and appends the row again to an empty builder. A single row too large for an empty block is an error
// the caller must report (RowFitsEmptyBlock()).
//
// A builder owns staging buffers that it reuses across blocks; not thread-safe (one builder per thread).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/schema.h"
#include "storage/column_encoding.h"

namespace tessera {

class BlockBuilder {
 public:
  BlockBuilder(const std::vector<ColumnSchema>& columns, uint32_t block_size_bytes);

  // Returns a pointer to FixedWidth() bytes to fill with the value of fixed-width column `column`.
  uint8_t* AppendFixed(int column) {
    ColumnStaging& staging = columns_[column];
    size_t old_size = staging.values_size;
    staging.values_size += staging.width;
    if (staging.values_size > staging.values.size())
      staging.values.resize(std::max<size_t>(4096, 2 * staging.values_size));
    SetBit(staging.validity, staging.rows++);
    return staging.values.data() + old_size;
  }
  template <typename T>
  void Append(int column, T value) {
    std::memcpy(AppendFixed(column), &value, sizeof(T));
  }
  void AppendString(int column, std::string_view value) {
    ColumnStaging& staging = columns_[column];
    staging.heap.append(value.data(), value.size());
    staging.offsets.push_back(static_cast<uint32_t>(staging.heap.size()));
    SetBit(staging.validity, staging.rows++);
    pending_heap_bytes_ += value.size();
  }
  void AppendNull(int column);
  // Appends a value of the column's type (or NULL); row-at-a-time path for INSERT and tests.
  void AppendValue(int column, const Value& value);

  // See the class comment. Returns true if the row was kept.
  bool CommitRow();

  // Column-wise bulk appends, for producers holding column vectors. RowsThatFit(n, string_bytes) says how many of
  // the next n rows fit into this block (string_bytes[i]: the total string bytes of row i; null when the schema has
  // no strings). Then call one Append*Column per column with the same rows, and EndRows(count). `rows` selects
  // the source positions (null: 0..count-1); `validity` (null: no NULLs) is a bitmap starting at
  // `validity_offset`.
  uint32_t RowsThatFit(uint32_t count, const uint32_t* string_bytes) const;
  void AppendFixedColumn(int column, const uint8_t* values, const uint32_t* rows, uint32_t count,
                         const uint8_t* validity, uint32_t validity_offset);
  void AppendStringColumn(int column, const std::string_view* values, const uint32_t* rows, uint32_t count,
                          const uint8_t* validity, uint32_t validity_offset);
  void EndRows(uint32_t count, size_t string_bytes);
  // Whether the row just rolled back by CommitRow() would fit into an empty block.
  bool RowFitsEmptyBlock() const { return last_rejected_row_bytes_ + FixedOverhead() <= block_size_bytes_; }

  uint32_t row_count() const { return row_count_; }
  bool empty() const { return row_count_ == 0; }
  // Exact size Finish() will write.
  size_t EncodedSize() const;
  // Writes the block (EncodedSize() bytes) to `destination`, plain, computing zone maps, and resets the builder.
  // `string_zone_maps` = false leaves CHAR/VARCHAR columns without one (has_zone_map 0): query intermediates,
  // where two string compares per row cost more than the block skipping they could enable.
  void Finish(void* destination, bool string_zone_maps = true);

  // Base blocks of loads: PlanCompressed() chooses each column's encoding from the block's values (the smallest
  // of plain, frame of reference, dictionary: column_encoding.h) and returns the exact size FinishCompressed()
  // will write; FinishCompressed() writes the block so encoded, with zone maps and checksums
  // (BlockView::Seal), and resets the builder. Nothing may be appended between the two calls.
  size_t PlanCompressed();
  // Every column plain (SET compression = off): the size FinishCompressed() will write, checksums included.
  size_t PlanPlain();
  void FinishCompressed(void* destination);

 private:
  struct ColumnStaging {
    Type type;
    int width = 0;  // 0 for strings
    uint32_t rows = 0;
    uint32_t null_count = 0;
    std::vector<uint8_t> values;  // fixed-width values; capacity, the first values_size bytes are used
    size_t values_size = 0;
    std::vector<uint32_t> offsets;  // strings: offsets[0] = 0
    std::string heap;
    std::vector<uint8_t> validity;  // sized for the maximum row count
    // The encoding PlanCompressed chose (plain otherwise) and its section sizes.
    ColumnEncoding encoding = ColumnEncoding::kPlain;
    int bit_width = 0;
    size_t encoded_values_bytes = 0;
    size_t encoded_heap_bytes = 0;
    // kDictionary: each row's id in first-seen order, the distinct values sorted, and id -> sorted code.
    std::vector<uint32_t> dictionary_ids;
    std::vector<std::string_view> dictionary;
    std::vector<uint32_t> dictionary_codes;
  };

  static void SetBit(std::vector<uint8_t>& bitmap, uint32_t row) {
    if ((row >> 3) >= bitmap.size()) bitmap.resize(std::max<size_t>(64, bitmap.size() * 2), 0);
    bitmap[row >> 3] |= static_cast<uint8_t>(1u << (row & 7));
  }
  void RollBackRow();
  void PlanFrameOfReference(ColumnStaging& staging);
  void PlanDictionary(ColumnStaging& staging);
  void Write(void* destination, bool string_zone_maps);
  // EncodedSize() with the planned encodings, or with every column plain.
  size_t SizeOf(bool plain) const;
  size_t FixedOverhead() const;
  size_t UpperBoundSize(uint32_t rows, size_t heap_bytes) const;
  void Reset();

  uint32_t block_size_bytes_;
  std::vector<ColumnStaging> columns_;
  size_t fixed_bytes_per_row_ = 0;  // values + string offsets; at least 1 (rows of no columns)
  uint32_t row_count_ = 0;
  size_t heap_bytes_ = 0;
  size_t pending_heap_bytes_ = 0;
  size_t last_rejected_row_bytes_ = 0;
  std::vector<uint64_t> codes_;  // scratch of FinishCompressed
};

}  // namespace tessera
