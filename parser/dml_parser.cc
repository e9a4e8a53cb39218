// DELETE, UPDATE and VACUUM.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status_macros.h"
#include "parser/expr_factory.h"
#include "parser/recursive_descent_parser.h"

namespace tessera::parser {

absl::StatusOr<std::string> RecursiveDescentParser::ParseTargetAlias(std::string_view next_clause) {
  if (ConsumeWord("AS")) return ExpectName("an alias");
  if (IsName(Current()) && !AtWord(next_clause)) {
    std::string alias = Current().text;
    Advance();
    return alias;
  }
  return std::string();
}

absl::StatusOr<std::vector<std::unique_ptr<TableRef>>> RecursiveDescentParser::ParseFromList() {
  std::vector<std::unique_ptr<TableRef>> tables;
  do {
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<TableRef> table, ParseTableRef());
    tables.push_back(std::move(table));
  } while (ConsumeOperator(","));
  return tables;
}

namespace {

// SELECT <items> FROM <table> AS <alias>, <others> WHERE <where>: the query of a DELETE or UPDATE.
std::unique_ptr<SelectStatement> TargetQuery(const std::string& table, const std::string& alias,
                                             const SourcePosition& position, std::vector<SelectItem> items,
                                             std::vector<std::unique_ptr<TableRef>> others,
                                             std::unique_ptr<ParsedExpr> where) {
  auto core = std::make_unique<SelectCore>();
  core->position = position;
  core->items = std::move(items);
  SelectItem row_id;
  row_id.expr = MakeExpr(ExprKind::kColumnRef, position);
  row_id.expr->qualifier = alias;
  row_id.expr->name = kRowIdColumnRef;
  core->items.push_back(std::move(row_id));
  auto target = std::make_unique<TableRef>();
  target->kind = TableRefKind::kBaseTable;
  target->position = position;
  target->name = table;
  target->alias = alias == table ? "" : alias;
  core->from.push_back(std::move(target));
  for (auto& other : others) core->from.push_back(std::move(other));
  core->where = std::move(where);
  auto query = std::make_unique<SelectStatement>();
  query->position = position;
  query->body = std::make_unique<QueryBody>();
  query->body->select = std::move(core);
  return query;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseDelete() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("DELETE"));
  TESSERA_RETURN_IF_ERROR(ExpectWord("FROM"));
  auto statement = std::make_unique<DeleteStatement>();
  statement->table_position = Current().position;
  TESSERA_ASSIGN_OR_RETURN(statement->table, ExpectName("a table name"));
  TESSERA_ASSIGN_OR_RETURN(std::string alias, ParseTargetAlias("USING"));
  if (alias.empty()) alias = statement->table;
  std::vector<std::unique_ptr<TableRef>> using_tables;
  if (ConsumeWord("USING")) {
    TESSERA_ASSIGN_OR_RETURN(using_tables, ParseFromList());
  }
  std::unique_ptr<ParsedExpr> where;
  if (ConsumeWord("WHERE")) {
    TESSERA_ASSIGN_OR_RETURN(where, ParseExpression());
  }
  statement->query =
      TargetQuery(statement->table, alias, statement->table_position, {}, std::move(using_tables), std::move(where));
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseUpdate() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("UPDATE"));
  auto statement = std::make_unique<UpdateStatement>();
  statement->table_position = Current().position;
  TESSERA_ASSIGN_OR_RETURN(statement->table, ExpectName("a table name"));
  TESSERA_ASSIGN_OR_RETURN(std::string alias, ParseTargetAlias("SET"));
  if (alias.empty()) alias = statement->table;
  TESSERA_RETURN_IF_ERROR(ExpectWord("SET"));
  std::vector<SelectItem> items;
  SelectItem all;
  all.expr = MakeExpr(ExprKind::kStar, statement->table_position);
  all.expr->qualifier = alias;
  items.push_back(std::move(all));
  do {
    UpdateStatement::Assignment assignment;
    assignment.position = Current().position;
    TESSERA_ASSIGN_OR_RETURN(assignment.column, ExpectName("a column name"));
    if (ConsumeOperator(".")) {  // SET t.c = ...: the qualifier must name the target
      if (assignment.column != statement->table && assignment.column != alias) {
        return ErrorAt(assignment.position, "SET may only name columns of the table being updated");
      }
      TESSERA_ASSIGN_OR_RETURN(assignment.column, ExpectName("a column name"));
    }
    TESSERA_RETURN_IF_ERROR(ExpectOperator("="));
    SelectItem value;
    TESSERA_ASSIGN_OR_RETURN(value.expr, ParseExpression());
    items.push_back(std::move(value));
    statement->assignments.push_back(std::move(assignment));
  } while (ConsumeOperator(","));
  std::vector<std::unique_ptr<TableRef>> from;
  if (ConsumeWord("FROM")) {
    TESSERA_ASSIGN_OR_RETURN(from, ParseFromList());
  }
  std::unique_ptr<ParsedExpr> where;
  if (ConsumeWord("WHERE")) {
    TESSERA_ASSIGN_OR_RETURN(where, ParseExpression());
  }
  statement->query = TargetQuery(statement->table, alias, statement->table_position, std::move(items), std::move(from),
                                 std::move(where));
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseVacuum() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("VACUUM"));
  auto statement = std::make_unique<VacuumStatement>();
  if (!AtEndOfStatement()) {
    TESSERA_ASSIGN_OR_RETURN(statement->table, ExpectName("a table name"));
  }
  return statement;
}

}  // namespace tessera::parser
