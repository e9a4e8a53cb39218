#pragma once
// COPY: loading delimited text files (CSV, dbgen/ssb-dbgen .tbl) into blocks, and writing tables back out.
//
// A file is cut into line-aligned chunks (DelimitedFileChunks) that are read with pread (no memory mapping: a file
// truncated while COPY reads it is an error, not a SIGBUS) and parse independently, in any order and concurrently, into PAX blocks (storage/block_builder.h) with their statistics. The query engine parses
// one chunk per work order (relational_operators/copy_from_operator.h); LoadDelimitedFile parses all of them on
// private threads. Nothing becomes visible here: the result is a set of pending blocks that the caller writes and
// commits (storage_manager.h, catalog.h), so a failed or interrupted load leaves the table exactly as it was.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/catalog.h"
#include "common/file_io.h"
#include "storage/block_builder.h"
#include "storage/storage_manager.h"

namespace tessera {

struct DelimitedFormat {
  char delimiter = ',';
  // Fields starting with the quote character are quoted (RFC 4180: "" inside is one quote). '\0' disables.
  // A quoted field may not span lines.
  char quote = '"';
  bool header = false;              // skip (on load) / write (on export) one header line
  std::string null_string;          // an unquoted field equal to this is NULL
  bool trailing_delimiter = false;  // export: end every line with the delimiter, as dbgen does
  // PostgreSQL's text format (COPY ... WITH (FORMAT text), the default of FROM STDIN / TO STDOUT): no quoting; a
  // backslash escapes the next character (\b \f \n \r \t \v, octal \NNN, hex \xHH, any other character is
  // itself, so \\ is one backslash and a backslash before the delimiter keeps it in the field). A field equal to
  // null_string before unescaping is NULL (\N in that format). Export escapes backslashes, the delimiter and line
  // breaks.
  bool backslash_escapes = false;
};

// Appends `text` as one field of a line in `format`: quoted (strings that need it) or escaped (text format).
// `is_string`: only strings are ever quoted. NULL is the caller's (format.null_string).
void AppendDelimitedField(std::string_view text, bool is_string, const DelimitedFormat& format, std::string* out);

struct LoadedRows {
  int64_t row_count = 0;
  std::vector<PendingBlock> blocks;          // in file order
  std::vector<ColumnStatistics> statistics;  // one per table column, over the loaded rows only

  // Appends `other`'s rows after these (blocks in order, statistics merged).
  void Append(LoadedRows other);
};

// Turns full BlockBuilders into base blocks of one load: allocates each block from the storage manager, writes it
// through the segment writer at once, folds it into the statistics and keeps it (pending) in loaded(), in the
// order flushed. One per thread or work order; the writer is shared (SegmentWriter::Append is thread-safe).
// `account` (optional): the query account the blocks count against until they are registered (AllocatePendingBlock).
class LoadBlockWriter {
 public:
  // `compress`: each column's encoding chosen from the block's values (BlockBuilder::PlanCompressed); false: plain.
  LoadBlockWriter(const std::vector<ColumnSchema>& columns, StorageManager& storage, SegmentWriter& writer,
                  BufferPool* account = nullptr, bool compress = true);
  // Moves the builder's rows (at least one) into a new block; the builder is empty afterwards.
  absl::Status Flush(BlockBuilder& builder);
  LoadedRows& loaded() { return loaded_; }

 private:
  const std::vector<ColumnSchema>& columns_;
  StorageManager& storage_;
  SegmentWriter& writer_;
  BufferPool* const account_;
  const bool compress_;
  LoadedRows loaded_;
};

// How big the chunks of a file are: about file size / target_chunks, within [min_bytes, max_bytes].
struct ChunkSizing {
  size_t min_bytes = 8 << 20;
  size_t max_bytes = SIZE_MAX;
  size_t target_chunks = 1;
};

// A delimited file opened for loading into `table`, cut into line-aligned chunks sized by `sizing`.
// `target_columns` lists, for each field of a line, the index of the table column it fills (empty = all columns in
// order); table columns not listed get their default or NULL. A trailing delimiter at the end of a line is
// accepted. Quoted fields may not span lines, so every newline ends a line and chunk borders need no look-back.
//
// Thread-safe: ParseChunk may run for different chunks at once. `table` must outlive the object.
class DelimitedFileChunks {
 public:
  // Errors: the file cannot be opened ("COPY t: ..."), a column listed twice, a NOT NULL column without a default
  // missing from the list.
  // `verify_opened`, when given, is called with the opened descriptor before anything is read; its error closes the
  // file and is returned (a server checks the file it actually opened against its allowed directories).
  static absl::StatusOr<std::unique_ptr<DelimitedFileChunks>> Open(
      const std::string& path, const TableDescriptor& table, const std::vector<int>& target_columns,
      const DelimitedFormat& format, ChunkSizing sizing,
      const std::function<absl::Status(int fd)>& verify_opened = nullptr);

  size_t chunk_count() const { return chunks_.size(); }
  size_t chunk_bytes(size_t chunk) const { return chunks_[chunk].second - chunks_[chunk].first; }
  size_t file_bytes() const { return file_size_; }
  ~DelimitedFileChunks();

  // Parses chunk `chunk` into blocks through `out` (every block is written as soon as it is built; a chunk's last
  // block may be partly filled). Checks `abandon` every 1024 rows and returns Cancelled once it is set. Errors
  // (InvalidArgument) name the file, line number, column and offending value, e.g.
  //   "COPY lineitem: 'l.tbl' line 17, column l_quantity: invalid input for DECIMAL(15,2): 'abc'";
  // a block that cannot be allocated or written fails with its own status, prefixed "COPY t: ". A file that is
  // shorter than at Open (truncated meanwhile) fails with FailedPrecondition "... changed while being read".
  absl::Status ParseChunk(size_t chunk, LoadBlockWriter& out, const std::atomic<bool>& abandon) const;

 private:
  DelimitedFileChunks(std::string path, const TableDescriptor& table, std::vector<int> target_columns,
                      DelimitedFormat format, int fd, size_t file_size);
  // Reads [begin, end) of the file into `out` (end - begin bytes); FailedPrecondition if the file ends before `end`.
  absl::Status ReadRange(size_t begin, size_t end, char* out) const;
  // The offset just past the first newline at or after `from`, or the file size.
  absl::StatusOr<size_t> NextLineStart(size_t from) const;

  const std::string path_;
  const TableDescriptor& table_;
  const std::vector<int> target_columns_;
  const DelimitedFormat format_;
  const int fd_;
  const size_t file_size_;                         // at Open
  std::vector<std::pair<size_t, size_t>> chunks_;  // [begin, end) byte offsets, in file order
};

// COPY FROM a stream of bytes (COPY t FROM STDIN: the client connection's data, in pieces of any size whose borders
// fall anywhere, even inside a line or a UTF-8 character): the same line parsing as DelimitedFileChunks, fed piece
// by piece on one thread. Only the unfinished last line of a piece is kept between pieces, so memory is one
// piece plus one line plus the block being built; full blocks go to `out` as they fill. Errors name the stream,
// line and column as a file's do ("COPY t: STDIN line 17, column ..."); a line longer than kMaxLineBytes fails.
// Not thread-safe (one stream, one thread). `table` and `out` must outlive it.
class DelimitedStreamParser {
 public:
  static constexpr size_t kMaxLineBytes = 64u << 20;

  // `source`: how errors name the stream ("STDIN"). Errors as DelimitedFileChunks::Open's for the column list.
  static absl::StatusOr<std::unique_ptr<DelimitedStreamParser>> Create(const TableDescriptor& table,
                                                                       const std::vector<int>& target_columns,
                                                                       const DelimitedFormat& format,
                                                                       std::string source, LoadBlockWriter* out);
  ~DelimitedStreamParser();

  // Parses every line that `data` completes (with the unfinished line of earlier pieces). Returns Cancelled once
  // `abandon` is set (checked every 1024 rows).
  absl::Status Feed(std::string_view data, const std::atomic<bool>& abandon);
  // The end of the stream: parses a last line without a newline and writes the partly filled block.
  absl::Status Finish(const std::atomic<bool>& abandon);
  // Complete lines seen so far (the header included).
  int64_t lines() const { return lines_; }

 private:
  class Impl;
  DelimitedStreamParser(std::unique_ptr<Impl> impl, const TableDescriptor& table, std::string source,
                        LoadBlockWriter* out, bool skip_header);
  // Parses complete lines `text` (ending in a newline, or the stream's last line), whose first is line lines_+1.
  absl::Status ParseLines(std::string_view text, const std::atomic<bool>& abandon);

  std::unique_ptr<Impl> impl_;
  const TableDescriptor& table_;
  const std::string source_;
  LoadBlockWriter* const out_;
  bool skip_header_;
  std::string partial_line_;  // the unfinished last line of the pieces so far
  int64_t lines_ = 0;
};

// Loads all of `path` on `threads` private threads (chunks of at least 8 MiB, a few per thread), outside the
// scheduler: the COPY path before COPY became an operator, kept for tools that run without a Foreman and as the
// baseline of benchmarks/load/copy_insert_benchmark. Blocks come back in file order.
absl::StatusOr<LoadedRows> LoadDelimitedFile(const std::string& path, const TableDescriptor& table,
                                             const std::vector<int>& target_columns, const DelimitedFormat& format,
                                             StorageManager& storage, SegmentWriter& writer, int threads);

// Builds blocks for rows given as values (INSERT ... VALUES); values must already have the columns' types.
absl::StatusOr<LoadedRows> LoadRows(const TableDescriptor& table, const std::vector<std::vector<Value>>& rows,
                                    StorageManager& storage, SegmentWriter& writer);

// The segment descriptor of loaded blocks written by a SegmentWriter, in load order.
SegmentDescriptor DescribeSegment(uint64_t segment_id, const LoadedRows& loaded);

// Writes every row of `table` to `path` in the given format, through a temporary file in the same directory that
// replaces `path` only once complete (atomic: on failure `path` is untouched). Returns the number of rows written.
absl::StatusOr<int64_t> ExportDelimitedFile(const std::string& path, const TableDescriptor& table,
                                            const DelimitedFormat& format, StorageManager& storage);

}  // namespace tessera
