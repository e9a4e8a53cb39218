#include "engine/session.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

namespace {

// SET pipelining and SET compression take these values.
bool ParseOnOff(const std::string& setting, bool* pipelining) {
  const std::string value = absl::AsciiStrToLower(setting);
  if (value == "on" || value == "true") {
    *pipelining = true;
  } else if (value == "off" || value == "false") {
    *pipelining = false;
  } else {
    return false;
  }
  return true;
}

// SET scheduler_policy = 'hpf': the Foreman's policy (scheduler/policy.h names).
absl::Status SetSchedulerPolicy(Database& database, const std::string& setting) {
  absl::StatusOr<PolicyOptions> policy = ParsePolicy(setting);
  if (!policy.ok()) return policy.status();
  return database.foreman().SetPolicy(*policy);
}

// SET admission_threshold = 0.8: the load controller's threshold as a fraction of the memory budget (0 = off); the
// per-query cap stays as configured.
absl::Status SetAdmissionThreshold(Database& database, const std::string& setting) {
  double fraction = -1;
  if (!absl::SimpleAtod(setting, &fraction) || !(fraction >= 0 && fraction <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("admission_threshold must be a fraction in [0, 1], not '", setting, "'"));
  }
  return database.foreman().SetLoadControl(fraction, database.options().scheduler.load_control.max_query_fraction);
}

// Every name SET accepts: the session's settings and the server-wide ones (scheduler_policy, admission_threshold).
const std::vector<std::string>& SettingNames() {
  static const std::vector<std::string>* const names = new std::vector<std::string>{
      "admission_threshold", "auto_analyze_threshold", "compaction_threshold", "compression", "disabled_rules",
      "max_recursion_depth", "pipelining", "priority", "scan_sharing", "scheduler_policy", "statement_timeout"};
  return *names;
}

absl::Status CheckSettingName(const std::string& name) {
  const std::vector<std::string>& names = SettingNames();
  if (std::find(names.begin(), names.end(), name) != names.end()) return absl::OkStatus();
  const std::string hint = ClosestName(name, names);
  return absl::InvalidArgumentError(absl::StrCat("unknown setting '", name, "'",
                                                 hint.empty() ? "" : absl::StrCat("; did you mean '", hint, "'?"),
                                                 " (settings: ", absl::StrJoin(names, ", "), ")"));
}

bool IsServerWideSetting(const std::string& name) {
  return name == "scheduler_policy" || name == "admission_threshold";
}

// The value a session setting has before the session SETs it (what SHOW answers then).
std::string DefaultSessionSetting(const Database& database, const std::string& name) {
  if (name == "priority") return "1";
  if (name == "pipelining" || name == "compression") return "on";
  if (name == "scan_sharing") return ScanSharingName(database.options().scan_sharing);
  if (name == "statement_timeout") return "0";
  if (name == "auto_analyze_threshold") return absl::StrCat(QueryRunOptions{}.auto_analyze_threshold);
  if (name == "compaction_threshold") return absl::StrCat(QueryRunOptions{}.compaction_threshold);
  if (name == "max_recursion_depth") return absl::StrCat(optimizer::OptimizerOptions::kDefaultMaxRecursionDepth);
  return "";  // disabled_rules: none
}

// SET auto_analyze_threshold / compaction_threshold: a fraction in [0, 1] (0 = never).
bool ParseFraction(const std::string& setting, double* fraction) {
  double value = -1;
  if (!absl::SimpleAtod(setting, &value) || !(value >= 0 && value <= 1)) return false;
  *fraction = value;
  return true;
}

// SET statement_timeout: milliseconds as a whole number (5000), or a string with a unit ('5s', '500ms', '2min');
// 0 = none. The normalized number of milliseconds, or -1 when `setting` is neither.
int64_t ParseTimeoutMs(const std::string& setting) {
  std::string text = absl::AsciiStrToLower(absl::StripAsciiWhitespace(setting));
  int64_t multiplier = 1;
  for (auto [suffix, factor] : {std::pair<const char*, int64_t>{"ms", 1}, {"min", 60'000}, {"s", 1'000}}) {
    if (absl::EndsWith(text, suffix)) {
      text = std::string(absl::StripAsciiWhitespace(text.substr(0, text.size() - strlen(suffix))));
      multiplier = factor;
      break;
    }
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0 || value > std::numeric_limits<int64_t>::max() / multiplier) {
    return -1;
  }
  return value * multiplier;
}

}  // namespace

Session::Session(Database* database) : database_(database) {}
Session::~Session() = default;

QueryRunOptions Session::RunOptions() {
  QueryRunOptions options;
  options.priority = priority();
  options.running_query = &running_query_;
  options.cancel_requested = &cancel_requested_;
  // Both settings were validated when they were set.
  if (auto it = settings_.find("disabled_rules"); it != settings_.end()) {
    options.optimizer = optimizer::ParseDisabledRules(it->second).value_or(optimizer::OptimizerOptions{});
  }
  if (auto it = settings_.find("pipelining"); it != settings_.end()) ParseOnOff(it->second, &options.pipelining);
  if (auto it = settings_.find("compression"); it != settings_.end()) ParseOnOff(it->second, &options.compress_loads);
  options.scan_sharing = database_->options().scan_sharing;
  if (auto it = settings_.find("scan_sharing"); it != settings_.end()) ParseScanSharing(it->second, &options.scan_sharing);
  if (auto it = settings_.find("statement_timeout"); it != settings_.end()) {
    absl::SimpleAtoi(it->second, &options.statement_timeout_ms);
  }
  if (auto it = settings_.find("auto_analyze_threshold"); it != settings_.end()) {
    ParseFraction(it->second, &options.auto_analyze_threshold);
  }
  if (auto it = settings_.find("compaction_threshold"); it != settings_.end()) {
    ParseFraction(it->second, &options.compaction_threshold);
  }
  if (auto it = settings_.find("max_recursion_depth"); it != settings_.end()) {
    absl::SimpleAtoi(it->second, &options.optimizer.max_recursion_depth);
  }
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
  auto it = settings_.find("priority");
  int value = 1;
  if (it != settings_.end() && absl::SimpleAtoi(it->second, &value) && value >= 1) return value;
  return 1;
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
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<parser::Statement>> statements,
                           parser::ParseStatements(sql));
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
      result = ExecuteCopyStream(*database_, static_cast<const parser::CopyStatement&>(*statement), RunOptions(),
                                 copy);
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
          std::string setting = value->type().IsString() ? value->AsString() : value->ToString();
          if (absl::Status known = CheckSettingName(set.name); !known.ok()) {
            result = known;
            break;
          }
          int priority_value = 0;
          if (set.name == "priority" && (!absl::SimpleAtoi(setting, &priority_value) || priority_value < 1)) {
            result = absl::InvalidArgumentError(
                absl::StrCat("priority must be a positive integer, not '", setting, "'"));
            break;
          }
          bool pipelining = true;
          if ((set.name == "pipelining" || set.name == "compression") && !ParseOnOff(setting, &pipelining)) {
            result = absl::InvalidArgumentError(absl::StrCat(set.name, " must be on or off, not '", setting, "'"));
            break;
          }
          int64_t depth = 0;
          if (set.name == "max_recursion_depth" && (!absl::SimpleAtoi(setting, &depth) || depth < 1)) {
            result = absl::InvalidArgumentError(
                absl::StrCat("max_recursion_depth must be a positive integer, not '", setting, "'"));
            break;
          }
          if (set.name == "statement_timeout") {
            const int64_t timeout_ms = ParseTimeoutMs(setting);
            if (timeout_ms < 0) {
              result = absl::InvalidArgumentError(absl::StrCat(
                  "statement_timeout must be a whole number of milliseconds or a string such as '5s', '500ms' or "
                  "'2min' (0 = none), not '", setting, "'"));
              break;
            }
            setting = absl::StrCat(timeout_ms);  // kept (and shown) in milliseconds
          }
          double fraction = 0;
          if ((set.name == "auto_analyze_threshold" || set.name == "compaction_threshold") &&
              !ParseFraction(setting, &fraction)) {
            result = absl::InvalidArgumentError(
                absl::StrCat(set.name, " must be a fraction in [0, 1] (0 = never), not '", setting, "'"));
            break;
          }
          ScanSharing scan_sharing;
          if (set.name == "scan_sharing" && !ParseScanSharing(setting, &scan_sharing)) {
            result = absl::InvalidArgumentError(
                absl::StrCat("scan_sharing must be off, full or batch, not '", setting, "'"));
            break;
          }
          if (set.name == "scheduler_policy" || set.name == "admission_threshold") {
            // Server-wide: applied to the Foreman for every query from now on, not kept as a session setting.
            absl::Status changed = set.name == "scheduler_policy" ? SetSchedulerPolicy(*database_, setting)
                                                                  : SetAdmissionThreshold(*database_, setting);
            if (!changed.ok()) {
              result = changed;
              break;
            }
            result = QueryResult{};
            result->status_message = "SET";
            break;
          }
          if (set.name == "disabled_rules") {
            if (absl::Status valid = optimizer::ParseDisabledRules(setting).status(); !valid.ok()) {
              result = valid;
              break;
            }
          }
          settings_[set.name] = setting;
          result = QueryResult{};
          result->status_message = "SET";
        }
        break;
      }
      case StatementKind::kShow: {
        const auto& show = static_cast<const parser::ShowStatement&>(*statement);
        if (show.name == "tables" || show.name == "stats" || show.name == "memory" || show.name == "queries") {
          result = ExecuteShow(*database_, show);
        } else if (show.name == "scheduler_policy" || show.name == "admission_threshold") {
          absl::StatusOr<ForemanStats> stats = database_->foreman().GetStats();
          if (!stats.ok()) {
            result = stats.status();
            break;
          }
          QueryResult rows;
          rows.returns_rows = true;
          rows.columns = {{"name", Type::Varchar()}, {"setting", Type::Varchar()}};
          rows.rows.push_back({Value::String(show.name),
                               Value::String(show.name == "scheduler_policy"
                                                 ? stats->policy
                                                 : absl::StrCat(stats->load.threshold_fraction))});
          result = std::move(rows);
        } else {
          // SHOW ALL: every session setting with its value in this session (its default until SET); SHOW name: one
          // of them. The server-wide ones are shown by name only (above).
          if (show.name != "all") {
            if (absl::Status known = CheckSettingName(show.name); !known.ok()) {
              result = absl::NotFoundError(known.message());
              break;
            }
          }
          QueryResult rows;
          rows.returns_rows = true;
          rows.columns = {{"name", Type::Varchar()}, {"setting", Type::Varchar()}};
          for (const std::string& name : SettingNames()) {
            if (IsServerWideSetting(name) || (show.name != "all" && show.name != name)) continue;
            auto it = settings_.find(name);
            rows.rows.push_back({Value::String(name), Value::String(it != settings_.end()
                                                                        ? it->second
                                                                        : DefaultSessionSetting(*database_, name))});
          }
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
          if (status.ok()) result = QueryResult{}; else result = status;
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
