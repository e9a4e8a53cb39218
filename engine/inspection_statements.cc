// SHOW and DESCRIBE.

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "catalog/catalog.h"
#include "common/status_macros.h"
#include "engine/query_activity.h"
#include "engine/statement_handlers.h"
#include "parser/parser.h"
#include "scheduler/foreman.h"
#include "storage/block_statistics.h"
#include "storage/buffer_pool.h"
#include "storage/storage_manager.h"

namespace tessera {
namespace {

void AddColumn(QueryResult& result, std::string name, Type type) {
  result.columns.push_back(ResultColumn{std::move(name), type});
}

}  // namespace

absl::StatusOr<QueryResult> ExecuteDescribe(Database& database, const parser::DescribeStatement& statement) {
  QueryResult result;
  result.returns_rows = true;
  AddColumn(result, "column_name", Type::Varchar());
  AddColumn(result, "column_type", Type::Varchar());
  AddColumn(result, "null", Type::Varchar());
  AddColumn(result, "default", Type::Varchar());
  if (database.catalog().HasView(statement.table)) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<ResultColumn> columns, DescribeView(database, statement.table));
    for (const ResultColumn& column : columns) {
      result.rows.push_back({Value::String(column.name), Value::String(column.type.ToString()), Value::String("YES"),
                             Value::Null(Type::Varchar())});
    }
    return result;
  }
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table, database.catalog().GetTable(statement.table));
  for (const ColumnSchema& column : table->columns) {
    result.rows.push_back(
        {Value::String(column.name), Value::String(column.type.ToString()),
         Value::String(column.not_null ? "NO" : "YES"),
         column.default_value ? Value::String(column.default_value->ToString()) : Value::Null(Type::Varchar())});
  }
  return result;
}

absl::StatusOr<QueryResult> ExecuteShow(Database& database, const parser::ShowStatement& statement) {
  QueryResult result;
  result.returns_rows = true;
  if (statement.name == "queries") {
    AddColumn(result, "query_id", Type::BigInt());
    AddColumn(result, "session_id", Type::Varchar());
    AddColumn(result, "priority", Type::Integer());
    AddColumn(result, "admission", Type::Varchar());
    AddColumn(result, "progress", Type::Double());
    AddColumn(result, "elapsed_ms", Type::BigInt());
    AddColumn(result, "sql", Type::Varchar());
    ActivityProvider* activity = database.activity_provider();
    if (activity == nullptr) return result;  // no server: this session is the only one
    for (const RunningStatement& running : activity->RunningStatements()) {
      result.rows.push_back(
          {Value::BigInt(running.query_id), Value::String(running.session_id), Value::Integer(running.priority),
           running.admission.empty() ? Value::Null(Type::Varchar()) : Value::String(running.admission),
           running.fraction_done < 0 ? Value::Null(Type::Double()) : Value::Double(running.fraction_done),
           Value::BigInt(running.elapsed_us / 1000), Value::String(running.sql)});
    }
    return result;
  }
  if (statement.name == "tables") {
    AddColumn(result, "name", Type::Varchar());
    AddColumn(result, "kind", Type::Varchar());
    AddColumn(result, "rows", Type::BigInt());
    AddColumn(result, "blocks", Type::BigInt());
    for (const auto& table : database.catalog().ListTables()) {
      result.rows.push_back({Value::String(table->name), Value::String("table"), Value::BigInt(table->row_count),
                             Value::BigInt(table->BlockCount())});
    }
    for (const auto& view : database.catalog().ListViews()) {
      result.rows.push_back(
          {Value::String(view->name), Value::String("view"), Value::Null(Type::BigInt()), Value::Null(Type::BigInt())});
    }
    return result;
  }
  if (statement.name == "stats") {
    TESSERA_ASSIGN_OR_RETURN(const auto tables, NamedTableOrAll(database.catalog(), statement.target));
    AddColumn(result, "table_name", Type::Varchar());
    AddColumn(result, "column_name", Type::Varchar());
    AddColumn(result, "row_count", Type::BigInt());
    AddColumn(result, "null_count", Type::BigInt());
    AddColumn(result, "distinct_estimate", Type::BigInt());
    AddColumn(result, "min", Type::Varchar());
    AddColumn(result, "max", Type::Varchar());
    AddColumn(result, "encoding", Type::Varchar());
    AddColumn(result, "stored_bytes", Type::BigInt());
    AddColumn(result, "plain_bytes", Type::BigInt());
    // Rows deleted since ANALYZE last described the live rows alone (catalog.h): while not 0, min, max and
    // distinct_estimate are estimates that may still cover them; row_count and null_count are exact.
    AddColumn(result, "stale_rows", Type::BigInt());
    for (const auto& table : tables) {
      // How the columns are stored is read from the blocks' column directories (each block pinned once).
      std::vector<ColumnStorage> storage(table->columns.size());
      for (const SegmentDescriptor& segment : table->segments) {
        for (uint32_t b = 0; b < segment.blocks.size(); ++b) {
          TESSERA_ASSIGN_OR_RETURN(BlockHandle handle, database.storage().PinBlock(BlockId{segment.segment_id, b}));
          AccumulateColumnStorage(handle.view(), table->columns, &storage);
        }
      }
      for (size_t c = 0; c < table->columns.size(); ++c) {
        const ColumnStatistics& stats = table->statistics[c];
        auto text = [](const Value& v) {
          return v.is_null() ? Value::Null(Type::Varchar()) : Value::String(v.ToString());
        };
        result.rows.push_back({Value::String(table->name), Value::String(table->columns[c].name),
                               Value::BigInt(table->row_count), Value::BigInt(stats.null_count),
                               Value::BigInt(stats.DistinctEstimate(table->row_count - stats.null_count)),
                               text(stats.min), text(stats.max), Value::String(storage[c].EncodingSummary()),
                               Value::BigInt(storage[c].stored_bytes), Value::BigInt(storage[c].plain_bytes),
                               Value::BigInt(table->stale_rows)});
      }
    }
    return result;
  }
  if (statement.name == "memory") {
    MemoryUsage usage = database.buffer_pool().Usage();
    AddColumn(result, "kind", Type::Varchar());
    AddColumn(result, "bytes", Type::BigInt());
    const char* names[kNumMemoryKinds] = {"base blocks", "temporary blocks", "blobs"};
    for (int k = 0; k < kNumMemoryKinds; ++k) {
      result.rows.push_back({Value::String(names[k]), Value::BigInt(static_cast<int64_t>(usage.by_kind[k]))});
    }
    // Base blocks are held compressed: what they would take plain, and the ratio of the two in percent.
    const ResidentBlockBytes resident = database.storage().ResidentBytes();
    result.rows.push_back({Value::String("base blocks uncompressed"), Value::BigInt(resident.plain)});
    result.rows.push_back({Value::String("compression ratio (percent)"),
                           Value::BigInt(resident.stored > 0 ? resident.plain * 100 / resident.stored : 100)});
    result.rows.push_back({Value::String("total used"), Value::BigInt(static_cast<int64_t>(usage.used_bytes))});
    result.rows.push_back({Value::String("budget"), Value::BigInt(static_cast<int64_t>(usage.budget_bytes))});
    result.rows.push_back({Value::String("huge pages"), Value::BigInt(static_cast<int64_t>(usage.huge_page_bytes))});
    result.rows.push_back({Value::String("resident blocks"), Value::BigInt(database.storage().ResidentBlockCount())});
    result.rows.push_back({Value::String("evictions"), Value::BigInt(usage.evictions)});
    // The load controller's side (0 when admission control is off).
    TESSERA_ASSIGN_OR_RETURN(ForemanStats scheduler, database.foreman().GetStats());
    result.rows.push_back({Value::String("admission threshold"), Value::BigInt(scheduler.load.threshold_bytes)});
    result.rows.push_back(
        {Value::String("promised to running queries"), Value::BigInt(scheduler.load.claimable_bytes)});
    result.rows.push_back({Value::String("spilled by suspended queries"), Value::BigInt(scheduler.load.spilled_bytes)});
    result.rows.push_back({Value::String("spilled since start"), Value::BigInt(scheduler.load.spilled_bytes_total)});
    return result;
  }
  return absl::NotFoundError(absl::StrCat("unknown setting '", statement.name, "'"));
}

absl::StatusOr<QueryResult> ExecuteCancelQuery(Database& database, const parser::CancelQueryStatement& statement) {
  ActivityProvider* activity = database.activity_provider();
  if (activity == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no running query ", statement.query_id, " (CANCEL QUERY reaches the sessions of a server)"));
  }
  TESSERA_RETURN_IF_ERROR(activity->CancelStatement(statement.query_id));
  QueryResult result;
  result.status_message = "CANCEL";
  return result;
}

}  // namespace tessera
