// DELETE, UPDATE and VACUUM (catalog/row_deletions.h has the model).
//
// DELETE and UPDATE find their rows with an ordinary query under the Foreman: the parser's query over the target
// table (parser/ast.h) is bound to a snapshot of the table that carries the hidden row-id column
// (optimizer::PlanQueryWithRowIds), so WHERE, subqueries and USING / FROM joins are planned and run like any
// SELECT. The row ids it returns become new deletion bitmaps of the snapshot's blocks; UPDATE also builds the new
// rows into a new segment. One catalog commit installs both (the same commit point as COPY and INSERT): a process
// killed before it leaves the table as it was (the new segment file is an orphan removed at the next start), after
// it as the statement left it; readers hold the version they started with, so they see all or none of it.
//
// DELETE, UPDATE and VACUUM statements run one at a time (DmlMutex, held from planning to commit), so a statement's
// snapshot differs from the table at its commit only by segments that loads appended meanwhile; a DROP TABLE in
// between makes the commit fail (Aborted).

#include <algorithm>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "catalog/catalog.h"
#include "catalog/row_deletions.h"
#include "common/bitmap.h"
#include "common/status_macros.h"
#include "engine/statement_handlers.h"
#include "engine/table_compactor.h"
#include "glog/logging.h"
#include "optimizer/binder.h"
#include "parser/parser.h"
#include "query_execution/plan_builder.h"
#include "query_execution/query_manager.h"
#include "relational_operators/block_scanner.h"
#include "relational_operators/vector_block_writer.h"
#include "storage/delimited_file.h"
#include "storage/storage_manager.h"

namespace tessera {
namespace {

static_assert(std::string_view(parser::kRowIdColumnRef) == std::string_view(kRowIdColumnName));

absl::Mutex& DmlMutex() {
  static absl::Mutex mutex;
  return mutex;
}

// Rows built into a new segment per LoadRows call (VACUUM, UPDATE): bounds the Values held at once.
constexpr size_t kRowsPerLoadChunk = 1 << 16;

QueryResult StatusOnly(std::string message, int64_t rows) {
  QueryResult result;
  result.status_message = std::move(message);
  result.rows_affected = rows;
  return result;
}

// Segments that VACUUM replaced are deleted once no table version lists them (SegmentDescriptor::listed): a query
// that started before the VACUUM keeps reading their blocks. Collected by the next DELETE, UPDATE or VACUUM of the
// same database; a restart removes the files of any left. Entries name their storage manager and the segment's
// file, so a database opened later at the same address drops nothing of its own (segment ids are never reused in
// one directory).
class RetiredSegments {
 public:
  static RetiredSegments& Get() {
    static RetiredSegments* const retired = new RetiredSegments;  // never destroyed
    return *retired;
  }
  void Retire(const StorageManager& storage, const SegmentDescriptor& segment) {
    absl::MutexLock lock(&mutex_);
    pending_.push_back({&storage, storage.SegmentPath(segment.segment_id), segment.listed, segment.segment_id});
  }
  // Drops the segments of `storage` that no version lists any more.
  void Collect(StorageManager& storage) {
    std::vector<uint64_t> unused;
    {
      absl::MutexLock lock(&mutex_);
      std::erase_if(pending_, [&](const Entry& entry) {
        if (entry.storage != &storage || !entry.listed.expired()) return false;
        if (storage.SegmentPath(entry.segment_id) == entry.path) unused.push_back(entry.segment_id);
        return true;
      });
    }
    for (uint64_t segment : unused) storage.DropSegment(segment);
  }

 private:
  struct Entry {
    const StorageManager* storage;
    std::string path;
    std::weak_ptr<const char> listed;
    uint64_t segment_id;
  };
  absl::Mutex mutex_;
  std::vector<Entry> pending_ ABSL_GUARDED_BY(mutex_);
};

// The rows a DELETE or UPDATE found: the query's result, read after it finished.
struct FoundRows {
  std::shared_ptr<const TableDescriptor> snapshot;  // without the row-id column
  std::vector<optimizer::OutputColumn> columns;     // the query's output; the row id is the last
  std::shared_ptr<ExecutionQuery> query;            // owns the result relation
};

absl::StatusOr<FoundRows> FindRows(Database& database, const std::string& table, const parser::SelectStatement& query,
                                   std::string_view text, const QueryRunOptions& options) {
  FoundRows found;
  TESSERA_ASSIGN_OR_RETURN(found.snapshot, database.catalog().GetTable(table));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<optimizer::LogicalOperator> plan,
                           optimizer::PlanQueryWithRowIds(query, database.catalog(), text,
                                                          WithRowIdColumn(*found.snapshot), options.optimizer));
  found.columns = plan->output();
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionDag> dag,
                           BuildExecutionDag(*plan, &database.storage(), &database.buffer_pool()));
  TESSERA_ASSIGN_OR_RETURN(found.query, RunDag(database, std::move(dag), options));
  return found;
}

// The rows a DELETE or UPDATE found, as one bitmap per block of the snapshot (by block ordinal, the numbering of
// row ids; null for blocks without any). Set straight from the query's row ids in the order its work orders wrote
// them: no sort, and a row found several times (a USING / FROM join) is one bit.
struct FoundRowSet {
  std::vector<std::unique_ptr<DeletedRows>> blocks;
  int64_t rows = 0;     // distinct rows
  int64_t row_ids = 0;  // row ids read, repeats included
};

// The row ids in the last column of a DELETE / UPDATE query's result, as a FoundRowSet of `snapshot`'s blocks.
absl::StatusOr<FoundRowSet> CollectRowIds(const TableDescriptor& snapshot, const TemporaryRelation& relation) {
  FoundRowSet found;
  std::vector<uint32_t> block_rows;
  for (const SegmentDescriptor& segment : snapshot.segments) {
    for (const BlockLocation& block : segment.blocks) block_rows.push_back(block.rows);
  }
  found.blocks.resize(block_rows.size());
  const int column = static_cast<int>(relation.schema().size()) - 1;
  std::vector<int64_t> decoded;
  for (uint32_t b = 0; b < relation.block_count(); ++b) {
    const BlockView block = relation.block(b);
    const uint32_t count = block.row_count();
    const int64_t* ids = block.Values<int64_t>(column);
    if (block.IsEncoded(column)) {
      decoded.resize(count);
      block.DecodeFixed<int64_t>(column, 0, count, decoded.data());
      ids = decoded.data();
    }
    for (uint32_t r = 0; r < count; ++r) {
      const uint64_t row_id = static_cast<uint64_t>(ids[r]);
      const uint32_t ordinal = RowIdBlock(row_id);
      if (ordinal >= block_rows.size()) return absl::InternalError("a row id names no block of the table");
      if (RowIdRow(row_id) >= block_rows[ordinal]) return absl::InternalError("a row id names no row of its block");
      std::unique_ptr<DeletedRows>& rows = found.blocks[ordinal];
      if (rows == nullptr) rows = std::make_unique<DeletedRows>(block_rows[ordinal]);
      found.rows += rows->Delete(RowIdRow(row_id));
    }
    found.row_ids += count;
  }
  return found;
}

// (segment index, block index) of each block ordinal of a snapshot, the numbering of row ids.
std::vector<std::pair<uint32_t, uint32_t>> BlockOrdinals(const TableDescriptor& table) {
  std::vector<std::pair<uint32_t, uint32_t>> ordinals;
  for (uint32_t s = 0; s < table.segments.size(); ++s) {
    for (uint32_t b = 0; b < table.segments[s].blocks.size(); ++b) ordinals.emplace_back(s, b);
  }
  return ordinals;
}

// Deletions of the rows `found` (of `snapshot`'s numbering) applied to `updated`, a copy of the table's current
// version: each block's bitmap is a copy of the current one with the found rows or'ed in, a word at a time. Rows
// already deleted are not counted again. Returns the rows newly deleted.
absl::StatusOr<int64_t> ApplyDeletions(const TableDescriptor& snapshot, const FoundRowSet& found,
                                       TableDescriptor* updated) {
  const std::vector<std::pair<uint32_t, uint32_t>> ordinals = BlockOrdinals(snapshot);
  absl::flat_hash_map<uint64_t, size_t> segment_index;
  for (size_t s = 0; s < updated->segments.size(); ++s) segment_index[updated->segments[s].segment_id] = s;
  int64_t deleted = 0;
  for (size_t ordinal = 0; ordinal < found.blocks.size(); ++ordinal) {
    if (found.blocks[ordinal] == nullptr) continue;
    const auto [segment, block] = ordinals[ordinal];
    auto current = segment_index.find(snapshot.segments[segment].segment_id);
    if (current == segment_index.end()) {
      return absl::AbortedError(absl::StrCat("table '", snapshot.name, "' was changed by another statement"));
    }
    SegmentDescriptor& target = updated->segments[current->second];
    const DeletedRows* existing = target.DeletedIn(block);
    auto rows = existing != nullptr ? std::make_shared<DeletedRows>(*existing)
                                    : std::make_shared<DeletedRows>(target.blocks[block].rows);
    deleted += rows->DeleteAll(*found.blocks[ordinal]);
    target.deleted.resize(target.blocks.size());
    target.deleted[block] = std::move(rows);
  }
  updated->row_count -= deleted;
  return deleted;
}

// NULLs per column among the rows `found` of `snapshot`: what deleting them takes off the null counts of the
// statistics. Reads only the validity bitmaps of their blocks, 64 rows at a time (DeletedRows::CountClearAmong);
// a column the statistics count no NULL in is skipped, and no block is pinned when every column is.
absl::StatusOr<std::vector<int64_t>> NullsOfRows(Database& database, const TableDescriptor& snapshot,
                                                 const FoundRowSet& found) {
  std::vector<int64_t> nulls(snapshot.columns.size(), 0);
  std::vector<int> nullable;
  for (size_t c = 0; c < nulls.size(); ++c) {
    if (c >= snapshot.statistics.size() || snapshot.statistics[c].null_count > 0) {
      nullable.push_back(static_cast<int>(c));
    }
  }
  if (nullable.empty()) return nulls;
  const std::vector<std::pair<uint32_t, uint32_t>> ordinals = BlockOrdinals(snapshot);
  for (size_t ordinal = 0; ordinal < found.blocks.size(); ++ordinal) {
    if (found.blocks[ordinal] == nullptr) continue;
    const auto [segment, block_index] = ordinals[ordinal];
    TESSERA_ASSIGN_OR_RETURN(BlockHandle handle,
                             database.storage().PinBlock(BlockId{snapshot.segments[segment].segment_id, block_index}));
    const BlockView block = handle.view();
    if (block.row_count() != found.blocks[ordinal]->row_count()) {
      return absl::InternalError("a block's row count differs from its descriptor's");
    }
    for (int c : nullable) {
      const uint8_t* validity = block.Validity(c);
      if (validity != nullptr) nulls[c] += found.blocks[ordinal]->CountClearAmong(validity);
    }
  }
  return nulls;
}

// Commits deletions of the rows `found` and, when `loaded` has rows, the new segment `writer` wrote, in one catalog
// commit. `deleted_nulls` (NullsOfRows of `found`) come off the null counts and the deleted rows are counted
// in stale_rows. Returns the rows deleted.
absl::StatusOr<int64_t> CommitChange(Database& database, const TableDescriptor& snapshot, const FoundRowSet& found,
                                     const std::vector<int64_t>& deleted_nulls, std::unique_ptr<SegmentWriter> writer,
                                     LoadedRows loaded) {
  const bool appends = writer != nullptr && loaded.row_count > 0;
  SegmentDescriptor segment;
  if (appends) {
    TESSERA_RETURN_IF_ERROR(writer->Finish());  // outside the mutex: it waits for the disk
    segment = DescribeSegment(writer->segment_id(), loaded);
  }
  StorageManager& storage = database.storage();
  absl::MutexLock lock(&TableWriteMutex());
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> current = database.catalog().GetTable(snapshot.name);
  auto abandon = [&](absl::Status status) {
    if (appends) storage.DeleteSegmentFile(segment.segment_id);
    return status;
  };
  if (!current.ok() || (*current)->table_id != snapshot.table_id) {
    return abandon(absl::AbortedError(absl::StrCat("table '", snapshot.name, "' was dropped meanwhile")));
  }
  auto updated = std::make_shared<TableDescriptor>(**current);
  absl::StatusOr<int64_t> deleted = ApplyDeletions(snapshot, found, updated.get());
  if (!deleted.ok()) return abandon(deleted.status());
  // Every row id names a live row of the current version (statements run one at a time and their queries skip
  // deleted rows), so its NULLs are still counted.
  for (size_t c = 0; c < updated->statistics.size() && c < deleted_nulls.size(); ++c) {
    updated->statistics[c].null_count = std::max<int64_t>(0, updated->statistics[c].null_count - deleted_nulls[c]);
  }
  updated->stale_rows += *deleted;
  if (appends) {
    updated->segments.push_back(segment);
    updated->row_count += loaded.row_count;
    for (size_t c = 0; c < updated->statistics.size(); ++c) updated->statistics[c].Merge(loaded.statistics[c]);
  }
  // The new blocks are readable before the catalog lists them (a query may take the new version at once).
  if (appends) {
    storage.RegisterSegment(segment, snapshot.columns, std::move(loaded.blocks));
  }
  if (absl::Status committed = database.catalog().ReplaceTable(*current, std::move(updated)); !committed.ok()) {
    if (appends) storage.DropSegment(segment.segment_id);
    return committed;
  }
  return *deleted;
}

// After a DELETE or UPDATE of `table` committed: in the background (engine/table_compactor.h), an ANALYZE when
// more than the session's auto_analyze_threshold of the table's rows were deleted since the statistics last
// described the live rows alone, and a compaction when more than its compaction_threshold of the rows stored in
// the table's blocks are deleted. The statement returns without waiting for either.
void MaintainAfterChange(Database& database, const TableDescriptor& table, const QueryRunOptions& options) {
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> current = database.catalog().GetTable(table.name);
  if (!current.ok() || (*current)->table_id != table.table_id) return;
  const TableDescriptor& version = **current;
  const double live_and_stale = static_cast<double>(version.row_count + version.stale_rows);
  int64_t stored = 0;
  int64_t deleted = 0;
  for (const SegmentDescriptor& segment : version.segments) {
    stored += segment.row_count;
    for (const auto& rows : segment.deleted) deleted += rows != nullptr ? rows->deleted_count() : 0;
  }
  // The compaction first: when it rewrites every segment, the statistics are exact after it and the ANALYZE is
  // skipped.
  if (options.compaction_threshold > 0 && deleted > options.compaction_threshold * static_cast<double>(stored)) {
    database.compactor().Request(table.name, options.compress_loads);
  }
  if (options.auto_analyze_threshold > 0 && version.stale_rows > options.auto_analyze_threshold * live_and_stale) {
    database.compactor().RequestAnalyze(table.name);
  }
}

// Whether a SET value of type `from` may be stored in a column of type `to` (then cast like INSERT does).
bool Assignable(const Type& from, const Type& to) {
  if (from.id() == TypeId::kNull || from == to || from.IsString() || to.IsString()) return true;
  if (from.IsNumeric() && to.IsNumeric()) return true;
  const auto temporal = [](const Type& t) { return t.id() == TypeId::kDate || t.id() == TypeId::kTimestamp; };
  return temporal(from) && temporal(to);
}

}  // namespace

absl::StatusOr<QueryResult> ExecuteDelete(Database& database, const parser::DeleteStatement& statement,
                                          const QueryRunOptions& options) {
  absl::MutexLock dml(&DmlMutex());
  RetiredSegments::Get().Collect(database.storage());
  TESSERA_ASSIGN_OR_RETURN(FoundRows found,
                           FindRows(database, statement.table, *statement.query, statement.text, options));
  TESSERA_ASSIGN_OR_RETURN(FoundRowSet rows, CollectRowIds(*found.snapshot, *found.query->manager().result()));
  found.query.reset();
  if (rows.rows == 0) return StatusOnly("DELETE 0", 0);
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> nulls, NullsOfRows(database, *found.snapshot, rows));
  TESSERA_ASSIGN_OR_RETURN(int64_t deleted, CommitChange(database, *found.snapshot, rows, nulls, nullptr, {}));
  MaintainAfterChange(database, *found.snapshot, options);
  return StatusOnly(absl::StrCat("DELETE ", deleted), deleted);
}

absl::StatusOr<QueryResult> ExecuteUpdate(Database& database, const parser::UpdateStatement& statement,
                                          const QueryRunOptions& options) {
  absl::MutexLock dml(&DmlMutex());
  RetiredSegments::Get().Collect(database.storage());
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table, database.catalog().GetTable(statement.table));
  // The column each assignment sets, checked before the query runs.
  std::vector<int> targets;
  for (const parser::UpdateStatement::Assignment& assignment : statement.assignments) {
    const int column = FindColumn(table->columns, assignment.column);
    if (column < 0) {
      return absl::NotFoundError(parser::FormatErrorWithCaret(
          statement.text, assignment.position,
          absl::StrCat("column '", assignment.column, "' of table '", table->name, "' does not exist")));
    }
    if (std::find(targets.begin(), targets.end(), column) != targets.end()) {
      return absl::InvalidArgumentError(parser::FormatErrorWithCaret(
          statement.text, assignment.position, absl::StrCat("column '", assignment.column, "' is set more than once")));
    }
    targets.push_back(column);
  }
  TESSERA_ASSIGN_OR_RETURN(FoundRows found,
                           FindRows(database, statement.table, *statement.query, statement.text, options));
  const TableDescriptor& snapshot = *found.snapshot;
  const size_t width = snapshot.columns.size();
  if (found.columns.size() != width + targets.size() + 1) {
    return absl::InternalError(absl::StrCat("the UPDATE query returns ", found.columns.size(),
                                            " columns, not the table's ", width, ", the ", targets.size(),
                                            " values and the row id"));
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    const ColumnSchema& column = snapshot.columns[targets[i]];
    const Type& type = found.columns[width + i].type;
    if (!Assignable(type, column.type)) {
      return absl::InvalidArgumentError(
          parser::FormatErrorWithCaret(statement.text, statement.assignments[i].position,
                                       absl::StrCat("column '", column.name, "' is of type ", column.type.ToString(),
                                                    " but the expression is of type ", type.ToString())));
    }
  }
  // Each found row once (a FROM join may match a row several times: which match would win is not defined).
  const TemporaryRelation& relation = *found.query->manager().result();
  TESSERA_ASSIGN_OR_RETURN(FoundRowSet found_rows, CollectRowIds(snapshot, relation));
  if (found_rows.rows != found_rows.row_ids) {
    return absl::InvalidArgumentError(
        absl::StrCat("UPDATE: a row of '", snapshot.name, "' matches more than one row of the FROM tables"));
  }
  if (found_rows.rows == 0) return StatusOnly("UPDATE 0", 0);
  TESSERA_ASSIGN_OR_RETURN(std::vector<int64_t> nulls, NullsOfRows(database, snapshot, found_rows));
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<SegmentWriter> writer,
                           database.storage().CreateSegmentWriter(database.catalog().AllocateSegmentId()));
  LoadedRows loaded;
  std::vector<std::vector<Value>> rows;
  int64_t row_number = 0;
  auto flush = [&]() -> absl::Status {
    if (rows.empty()) return absl::OkStatus();
    TESSERA_ASSIGN_OR_RETURN(LoadedRows chunk, LoadRows(snapshot, rows, database.storage(), *writer));
    loaded.Append(std::move(chunk));
    rows.clear();
    return absl::OkStatus();
  };
  for (uint32_t b = 0; b < relation.block_count(); ++b) {
    const BlockView block = relation.block(b);
    for (uint32_t r = 0; r < block.row_count(); ++r) {
      ++row_number;
      std::vector<Value> row(width);
      for (size_t c = 0; c < width; ++c) row[c] = block.GetValue(static_cast<int>(c), r, snapshot.columns[c].type);
      for (size_t i = 0; i < targets.size(); ++i) {
        const ColumnSchema& column = snapshot.columns[targets[i]];
        Value value = block.GetValue(static_cast<int>(width + i), r, found.columns[width + i].type);
        if (value.is_null()) {
          if (column.not_null) {
            return absl::InvalidArgumentError(absl::StrCat("UPDATE: NULL in NOT NULL column '", column.name, "'"));
          }
          row[targets[i]] = Value::Null(column.type);
          continue;
        }
        absl::StatusOr<Value> cast = value.CastTo(column.type);
        if (!cast.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("UPDATE row ", row_number, ", column ", column.name, ": ", cast.status().message()));
        }
        row[targets[i]] = *std::move(cast);
      }
      rows.push_back(std::move(row));
      if (rows.size() == kRowsPerLoadChunk) TESSERA_RETURN_IF_ERROR(flush());
    }
  }
  TESSERA_RETURN_IF_ERROR(flush());
  found.query.reset();
  const int64_t updated = loaded.row_count;
  TESSERA_RETURN_IF_ERROR(
      CommitChange(database, snapshot, found_rows, nulls, std::move(writer), std::move(loaded)).status());
  MaintainAfterChange(database, snapshot, options);
  return StatusOnly(absl::StrCat("UPDATE ", updated), updated);
}

namespace {

// Installs a compaction of `table`: the segments `rewritten` (all with deleted rows) are replaced by the new
// segment `writer` wrote with their live rows (none when `loaded` is empty). When no other segment remains, the new
// segment's statistics are those of the table's live rows: they replace the table's and nothing is stale any more.
absl::Status CommitCompaction(Database& database, const TableDescriptor& table, const std::vector<uint64_t>& rewritten,
                              std::unique_ptr<SegmentWriter> writer, LoadedRows loaded) {
  StorageManager& storage = database.storage();
  const bool appends = loaded.row_count > 0;
  SegmentDescriptor segment;
  if (appends) {
    TESSERA_RETURN_IF_ERROR(writer->Finish());  // outside the mutex: it waits for the disk
    segment = DescribeSegment(writer->segment_id(), loaded);
  }
  auto abandon = [&](absl::Status status) {
    if (appends) storage.DeleteSegmentFile(segment.segment_id);
    return status;
  };
  absl::MutexLock lock(&TableWriteMutex());
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> current = database.catalog().GetTable(table.name);
  if (!current.ok() || (*current)->table_id != table.table_id) return abandon(absl::OkStatus());  // dropped
  auto updated = std::make_shared<TableDescriptor>(**current);
  auto is_rewritten = [&](const SegmentDescriptor& s) {
    return std::find(rewritten.begin(), rewritten.end(), s.segment_id) != rewritten.end();
  };
  // Statements run one at a time (DmlMutex), so the segments still have the deletions the compaction read.
  for (const SegmentDescriptor& s : updated->segments) {
    if (is_rewritten(s)) RetiredSegments::Get().Retire(storage, s);
  }
  std::erase_if(updated->segments, is_rewritten);
  if (updated->segments.empty()) {
    updated->statistics = appends ? loaded.statistics : std::vector<ColumnStatistics>(table.columns.size());
    updated->stale_rows = 0;
  }
  if (appends) {
    updated->segments.push_back(segment);
    storage.RegisterSegment(segment, table.columns, std::move(loaded.blocks));
  }
  if (absl::Status committed = database.catalog().ReplaceTable(*current, std::move(updated)); !committed.ok()) {
    if (appends) storage.DropSegment(segment.segment_id);
    return committed;
  }
  return absl::OkStatus();
}

// Compacts one table version (the caller holds DmlMutex): the live rows of its segments with deleted rows are
// copied a vector at a time (BlockScanner with the deletion bitmaps: DeletedRows::LiveRows; VectorBlockWriter) into
// full blocks of one new segment, and CommitCompaction swaps the segments in one catalog commit. Queries that
// started before keep reading the old segments (RetiredSegments). Runs on the calling thread (VACUUM's session,
// the background compactor), outside the Foreman: the blocks must be filled across input blocks, which work
// orders of one block each would not do.
absl::Status CompactTableLocked(Database& database, const std::shared_ptr<const TableDescriptor>& table,
                                const QueryRunOptions& options) {
  std::vector<uint64_t> rewritten;
  for (const SegmentDescriptor& s : table->segments) {
    if (!s.deleted.empty()) rewritten.push_back(s.segment_id);
  }
  if (rewritten.empty()) return absl::OkStatus();
  StorageManager& storage = database.storage();
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<SegmentWriter> writer,
                           storage.CreateSegmentWriter(database.catalog().AllocateSegmentId()));
  ScanSpec scan;
  for (size_t c = 0; c < table->columns.size(); ++c) {
    scan.block_columns.push_back(static_cast<int>(c));
    scan.types.push_back(table->columns[c].type);
  }
  scan.Prepare();
  LoadBlockWriter out(table->columns, storage, *writer, nullptr, options.compress_loads);
  VectorBlockWriter vectors(
      table->columns, table->block_size_bytes, [&out](BlockBuilder& builder) { return out.Flush(builder); },
      absl::StrCat("VACUUM ", table->name, ": a row is too large for the table's block size"));
  std::vector<const ColumnVector*> columns(table->columns.size());
  for (const SegmentDescriptor& segment : table->segments) {
    if (segment.deleted.empty()) continue;
    for (uint32_t b = 0; b < segment.blocks.size(); ++b) {
      if (options.cancel_requested != nullptr && options.cancel_requested->load()) {
        return absl::CancelledError("VACUUM cancelled");  // the unfinished writer removes its file
      }
      TESSERA_ASSIGN_OR_RETURN(BlockHandle handle, storage.PinBlock(BlockId{segment.segment_id, b}));
      BlockScanner scanner(scan);
      scanner.SetBlockRows(segment.DeletedIn(b), 0);
      while (true) {
        TESSERA_ASSIGN_OR_RETURN(bool more, scanner.Next(handle.view()));
        if (!more) break;
        if (scanner.selected_count() == 0) continue;
        for (size_t c = 0; c < columns.size(); ++c) columns[c] = &scanner.batch().columns[c];
        TESSERA_RETURN_IF_ERROR(vectors.Append(columns, scanner.selection(), scanner.batch().size));
      }
    }
  }
  TESSERA_RETURN_IF_ERROR(vectors.Flush());
  return CommitCompaction(database, *table, rewritten, std::move(writer), std::move(out.loaded()));
}

}  // namespace

absl::Status CompactTable(Database& database, const std::string& table_name, const QueryRunOptions& options) {
  absl::MutexLock dml(&DmlMutex());
  RetiredSegments::Get().Collect(database.storage());
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = database.catalog().GetTable(table_name);
  if (!table.ok()) return absl::OkStatus();  // dropped meanwhile: nothing to compact
  absl::Status status = CompactTableLocked(database, *table, options);
  table->reset();
  RetiredSegments::Get().Collect(database.storage());
  return status;
}

absl::StatusOr<QueryResult> ExecuteVacuum(Database& database, const parser::VacuumStatement& statement,
                                          const QueryRunOptions& options) {
  absl::MutexLock dml(&DmlMutex());
  StorageManager& storage = database.storage();
  RetiredSegments::Get().Collect(storage);
  TESSERA_ASSIGN_OR_RETURN(auto tables, NamedTableOrAll(database.catalog(), statement.table));
  for (const auto& table : tables) TESSERA_RETURN_IF_ERROR(CompactTableLocked(database, table, options));
  tables.clear();  // our own references to the versions just replaced
  RetiredSegments::Get().Collect(storage);
  return StatusOnly("VACUUM", 0);
}

}  // namespace tessera
