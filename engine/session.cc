#include "engine/session.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "catalog/schema.h"
#include "common/status_macros.h"
#include "distributed/cluster.h"
#include "engine/constant_expression.h"
#include "engine/distributed_statements.h"
#include "engine/statement_handlers.h"
#include "engine/table_function_files.h"
#include "parser/parser.h"

namespace tessera {

Session::Session(Database* database) : database_(database) {}
Session::~Session() = default;

QueryRunOptions Session::RunOptions() {
  QueryRunOptions options;
  options.running_query = &running_query_;
  options.cancel_requested = &cancel_requested_;
  settings_.Apply(*database_, &options);
  // WITH RECURSIVE: the binder runs each step as a query of this session (same priority, cancel and timeout).
  options.optimizer.run_plan = [database = database_, run = options](const optimizer::LogicalOperator& plan) {
    return RunPlanRows(*database, plan, run);
  };
  // read_csv in FROM: its file is read while binding, under the server's file access policy.
  options.optimizer.read_file = [database = database_](const std::string& path) {
    return ReadTableFunctionFile(database->options().file_access, database->options().data_directory, path,
                                 kMaxTableFunctionFileBytes);
  };
  return options;
}

int Session::priority() const {
  QueryRunOptions options;
  settings_.Apply(*database_, &options);
  return options.priority;
}

void Session::Cancel() {
  if (!executing_.load()) return;
  cancel_requested_.store(true);
  QueryId running = running_query_.load();
  // NotFound when the query finished meanwhile: nothing left to cancel.
  if (running != 0) database_->foreman().Cancel(running).IgnoreError();
}

absl::StatusOr<QueryProgress> Session::RunningQueryProgress() {
  QueryId running = running_query_.load();
  if (running == 0) return absl::NotFoundError("no query is running in this session");
  return database_->foreman().GetProgress(running);
}

absl::StatusOr<QueryResult> Session::Execute(std::string_view sql, ResultSink* sink, CopyChannel* copy) {
  cancel_requested_.store(false);
  executing_.store(true);
  absl::StatusOr<QueryResult> result = ExecuteStatements(sql, sink, copy);
  executing_.store(false);
  return result;
}

absl::StatusOr<QueryResult> Session::ExecuteStatements(std::string_view sql, ResultSink* sink, CopyChannel* copy) {
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<parser::Statement>> statements, parser::ParseStatements(sql));
  QueryResult last;
  for (const auto& statement : statements) {
    if (cancel_requested_.load()) return absl::CancelledError("cancelled by the client");
    using parser::StatementKind;
    absl::StatusOr<QueryResult> result;
    // The master of a distributed cluster (engine/distributed_statements.h): refuses what a cluster cannot run
    // yet, routes COPY FROM, and repeats DDL on the other ranks once it succeeded here.
    const distributed::Cluster* cluster = database_->options().cluster;
    const bool master = cluster != nullptr && cluster->is_master() && cluster->size() > 1;
    if (master) {
      if (absl::Status supported = CheckDistributedStatement(*database_, *statement); !supported.ok()) {
        return parser::WithPositionIfMissing(supported, sql, statement->position);
      }
    }
    if (statement->kind == StatementKind::kCopy && static_cast<const parser::CopyStatement&>(*statement).stdio) {
      result = ExecuteCopyStream(*database_, static_cast<const parser::CopyStatement&>(*statement), RunOptions(), copy);
      // Its errors are about the data (they name its line) or the table, not a place in the statement's text.
      if (!result.ok()) return result.status();
      last = *std::move(result);
      continue;
    }
    if (master && statement->kind == StatementKind::kCopy &&
        static_cast<const parser::CopyStatement&>(*statement).from) {
      result = ExecuteDistributedCopy(*database_, static_cast<const parser::CopyStatement&>(*statement), RunOptions());
      if (!result.ok()) return parser::WithPositionIfMissing(result.status(), sql, statement->position);
      last = *std::move(result);
      continue;
    }
    switch (statement->kind) {
      case StatementKind::kSelect: {
        QueryRunOptions options = RunOptions();
        if (statement == statements.back()) options.result_sink = sink;
        result = ExecuteQuery(*database_, static_cast<const parser::SelectQueryStatement&>(*statement), options);
        break;
      }
      case StatementKind::kCreateTable: {
        const auto& create = static_cast<const parser::CreateTableStatement&>(*statement);
        result = create.query == nullptr ? ExecuteCreateTable(*database_, create)
                                         : ExecuteCreateTableAs(*database_, create, RunOptions());
        break;
      }
      case StatementKind::kDropTable:
        result = ExecuteDropTable(*database_, static_cast<const parser::DropStatement&>(*statement));
        break;
      case StatementKind::kCopy:
        result = ExecuteCopy(*database_, static_cast<const parser::CopyStatement&>(*statement), RunOptions());
        break;
      case StatementKind::kInsert: {
        const auto& insert = static_cast<const parser::InsertStatement&>(*statement);
        result = insert.query == nullptr ? ExecuteInsert(*database_, insert)
                                         : ExecuteInsertSelect(*database_, insert, RunOptions());
        break;
      }
      case StatementKind::kAnalyze:
        result = ExecuteAnalyze(*database_, static_cast<const parser::AnalyzeStatement&>(*statement));
        break;
      case StatementKind::kDelete:
        result = ExecuteDelete(*database_, static_cast<const parser::DeleteStatement&>(*statement), RunOptions());
        break;
      case StatementKind::kUpdate:
        result = ExecuteUpdate(*database_, static_cast<const parser::UpdateStatement&>(*statement), RunOptions());
        break;
      case StatementKind::kVacuum:
        result = ExecuteVacuum(*database_, static_cast<const parser::VacuumStatement&>(*statement), RunOptions());
        break;
      case StatementKind::kCancelQuery:
        result = ExecuteCancelQuery(*database_, static_cast<const parser::CancelQueryStatement&>(*statement));
        break;
      case StatementKind::kDescribe:
        result = ExecuteDescribe(*database_, static_cast<const parser::DescribeStatement&>(*statement));
        break;
      case StatementKind::kSet: {
        const auto& set = static_cast<const parser::SetStatement&>(*statement);
        absl::StatusOr<Value> value = EvaluateConstant(*set.value, set.text);
        if (!value.ok()) {
          result = value.status();
        } else {
          const std::string setting = value->type().IsString() ? value->AsString() : value->ToString();
          absl::Status set_status = settings_.Set(*database_, set.name, setting);
          if (!set_status.ok()) {
            result = set_status;
          } else {
            result = QueryResult{};
            result->status_message = "SET";
          }
        }
        break;
      }
      case StatementKind::kShow: {
        const auto& show = static_cast<const parser::ShowStatement&>(*statement);
        if (show.name == "tables" || show.name == "stats" || show.name == "memory" || show.name == "queries") {
          result = ExecuteShow(*database_, show);
        } else {
          // SHOW ALL: every session setting with its value in this session (its default until SET); SHOW name: one
          // setting, a server-wide one read from the database (engine/settings.h).
          absl::StatusOr<std::vector<std::pair<std::string, std::string>>> shown =
              settings_.Show(*database_, show.name);
          if (!shown.ok()) {
            result = shown.status();
            break;
          }
          QueryResult rows;
          rows.returns_rows = true;
          rows.columns = {{"name", Type::Varchar()}, {"setting", Type::Varchar()}};
          for (auto& [name, setting] : *shown) rows.rows.push_back({Value::String(name), Value::String(setting)});
          result = std::move(rows);
        }
        break;
      }
      case StatementKind::kCreateView:
        result = ExecuteCreateView(*database_, static_cast<const parser::CreateViewStatement&>(*statement));
        break;
      case StatementKind::kDropView: {
        const auto& drop = static_cast<const parser::DropStatement&>(*statement);
        if (drop.if_exists && !database_->catalog().HasView(drop.name)) {
          result = QueryResult{};
        } else {
          absl::Status status = database_->catalog().DropView(drop.name);
          if (status.ok()) result = QueryResult{};
          else result = status;
        }
        if (result.ok()) result->status_message = "DROP VIEW";
        break;
      }
      case StatementKind::kExplain:
        result = ExecuteExplain(*database_, static_cast<const parser::ExplainStatement&>(*statement), RunOptions());
        break;
    }
    if (result.ok() && master && RunsOnEveryRank(*database_, *statement)) {
      if (absl::Status everywhere = RunOnOtherRanks(*database_, statement->text); !everywhere.ok()) result = everywhere;
      if (result.ok() && statement->kind == StatementKind::kAnalyze) {
        const std::string& table = static_cast<const parser::AnalyzeStatement&>(*statement).table;
        if (absl::Status merged = RefreshClusterStatistics(*database_, table); !merged.ok()) result = merged;
      }
    }
    if (!result.ok()) return parser::WithPositionIfMissing(result.status(), sql, statement->position);
    last = *std::move(result);
  }
  return last;
}

}  // namespace tessera
