// SELECT through the query engine: bind and optimize (optimizer/), build the operator DAG (query_execution/),
// run its work orders, and collect the result relation's rows.

#include <chrono>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "catalog/catalog.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "engine/statement_handlers.h"
#include "optimizer/binder.h"
#include "parser/parser.h"
#include "query_execution/dag_printer.h"
#include "query_execution/plan_builder.h"
#include "query_execution/query_manager.h"
#include "scheduler/execution_query.h"
#include "scheduler/foreman.h"
#include "storage/buffer_pool.h"
#include "storage/storage_manager.h"

namespace tessera {
absl::StatusOr<std::shared_ptr<ExecutionQuery>> RunDag(Database& database, std::unique_ptr<ExecutionDag> dag,
                                                       const QueryRunOptions& options, const ResultDrain& drain) {
  if (!options.pipelining) dag->MakeAllEdgesBlocking();
  const QueryId query_id = database.NextQueryId();
  // Operators that wait for something other than their work orders (exchanges) ask the Foreman to look again.
  Foreman* foreman = &database.foreman();
  for (int i = 0; i < dag->size(); ++i) {
    dag->op(i)->SetWakeUp([foreman, query_id] { foreman->Poke(query_id).IgnoreError(); });
  }
  auto query = std::make_shared<ExecutionQuery>(
      query_id, options.priority, std::make_unique<QueryManager>(std::move(dag)), database.options().worker_threads);
  query->set_scan_sharing(options.scan_sharing);
  query->set_elastic_pipelining(options.elastic_pipelining);
  auto state = std::make_shared<QueryHandle::State>();
  TemporaryRelation& result = *query->manager().result();
  if (drain) {
    query->set_result_backlog_limit(kResultBacklogBytes);
    result.set_append_listener([state] { state->Notify(); });
  }
  TESSERA_ASSIGN_OR_RETURN(QueryHandle handle, database.foreman().Submit(query, state));
  const QueryId id = query->query_id();
  // A wake-up before the Foreman knew the query (the DAG's first operators start at construction) was lost.
  database.foreman().Poke(id).IgnoreError();
  options.running_query->store(id);
  // A Cancel() that came before the id was published found nothing to cancel; cancel on its behalf.
  if (options.cancel_requested->load()) database.foreman().Cancel(id).IgnoreError();
  const bool has_deadline = options.statement_timeout_ms > 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options.statement_timeout_ms);
  bool timed_out = false;
  absl::Status drain_status;
  if (drain) {
    // Read what the query has written whenever it writes, until it is done; a drain error cancels it.
    for (;;) {
      const uint64_t seen = handle.events();
      if (handle.done()) break;
      if (drain_status.ok()) {
        absl::StatusOr<bool> released = drain(result);
        if (!released.ok()) {
          drain_status = released.status();
          database.foreman().Cancel(id).IgnoreError();
        } else if (*released) {
          database.foreman().Poke(id).IgnoreError();  // it may have paused on its backlog
        }
      }
      const bool done =
          has_deadline && !timed_out ? handle.WaitForEventOrDone(seen, deadline) : handle.WaitForEventOrDone(seen);
      if (!done && has_deadline && !timed_out && std::chrono::steady_clock::now() >= deadline) {
        timed_out = database.foreman().Cancel(id).ok();
      }
    }
  } else if (has_deadline && !handle.WaitFor(std::chrono::milliseconds(options.statement_timeout_ms))) {
    timed_out = database.foreman().Cancel(id).ok();
  }
  const QueryOutcome& outcome = handle.Wait();
  options.running_query->store(0);
  if (timed_out && !outcome.status.ok()) {
    return absl::DeadlineExceededError(absl::StrCat("statement timeout (", options.statement_timeout_ms,
                                                    " ms, SET statement_timeout) exceeded: the query was cancelled"));
  }
  TESSERA_RETURN_IF_ERROR(drain_status);
  TESSERA_RETURN_IF_ERROR(query->manager().status());
  TESSERA_RETURN_IF_ERROR(outcome.status);
  if (drain) TESSERA_RETURN_IF_ERROR(drain(result).status());
  return query;
}

absl::StatusOr<QueryResult> ExecuteQuery(Database& database, const parser::SelectQueryStatement& statement,
                                         const QueryRunOptions& options) {
  if (statement.priority > 0) {
    QueryRunOptions with_priority = options;
    with_priority.priority = statement.priority;
    return ExecuteSelect(database, *statement.query, statement.text, with_priority);
  }
  return ExecuteSelect(database, *statement.query, statement.text, options);
}

namespace {

// Materialized rows live outside the buffer pool's blocks (one Value per field, strings copied): before making
// them, the pool must have room for them (a reservation taken and given back at once; the result may outlive the
// database, so it holds none), so that a result too large for the memory limit fails its query alone with a clear
// error instead of growing the process past the limit. The estimate: the Values and row vectors, plus the
// relation's block bytes (an upper bound of the string bytes the Values copy).
size_t RowBytes(int64_t rows, size_t columns) {
  return static_cast<size_t>(rows) * (sizeof(std::vector<Value>) + columns * sizeof(Value));
}

absl::Status CheckResultFits(BufferPool& pool, const TemporaryRelation& relation, size_t columns) {
  int64_t rows = 0;
  size_t block_bytes = 0;
  for (uint32_t b = 0; b < relation.block_count(); ++b) {
    rows += relation.block(b).row_count();
    block_bytes += relation.block_size_bytes();
  }
  const size_t bytes = RowBytes(rows, columns) + block_bytes;
  if (absl::Status reserved = pool.Reserve(MemoryKind::kBlob, bytes); !reserved.ok()) {
    return absl::ResourceExhaustedError(absl::StrCat("the result (", rows, " rows) needs about ", bytes >> 20,
                                                     " MiB to hold, more than the memory limit leaves ",
                                                     "free; add a LIMIT or aggregate (", reserved.message(), ")"));
  }
  pool.Release(MemoryKind::kBlob, bytes);
  return absl::OkStatus();
}

// Rows [begin, end) of a result block as Values (strings copied), the first `columns` columns of `schema`; all
// its rows by default.
std::vector<std::vector<Value>> BlockRows(const BlockView& block, const std::vector<ColumnSchema>& schema,
                                          size_t columns, uint32_t begin = 0, uint32_t end = UINT32_MAX) {
  end = std::min(end, block.row_count());
  std::vector<std::vector<Value>> rows;
  rows.reserve(end - begin);
  for (uint32_t r = begin; r < end; ++r) {
    std::vector<Value> row;
    row.reserve(columns);
    for (size_t c = 0; c < columns; ++c) row.push_back(block.GetValue(static_cast<int>(c), r, schema[c].type));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Runs `dag` and reads its result's first `columns` columns as Values.
absl::StatusOr<std::vector<std::vector<Value>>> CollectRows(Database& database, std::unique_ptr<ExecutionDag> dag,
                                                            size_t columns, const QueryRunOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<ExecutionQuery> query, RunDag(database, std::move(dag), options));
  const TemporaryRelation& relation = *query->manager().result();
  TESSERA_RETURN_IF_ERROR(CheckResultFits(database.buffer_pool(), relation, columns));
  std::vector<std::vector<Value>> rows;
  for (uint32_t b = 0; b < relation.block_count(); ++b) {
    std::vector<std::vector<Value>> block_rows = BlockRows(relation.block(b), relation.schema(), columns);
    std::move(block_rows.begin(), block_rows.end(), std::back_inserter(rows));
  }
  return rows;
}

}  // namespace

// A streamed result goes to its sink in batches of at most this many rows: a few hundred KiB of Values each.
constexpr uint32_t kStreamBatchRows = 4096;

absl::StatusOr<QueryResult> ExecuteSelect(Database& database, const parser::SelectStatement& select,
                                          std::string_view text, const QueryRunOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<optimizer::LogicalOperator> plan,
                           optimizer::PlanQuery(select, database.catalog(), text, options.optimizer));
  TESSERA_ASSIGN_OR_RETURN(
      std::unique_ptr<ExecutionDag> dag,
      BuildExecutionDag(*plan, &database.storage(), &database.buffer_pool(), database.options().cluster));
  QueryResult result;
  result.returns_rows = true;
  for (const optimizer::OutputColumn& column : plan->output()) result.columns.push_back({column.name, column.type});
  const size_t columns = result.columns.size();

  if (options.result_sink != nullptr) {
    // Streamed: each result block is handed to the sink as soon as it is written, in batches of at most
    // kStreamBatchRows rows, and freed once the sink took them. A batch's Values are reserved in the pool while
    // they live.
    TESSERA_RETURN_IF_ERROR(options.result_sink->BeginRows(result.columns));
    BufferPool& pool = database.buffer_pool();
    uint32_t next_block = 0;
    ResultDrain drain = [&](TemporaryRelation& relation) -> absl::StatusOr<bool> {
      const uint32_t available = relation.block_count();
      const bool released = next_block < available;
      for (; next_block < available; ++next_block) {
        BlockView block = relation.block(next_block);
        for (uint32_t begin = 0; begin < block.row_count(); begin += kStreamBatchRows) {
          const uint32_t end = std::min(block.row_count(), begin + kStreamBatchRows);
          // The strings the Values copy are at most the rows' share of the block's bytes.
          const size_t bytes =
              RowBytes(end - begin, columns) + relation.block_size_bytes() / block.row_count() * (end - begin);
          if (absl::Status reserved = pool.Reserve(MemoryKind::kBlob, bytes); !reserved.ok()) {
            return absl::ResourceExhaustedError(absl::StrCat("sending the result needs about ", bytes >> 20,
                                                             " MiB more than the memory limit leaves free (",
                                                             reserved.message(), ")"));
          }
          absl::Status sent = options.result_sink->AddRows(BlockRows(block, relation.schema(), columns, begin, end));
          pool.Release(MemoryKind::kBlob, bytes);
          TESSERA_RETURN_IF_ERROR(sent);
          result.streamed_rows += end - begin;
        }
        relation.ReleaseBlock(next_block);
      }
      return released;
    };
    TESSERA_RETURN_IF_ERROR(RunDag(database, std::move(dag), options, drain).status());
    return result;
  }

  TESSERA_ASSIGN_OR_RETURN(result.rows, CollectRows(database, std::move(dag), columns, options));
  return result;
}

absl::StatusOr<std::vector<std::vector<Value>>> RunPlanRows(Database& database, const optimizer::LogicalOperator& plan,
                                                            const QueryRunOptions& options) {
  TESSERA_ASSIGN_OR_RETURN(
      std::unique_ptr<ExecutionDag> dag,
      BuildExecutionDag(plan, &database.storage(), &database.buffer_pool(), database.options().cluster));
  return CollectRows(database, std::move(dag), plan.output().size(), options);
}

namespace {

// One row of the single `plan` column per line of `text`.
QueryResult PlanRows(const std::string& text) {
  QueryResult result;
  result.returns_rows = true;
  result.columns.push_back({"plan", Type::Varchar()});
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    result.rows.push_back({Value::String(text.substr(start, end - start))});
    start = end + 1;
  }
  return result;
}

std::string Milliseconds(int64_t nanos) { return absl::StrFormat("%.3f ms", static_cast<double>(nanos) / 1e6); }

// The optimizer's part of EXPLAIN ANALYZE: binding and each rule's time.
std::string OptimizerTimings(const optimizer::OptimizerReport& report) {
  std::string text = absl::StrCat("bind: ", Milliseconds(report.bind_ns), "\n");
  for (const optimizer::RuleRun& rule : report.rules) {
    absl::StrAppend(&text, "rule ", rule.name, ": ", rule.disabled ? "disabled" : Milliseconds(rule.elapsed_ns), "\n");
  }
  return text;
}

}  // namespace

absl::StatusOr<QueryResult> ExecuteExplain(Database& database, const parser::ExplainStatement& statement,
                                           const QueryRunOptions& options) {
  if (statement.statement == nullptr || statement.statement->kind != parser::StatementKind::kSelect) {
    // Point at the explained statement; statement.text starts at the EXPLAIN.
    parser::SourcePosition explained =
        statement.statement != nullptr ? statement.statement->position : statement.position;
    explained.offset -= statement.position.offset;
    return absl::InvalidArgumentError(
        parser::FormatErrorWithCaret(statement.text, explained, "EXPLAIN supports SELECT statements"));
  }
  const auto& select = static_cast<const parser::SelectQueryStatement&>(*statement.statement);
  const bool dot = statement.format == "DOT";
  const int64_t planning_start = MonotonicNanos();
  optimizer::OptimizerReport report;
  TESSERA_ASSIGN_OR_RETURN(
      std::unique_ptr<optimizer::LogicalOperator> plan,
      optimizer::PlanQuery(*select.query, database.catalog(), select.text, options.optimizer, &report));
  const int64_t dag_start = MonotonicNanos();
  absl::StatusOr<std::unique_ptr<ExecutionDag>> built =
      BuildExecutionDag(*plan, &database.storage(), &database.buffer_pool(), database.options().cluster);
  const int64_t dag_ns = MonotonicNanos() - dag_start;
  const int64_t planning_ns = MonotonicNanos() - planning_start;
  std::string text;
  if (!dot) text = absl::StrCat("== logical plan ==\n", plan->ToString(), "== operator DAG ==\n");
  if (!options.optimizer.disabled_rules.empty() && !statement.analyze && !dot) {
    text.insert(0, absl::StrCat("disabled rules: ", absl::StrJoin(options.optimizer.disabled_rules, ", "), "\n"));
  }
  // A plan the engine cannot execute yet (INTERSECT, ...) still has a logical plan to show.
  if (!built.ok() && built.status().code() == absl::StatusCode::kUnimplemented && !statement.analyze && !dot) {
    absl::StrAppend(&text, "not executable: ", built.status().message(), "\n");
    return PlanRows(text);
  }
  TESSERA_RETURN_IF_ERROR(built.status());
  std::unique_ptr<ExecutionDag> dag = *std::move(built);
  if (!options.pipelining) dag->MakeAllEdgesBlocking();  // so that EXPLAIN shows the edges the query would run
  if (!statement.analyze) {
    absl::StrAppend(&text, dot ? DagToDot(*dag) : DagToText(*dag));
    return PlanRows(text);
  }

  // ANALYZE: run the query like ExecuteQuery does (cancellable the same way), then report what each operator did.
  const int64_t execution_start = MonotonicNanos();
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<ExecutionQuery> query, RunDag(database, std::move(dag), options));
  const int64_t execution_ns = MonotonicNanos() - execution_start;
  const std::vector<OperatorStatus> progress = query->manager().Progress();
  if (dot) return PlanRows(DagToDot(query->manager().dag(), &progress));
  absl::StrAppend(&text, DagToText(query->manager().dag(), &progress), "== timing ==\n", OptimizerTimings(report),
                  "operator DAG: ", Milliseconds(dag_ns), "\nplanning: ", Milliseconds(planning_ns),
                  "\nexecution: ", Milliseconds(execution_ns), "\n");
  return PlanRows(text);
}

std::string QuoteIdentifier(const std::string& name) {
  std::string quoted = "\"";
  for (char c : name) {
    if (c == '"') quoted.push_back('"');
    quoted.push_back(c);
  }
  quoted.push_back('"');
  return quoted;
}

absl::StatusOr<QueryMemoryEstimate> EstimateQueryMemory(Database& database, std::string_view sql) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<parser::Statement> statement, parser::ParseStatement(sql));
  if (statement->kind != parser::StatementKind::kSelect) {
    return absl::InvalidArgumentError("only a SELECT statement has a memory estimate");
  }
  const auto& select = static_cast<const parser::SelectQueryStatement&>(*statement);
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<optimizer::LogicalOperator> plan,
                           optimizer::PlanQuery(*select.query, database.catalog(), sql, {}));
  TESSERA_ASSIGN_OR_RETURN(
      std::unique_ptr<ExecutionDag> dag,
      BuildExecutionDag(*plan, &database.storage(), &database.buffer_pool(), database.options().cluster));
  return dag->memory_estimate();
}

absl::StatusOr<std::vector<ResultColumn>> DescribeQuery(Database& database, std::string_view sql) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<parser::Statement> statement, parser::ParseStatement(sql));
  if (statement->kind != parser::StatementKind::kSelect) {
    return absl::InvalidArgumentError("only a SELECT statement can be described without running it");
  }
  const auto& select = static_cast<const parser::SelectQueryStatement&>(*statement);
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<optimizer::LogicalOperator> plan,
                           optimizer::BindQuery(*select.query, database.catalog(), select.text));
  std::vector<ResultColumn> columns;
  for (const optimizer::OutputColumn& column : plan->output()) columns.push_back({column.name, column.type});
  return columns;
}

absl::StatusOr<std::vector<ResultColumn>> DescribeView(Database& database, const std::string& name) {
  return DescribeQuery(database, absl::StrCat("SELECT * FROM ", QuoteIdentifier(name)));
}

absl::StatusOr<QueryResult> ExecuteCreateView(Database& database, const parser::CreateViewStatement& statement) {
  // Bind once now, so that a view that cannot be bound is rejected when it is created.
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<optimizer::LogicalOperator> plan,
                           optimizer::BindQuery(*statement.query, database.catalog(), statement.query_text));
  if (statement.column_names.size() > plan->output().size()) {
    parser::SourcePosition start = statement.position;
    start.offset = 0;  // into statement.text, which starts at the statement
    return absl::InvalidArgumentError(parser::FormatErrorWithCaret(
        statement.text, start,
        absl::StrCat("CREATE VIEW ", statement.name, " specifies ", statement.column_names.size(),
                     " column names but its query returns ", plan->output().size(),
                     plan->output().size() == 1 ? " column" : " columns")));
  }
  ViewDescriptor view{statement.name, statement.column_names, statement.query_text};
  TESSERA_RETURN_IF_ERROR(database.catalog().CreateView(std::move(view), statement.or_replace));
  QueryResult result;
  result.status_message = "CREATE VIEW";
  return result;
}

}  // namespace tessera
