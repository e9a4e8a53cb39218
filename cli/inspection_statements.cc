// SELECT (the forms supported before the query engine lands), SHOW and DESCRIBE.

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "catalog/catalog.h"
#include "cli/constant_expression.h"
#include "cli/statement_handlers.h"
#include "common/status_macros.h"
#include "parser/parser.h"
#include "storage/buffer_pool.h"
#include "storage/storage_manager.h"

namespace tessera {
namespace {

using parser::ExprKind;

absl::Status NotYetSupported(const parser::Statement& statement, const parser::SourcePosition& position,
                             std::string_view what) {
  return absl::UnimplementedError(parser::FormatErrorWithCaret(
      statement.text, position,
      absl::StrCat(std::string(what), " is not supported yet: until the query engine lands, SELECT supports constant "
                         "expressions, SELECT * / column lists / COUNT(*) from one table, and LIMIT/OFFSET")));
}

void AddColumn(QueryResult& result, std::string name, Type type) {
  result.columns.push_back(ResultColumn{std::move(name), type});
}

absl::StatusOr<int64_t> EvaluateCount(const parser::ParsedExpr* expr, std::string_view sql, const char* what) {
  if (expr == nullptr) return -1;
  TESSERA_ASSIGN_OR_RETURN(Value value, EvaluateConstant(*expr, sql));
  if (value.is_null()) return -1;
  if (value.type().id() != TypeId::kInteger && value.type().id() != TypeId::kBigInt) {
    return absl::InvalidArgumentError(absl::StrCat(what, " must be an integer"));
  }
  if (value.AsInt64() < 0) return absl::InvalidArgumentError(absl::StrCat(what, " must not be negative"));
  return value.AsInt64();
}

}  // namespace

absl::StatusOr<QueryResult> ExecuteSelect(Database& database, const parser::SelectQueryStatement& statement) {
  const parser::SelectStatement& query = *statement.query;
  if (!query.ctes.empty()) return NotYetSupported(statement, query.position, "WITH");
  if (query.body->kind != parser::QueryBody::Kind::kSelect) {
    return NotYetSupported(statement, query.position, "a set operation or nested query");
  }
  if (!query.order_by.empty()) return NotYetSupported(statement, query.order_by[0].expr->position, "ORDER BY");
  const parser::SelectCore& core = *query.body->select;
  if (core.distinct) return NotYetSupported(statement, core.position, "SELECT DISTINCT");
  if (core.where) return NotYetSupported(statement, core.where->position, "WHERE");
  if (!core.group_by.empty()) return NotYetSupported(statement, core.group_by[0]->position, "GROUP BY");
  if (core.having) return NotYetSupported(statement, core.having->position, "HAVING");
  TESSERA_ASSIGN_OR_RETURN(int64_t limit, EvaluateCount(query.limit.get(), statement.text, "LIMIT"));
  TESSERA_ASSIGN_OR_RETURN(int64_t offset, EvaluateCount(query.offset.get(), statement.text, "OFFSET"));
  offset = std::max<int64_t>(offset, 0);

  QueryResult result;
  result.returns_rows = true;
  if (core.from.empty()) {
    std::vector<Value> row;
    for (const parser::SelectItem& item : core.items) {
      TESSERA_ASSIGN_OR_RETURN(Value value, EvaluateConstant(*item.expr, statement.text));
      AddColumn(result, item.alias.empty() ? parser::ToString(*item.expr) : item.alias, value.type());
      row.push_back(std::move(value));
    }
    if (offset == 0 && limit != 0) result.rows.push_back(std::move(row));
    return result;
  }
  if (core.from.size() != 1 || core.from[0]->kind != parser::TableRefKind::kBaseTable) {
    return NotYetSupported(statement, core.from[0]->position, "a join or derived table");
  }
  const parser::TableRef& from = *core.from[0];
  if (database.catalog().HasView(from.name)) return NotYetSupported(statement, from.position, "querying a view");
  absl::StatusOr<std::shared_ptr<const TableDescriptor>> found = database.catalog().GetTable(from.name);
  if (!found.ok()) {
    return absl::Status(found.status().code(),
                        parser::FormatErrorWithCaret(statement.text, from.position, std::string(found.status().message())));
  }
  const TableDescriptor& table = **found;
  const std::string& alias = from.alias.empty() ? table.name : from.alias;

  // COUNT(*) alone: the row count of every block.
  if (core.items.size() == 1 && core.items[0].expr->kind == ExprKind::kFunctionCall &&
      core.items[0].expr->name == "COUNT" && core.items[0].expr->children.size() == 1 &&
      core.items[0].expr->children[0]->kind == ExprKind::kStar) {
    int64_t count = 0;
    for (const SegmentDescriptor& segment : table.segments) {
      for (const BlockLocation& block : segment.blocks) count += block.rows;
    }
    AddColumn(result, core.items[0].alias.empty() ? "count_star()" : core.items[0].alias, Type::BigInt());
    if (offset == 0 && limit != 0) result.rows.push_back({Value::BigInt(count)});
    return result;
  }

  std::vector<int> columns;
  for (const parser::SelectItem& item : core.items) {
    const parser::ParsedExpr& expr = *item.expr;
    if (expr.kind == ExprKind::kStar && (expr.qualifier.empty() || expr.qualifier == alias)) {
      for (size_t c = 0; c < table.columns.size(); ++c) {
        columns.push_back(static_cast<int>(c));
        AddColumn(result, table.columns[c].name, table.columns[c].type);
      }
    } else if (expr.kind == ExprKind::kColumnRef && (expr.qualifier.empty() || expr.qualifier == alias)) {
      int index = FindColumn(table.columns, expr.name);
      if (index < 0) {
        std::vector<std::string> candidates;
        for (const ColumnSchema& column : table.columns) candidates.push_back(column.name);
        std::string hint = ClosestName(expr.name, candidates);
        return absl::NotFoundError(parser::FormatErrorWithCaret(
            statement.text, expr.position,
            absl::StrCat("column '", expr.name, "' does not exist in table '", table.name, "'",
                         hint.empty() ? "" : absl::StrCat("; did you mean '", hint, "'?"))));
      }
      columns.push_back(index);
      AddColumn(result, item.alias.empty() ? expr.name : item.alias, table.columns[index].type);
    } else {
      return NotYetSupported(statement, expr.position, absl::StrCat("the expression '", parser::ToString(expr), "'"));
    }
  }
  int64_t skipped = 0;
  for (const SegmentDescriptor& segment : table.segments) {
    for (uint32_t b = 0; b < segment.blocks.size(); ++b) {
      if (limit >= 0 && static_cast<int64_t>(result.rows.size()) >= limit) return result;
      if (skipped + segment.blocks[b].rows <= offset) {
        skipped += segment.blocks[b].rows;
        continue;
      }
      TESSERA_ASSIGN_OR_RETURN(BlockHandle handle, database.storage().PinBlock(BlockId{segment.segment_id, b}));
      BlockView block = handle.view();
      for (uint32_t r = 0; r < block.row_count(); ++r) {
        if (skipped++ < offset) continue;
        if (limit >= 0 && static_cast<int64_t>(result.rows.size()) >= limit) return result;
        std::vector<Value> row;
        row.reserve(columns.size());
        for (int c : columns) row.push_back(block.GetValue(c, r, table.columns[c].type));
        result.rows.push_back(std::move(row));
      }
    }
  }
  return result;
}

absl::StatusOr<QueryResult> ExecuteDescribe(Database& database, const parser::DescribeStatement& statement) {
  TESSERA_ASSIGN_OR_RETURN(std::shared_ptr<const TableDescriptor> table,
                           database.catalog().GetTable(statement.table));
  QueryResult result;
  result.returns_rows = true;
  AddColumn(result, "column_name", Type::Varchar());
  AddColumn(result, "column_type", Type::Varchar());
  AddColumn(result, "null", Type::Varchar());
  AddColumn(result, "default", Type::Varchar());
  for (const ColumnSchema& column : table->columns) {
    result.rows.push_back({Value::String(column.name), Value::String(column.type.ToString()),
                           Value::String(column.not_null ? "NO" : "YES"),
                           column.default_value ? Value::String(column.default_value->ToString())
                                                : Value::Null(Type::Varchar())});
  }
  return result;
}

absl::StatusOr<QueryResult> ExecuteShow(Database& database, const parser::ShowStatement& statement) {
  QueryResult result;
  result.returns_rows = true;
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
      result.rows.push_back({Value::String(view->name), Value::String("view"), Value::Null(Type::BigInt()),
                             Value::Null(Type::BigInt())});
    }
    return result;
  }
  if (statement.name == "stats") {
    std::vector<std::shared_ptr<const TableDescriptor>> tables;
    if (statement.target.empty()) {
      tables = database.catalog().ListTables();
    } else {
      TESSERA_ASSIGN_OR_RETURN(auto table, database.catalog().GetTable(statement.target));
      tables.push_back(table);
    }
    AddColumn(result, "table_name", Type::Varchar());
    AddColumn(result, "column_name", Type::Varchar());
    AddColumn(result, "row_count", Type::BigInt());
    AddColumn(result, "null_count", Type::BigInt());
    AddColumn(result, "distinct_estimate", Type::BigInt());
    AddColumn(result, "min", Type::Varchar());
    AddColumn(result, "max", Type::Varchar());
    for (const auto& table : tables) {
      for (size_t c = 0; c < table->columns.size(); ++c) {
        const ColumnStatistics& stats = table->statistics[c];
        auto text = [](const Value& v) { return v.is_null() ? Value::Null(Type::Varchar()) : Value::String(v.ToString()); };
        result.rows.push_back({Value::String(table->name), Value::String(table->columns[c].name),
                               Value::BigInt(table->row_count), Value::BigInt(stats.null_count),
                               Value::BigInt(stats.DistinctEstimate(table->row_count - stats.null_count)),
                               text(stats.min), text(stats.max)});
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
    result.rows.push_back({Value::String("total used"), Value::BigInt(static_cast<int64_t>(usage.used_bytes))});
    result.rows.push_back({Value::String("budget"), Value::BigInt(static_cast<int64_t>(usage.budget_bytes))});
    result.rows.push_back({Value::String("huge pages"), Value::BigInt(static_cast<int64_t>(usage.huge_page_bytes))});
    result.rows.push_back(
        {Value::String("resident blocks"), Value::BigInt(database.storage().ResidentBlockCount())});
    result.rows.push_back({Value::String("evictions"), Value::BigInt(usage.evictions)});
    return result;
  }
  return absl::NotFoundError(absl::StrCat("unknown setting '", statement.name, "'"));
}

}  // namespace tessera
