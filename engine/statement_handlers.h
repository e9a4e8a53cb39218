#pragma once
// Execution of statements for the session: DDL, COPY TO, INSERT ... VALUES, SHOW/DESCRIBE run directly; SELECT,
// INSERT ... SELECT and COPY FROM go through the query engine and the Foreman. Internal to engine/
// (also used by the server for DescribeTable and by tests and benchmarks that run a DAG directly).

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/query_result.h"
#include "engine/result_sink.h"
#include "engine/session.h"
#include "optimizer/optimizer_options.h"
#include "parser/ast.h"
#include "query_execution/execution_dag.h"
#include "scheduler/execution_query.h"
#include "storage/delimited_file.h"

namespace tessera {

class TemporaryRelation;
class TableLoad;
class CopyChannel;

absl::StatusOr<QueryResult> ExecuteCreateTable(Database& database, const parser::CreateTableStatement& statement);
// CREATE TABLE name [WITH (...)] AS query: a table of the query's column names and types (nullable, no defaults),
// filled as INSERT ... SELECT fills one; status "SELECT <rows>". A failed query or load drops the new table again.
// IF NOT EXISTS over an existing table does nothing ("SELECT 0").
absl::StatusOr<QueryResult> ExecuteCreateTableAs(Database& database, const parser::CreateTableStatement& statement,
                                                 const QueryRunOptions& options);
absl::StatusOr<QueryResult> ExecuteDropTable(Database& database, const parser::DropStatement& statement);
// INSERT ... VALUES: values are cast to the target columns' types, missing columns get their DEFAULT.
absl::StatusOr<QueryResult> ExecuteInsert(Database& database, const parser::InsertStatement& statement);
// How a session runs a query: its priority under the scheduler's policy (SET priority = N), where it publishes
// the running query's scheduler id (0 before and after, so that another thread can cancel it or read its
// progress), the cancel flag (checked once the id is published, so a cancel that arrives just before submission
// is not lost), the rules SET disabled_rules switches off, SET pipelining = elastic (per-operator limits from
// measured rates, scheduler/elastic_pipelining.h) and SET pipelining = off or lazy (every DAG edge blocking:
// consumers start when their producers have finished; the answers are the same), and SET scan_sharing (whether
// the query's table scans run beside other queries' on the same blocks; the answers are the same).
struct QueryRunOptions {
  int priority = 1;
  std::atomic<QueryId>* running_query = nullptr;
  const std::atomic<bool>* cancel_requested = nullptr;
  optimizer::OptimizerOptions optimizer;
  bool pipelining = true;
  bool elastic_pipelining = false;  // SET pipelining = elastic (pipelining stays true)
  ScanSharing scan_sharing = ScanSharing::kOff;
  // SET statement_timeout (milliseconds; 0 = none): a query running longer is cancelled with DeadlineExceeded.
  int64_t statement_timeout_ms = 0;
  // SET compression: whether COPY and INSERT build compressed base blocks (storage/column_encoding.h; default on).
  bool compress_loads = true;
  // SET auto_analyze_threshold: a DELETE or UPDATE that leaves more than this fraction of a table's rows (live +
  // stale) deleted since its last ANALYZE re-analyzes the table before it returns (0 = never).
  double auto_analyze_threshold = 0.1;
  // SET compaction_threshold: a DELETE or UPDATE that leaves more than this fraction of a table's stored rows
  // deleted starts its compaction in the background (dml_statements.cc; 0 = never).
  double compaction_threshold = 0.2;
  // Where a SELECT's rows go as the query produces them (engine/result_sink.h); null: collected in the result.
  ResultSink* result_sink = nullptr;
};

// COPY t FROM 'file' as a query under the Foreman (relational_operators/copy_from_operator.h): progress by chunks,
// cancellable like a SELECT; COPY t TO 'file' directly.
absl::StatusOr<QueryResult> ExecuteCopy(Database& database, const parser::CopyStatement& statement,
                                        const QueryRunOptions& options);
// The file format COPY `statement` names (its options, and .tbl files read as dbgen writes them).
absl::StatusOr<DelimitedFormat> CopyStatementFormat(const parser::CopyStatement& statement);
// COPY ... FROM STDIN / TO STDOUT (copy_stream_statements.cc): the data is a stream through `channel`, the
// client's connection (engine/copy_channel.h); FailedPrecondition without one. FROM STDIN commits only when the
// whole stream loaded; TO STDOUT streams the rows of the table (or of COPY's query) under the Foreman.
absl::StatusOr<QueryResult> ExecuteCopyStream(Database& database, const parser::CopyStatement& statement,
                                              const QueryRunOptions& options, CopyChannel* channel);
// COPY t FROM a named pipe (the path's file access already checked): read as a stream as FROM STDIN is, until the
// last writer closes it, waiting for a writer as long as it takes; cancellation and statement_timeout take effect
// within 100 ms also while nothing is written. Commits only when the whole stream loaded.
absl::StatusOr<QueryResult> ExecuteCopyFromPipe(Database& database, const parser::CopyStatement& statement,
                                                const QueryRunOptions& options);
// A new load into `table` (relational_operators/table_load.h): its segment and its commit into the table's
// current version; its blocks compressed unless SET compression = off.
absl::StatusOr<std::shared_ptr<TableLoad>> StartLoad(Database& database, std::shared_ptr<const TableDescriptor> table,
                                                     const QueryRunOptions& options);
// The table columns a COPY / INSERT column list names, in its order (empty list: empty result); NotFound with the
// closest name for an unknown column, InvalidArgument for a column listed twice.
absl::StatusOr<std::vector<int>> ResolveColumnList(const TableDescriptor& table, const std::vector<std::string>& names);
// The table a statement names, or every table (sorted by name) when `name` is empty: ANALYZE [t], VACUUM [t],
// SHOW STATS [t]. NotFound for an unknown table.
absl::StatusOr<std::vector<std::shared_ptr<const TableDescriptor>>> NamedTableOrAll(const Catalog& catalog,
                                                                                    const std::string& name);
// INSERT ... SELECT as one query under the Foreman: the SELECT's DAG ends in an InsertOperator
// (relational_operators/insert_operator.h) that casts, builds the table's blocks and commits them at the end.
absl::StatusOr<QueryResult> ExecuteInsertSelect(Database& database, const parser::InsertStatement& statement,
                                                const QueryRunOptions& options);
// Reads the blocks of a running query's result relation as they appear (blocks below block_count() are complete),
// releasing each it has read; returns whether it released any, or an error that cancels the query.
using ResultDrain = std::function<absl::StatusOr<bool>(TemporaryRelation& result)>;
// Runs `dag` under the Foreman like every query: publishes its id in `options.running_query` while it runs (so
// that Session::Cancel can reach it) and returns the finished query, or its error. With `drain`, the result is
// streamed: `drain` runs on this thread whenever result blocks were written, and once more after the query
// finished successfully; the query pauses while more than kResultBacklogBytes of its result are unread.
absl::StatusOr<std::shared_ptr<ExecutionQuery>> RunDag(Database& database, std::unique_ptr<ExecutionDag> dag,
                                                       const QueryRunOptions& options,
                                                       const ResultDrain& drain = nullptr);
// The unread result bytes a streamed query may hold before it pauses: a few blocks, so a slow client costs the
// server a bounded amount of memory per query.
inline constexpr size_t kResultBacklogBytes = 8u << 20;

// Runs an optimized plan like a SELECT (not streamed) and returns its rows. With a PlanRunner calling it in
// `options.optimizer.run_plan` (Session::RunOptions), the binder evaluates WITH RECURSIVE queries.
absl::StatusOr<std::vector<std::vector<Value>>> RunPlanRows(Database& database, const optimizer::LogicalOperator& plan,
                                                            const QueryRunOptions& options);

// "name" with embedded quotes doubled, so that any table, column or view name parses back as itself in SQL that
// the engine writes (a view's text, COPY t TO STDOUT's SELECT).
std::string QuoteIdentifier(const std::string& name);

// SELECT through the query engine (binder, optimizer, operator DAG, work orders).
absl::StatusOr<QueryResult> ExecuteQuery(Database& database, const parser::SelectQueryStatement& statement,
                                         const QueryRunOptions& options);
// The same for a query given as its AST; `text` is what its positions refer to.
absl::StatusOr<QueryResult> ExecuteSelect(Database& database, const parser::SelectStatement& query,
                                          std::string_view text, const QueryRunOptions& options);
// EXPLAIN [ANALYZE] [(FORMAT DOT)] SELECT: the logical plan, the operator DAG and its memory estimate; ANALYZE
// runs the query and adds per-operator work orders, rows and busy time, and the optimizer's per-rule times. One
// row per line in the single column `plan`. EXPLAIN ANALYZE can be cancelled like the query it runs.
absl::StatusOr<QueryResult> ExecuteExplain(Database& database, const parser::ExplainStatement& statement,
                                           const QueryRunOptions& options);
// The output columns of the SELECT statement `sql`, bound against the current catalog, without running it.
absl::StatusOr<std::vector<ResultColumn>> DescribeQuery(Database& database, std::string_view sql);
// The output columns of view `name` (its query bound against the current catalog).
absl::StatusOr<std::vector<ResultColumn>> DescribeView(Database& database, const std::string& name);
// The memory estimate EXPLAIN prints and the load controller admits by, for the SELECT statement `sql`, without
// running it.
absl::StatusOr<QueryMemoryEstimate> EstimateQueryMemory(Database& database, std::string_view sql);
absl::StatusOr<QueryResult> ExecuteCreateView(Database& database, const parser::CreateViewStatement& statement);
// SHOW TABLES / STATS / MEMORY, and SHOW QUERIES: the statements running in the server's sessions
// (engine/query_activity.h; query id, session, priority, admission, progress, elapsed time, SQL).
absl::StatusOr<QueryResult> ExecuteShow(Database& database, const parser::ShowStatement& statement);
// CANCEL QUERY id: cancels a statement of any session of the server, as the Cancel RPC does; NotFound otherwise.
absl::StatusOr<QueryResult> ExecuteCancelQuery(Database& database, const parser::CancelQueryStatement& statement);
absl::StatusOr<QueryResult> ExecuteDescribe(Database& database, const parser::DescribeStatement& statement);
absl::StatusOr<QueryResult> ExecuteAnalyze(Database& database, const parser::AnalyzeStatement& statement);
// ANALYZE of one table version: statistics of its live rows, committed with stale_rows = 0 (Aborted if another
// version was committed meanwhile). The caller holds TableWriteMutex().
absl::Status AnalyzeTableLocked(Database& database, const std::shared_ptr<const TableDescriptor>& table);
// ANALYZE of the current version of `table` when its statistics are stale (stale_rows > 0); the automatic ANALYZE
// after DELETE / UPDATE (engine/table_compactor.h). A table dropped meanwhile is OK.
absl::Status AnalyzeStaleTable(Database& database, const std::string& table);

// Table writes (load commits, DELETE / UPDATE / VACUUM commits, DROP TABLE, ANALYZE) are serialized by this mutex:
// each commits a new catalog version built on the current one, holding it only for the commit.
absl::Mutex& TableWriteMutex();

// DELETE / UPDATE (dml_statements.cc): the rows are found by a query under the Foreman over the table's current
// version; the deletions (and UPDATE's new rows, a new segment) are installed by one catalog commit, so the table
// is as before or as after, also for a process killed meanwhile. "DELETE n" / "UPDATE n" with rows_affected = n.
absl::StatusOr<QueryResult> ExecuteDelete(Database& database, const parser::DeleteStatement& statement,
                                          const QueryRunOptions& options);
absl::StatusOr<QueryResult> ExecuteUpdate(Database& database, const parser::UpdateStatement& statement,
                                          const QueryRunOptions& options);
// VACUUM [t]: rewrites the segments that have deleted rows without them (one new segment per table, the live rows
// copied a vector at a time on the calling thread into full blocks) and commits the swap atomically; the old
// segment files go once no running query reads them.
absl::StatusOr<QueryResult> ExecuteVacuum(Database& database, const parser::VacuumStatement& statement,
                                          const QueryRunOptions& options);
// VACUUM of one table, the background compaction's path (engine/table_compactor.h): waits for DELETE / UPDATE /
// VACUUM statements (one at a time), then compacts the table's current version. A table dropped meanwhile is OK.
absl::Status CompactTable(Database& database, const std::string& table, const QueryRunOptions& options);

}  // namespace tessera
