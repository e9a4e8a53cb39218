#pragma once
// COPY: loading delimited text files (CSV, dbgen/ssb-dbgen .tbl) into blocks, and writing tables back out.
//
// Loading is parallel: the file is memory-mapped and cut into line-aligned chunks; worker threads parse chunks
// into PAX blocks (storage/block_builder.h) and compute statistics. Nothing becomes visible here: the result is a
// set of pending blocks that the caller writes and commits (storage_manager.h, catalog.h), so a failed or
// interrupted load leaves the table exactly as it was.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/catalog.h"
#include "storage/storage_manager.h"

namespace tessera {

struct DelimitedFormat {
  char delimiter = ',';
  // Fields starting with the quote character are quoted (RFC 4180: "" inside is one quote). '\0' disables.
  // A quoted field may not span lines.
  char quote = '"';
  bool header = false;           // skip (on load) / write (on export) one header line
  std::string null_string;       // an unquoted field equal to this is NULL
  bool trailing_delimiter = false;  // export: end every line with the delimiter, as dbgen does
};

struct LoadedRows {
  int64_t row_count = 0;
  std::vector<PendingBlock> blocks;            // in file order
  std::vector<ColumnStatistics> statistics;    // one per table column, over the loaded rows only
};

// Parses `path` into blocks for `table`. `target_columns` lists, for each field of a line, the index of the table
// column it fills (empty = all columns in order); table columns not listed get their default or NULL.
// A trailing delimiter at the end of a line is accepted. Errors (InvalidArgument) name the file, line number,
// column and offending value, e.g.
//   "COPY lineitem: 'l.tbl' line 17, column l_quantity: invalid input for DECIMAL(15,2): 'abc'".
// Every block is written to `writer` as soon as it is built (in parallel), so the load ends with the segment file
// complete except for its final flush (SegmentWriter::Finish, the caller's job).
absl::StatusOr<LoadedRows> LoadDelimitedFile(const std::string& path, const TableDescriptor& table,
                                             const std::vector<int>& target_columns, const DelimitedFormat& format,
                                             StorageManager& storage, SegmentWriter& writer, int threads);

// Builds blocks for rows given as values (INSERT ... VALUES); values must already have the columns' types.
absl::StatusOr<LoadedRows> LoadRows(const TableDescriptor& table, const std::vector<std::vector<Value>>& rows,
                                    StorageManager& storage, SegmentWriter& writer);

// The segment descriptor of loaded blocks written by a SegmentWriter, in load order.
SegmentDescriptor DescribeSegment(uint64_t segment_id, const LoadedRows& loaded);

// Writes every row of `table` to `path` in the given format. Returns the number of rows written.
absl::StatusOr<int64_t> ExportDelimitedFile(const std::string& path, const TableDescriptor& table,
                                            const DelimitedFormat& format, StorageManager& storage);

}  // namespace tessera
