#pragma once
// Deleted rows of base blocks (DELETE, UPDATE) and the hidden row-id column that DELETE / UPDATE plans read.
//
// Blocks are immutable; a DELETE marks rows instead of rewriting blocks. DeletedRows is the set of deleted rows of
// one block, a bitmap. A table version (TableDescriptor, catalog.h) holds one per block that has deletions
// (SegmentDescriptor::deleted), so the catalog commit that installs a version is also the commit of its deletions,
// and a reader's snapshot keeps the deletions it started with: concurrent readers see a statement's deletions all
// or not at all. Scans skip the deleted rows of the block they read (relational_operators/block_scanner.h);
// VACUUM rewrites blocks without them.
//
// Row ids: DELETE and UPDATE find their rows with an ordinary query over a copy of the table's descriptor that has
// one more column, WithRowIdColumn(): BIGINT "#row_id" = (ordinal of the block in the snapshot << 32) | row in the
// block. The plan builder reads that column from block column kRowIdBlockColumn, which the block scanner fills in.
//
// Immutable once built and shared by shared_ptr between table versions: thread-safe.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/schema.h"

namespace tessera {

struct TableDescriptor;

class DeletedRows {
 public:
  // `row_count` rows, none deleted.
  explicit DeletedRows(uint32_t row_count);

  uint32_t row_count() const { return row_count_; }
  uint32_t deleted_count() const { return deleted_count_; }
  bool IsDeleted(uint32_t row) const { return (words_[row >> 6] >> (row & 63)) & 1; }
  // The bitmap: bit r % 64 of word r / 64 is row r.
  const uint64_t* words() const { return words_.data(); }
  // True when a row of [first, first + count) is deleted.
  bool AnyDeleted(uint32_t first, uint32_t count) const;
  // Writes the live rows of [first, first + count), as offsets from `first` in increasing order, to `rows` (room
  // for `count`) and returns how many there are. Works a 64-bit word of the bitmap at a time: a word without
  // deletions becomes a run of 64 offsets, the others a byte at a time through a table of bit positions (8
  // offsets written at once, no branch per row). For scans (relational_operators/block_scanner.h):
  // allocation-free.
  uint32_t LiveRows(uint32_t first, uint32_t count, uint32_t* rows) const;
  // Marks `row`; returns true if it was not deleted before. Only while building (before sharing).
  bool Delete(uint32_t row);
  // Marks every row `rows` marks (a set of the same block, same row_count()); returns how many were not deleted
  // before. A word of the bitmap at a time. Only while building (before sharing).
  uint32_t DeleteAll(const DeletedRows& rows);
  // How many of the rows marked here have a clear bit in `bitmap`, a byte bitmap of at least
  // ceil(row_count() / 8) bytes in the validity layout (common/bitmap.h: bit r % 8 of byte r / 8 is row r): the
  // NULLs among these rows when `bitmap` is a column's validity. 64 rows at a time with popcount.
  uint32_t CountClearAmong(const uint8_t* bitmap) const;

  std::string Serialize() const;
  // Nullopt for bytes that are not a serialized DeletedRows of `row_count` rows.
  static std::optional<DeletedRows> Deserialize(std::string_view bytes, uint32_t row_count);

 private:
  uint32_t row_count_;
  uint32_t deleted_count_ = 0;
  std::vector<uint64_t> words_;
};

// The batch column a scan fills with row ids instead of reading a block column.
constexpr int kRowIdBlockColumn = 1 << 30;
constexpr char kRowIdColumnName[] = "#row_id";

inline uint64_t MakeRowId(uint32_t block_ordinal, uint32_t row) { return (uint64_t{block_ordinal} << 32) | row; }
inline uint32_t RowIdBlock(uint64_t row_id) { return static_cast<uint32_t>(row_id >> 32); }
inline uint32_t RowIdRow(uint64_t row_id) { return static_cast<uint32_t>(row_id); }

// True for the hidden row-id column of WithRowIdColumn().
bool IsRowIdColumn(const ColumnSchema& column);
// A copy of `table` with the row-id column appended (its statistics unknown).
std::shared_ptr<const TableDescriptor> WithRowIdColumn(const TableDescriptor& table);

}  // namespace tessera
