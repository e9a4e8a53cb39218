// SELECT statements: WITH, set operations (INTERSECT binds tighter than UNION and EXCEPT), the select core,
// FROM with joins, ORDER BY, LIMIT / OFFSET / FETCH FIRST.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "common/status_macros.h"
#include "parser/expr_factory.h"
#include "parser/recursive_descent_parser.h"

namespace tessera::parser {
namespace {

bool HasOnlyBody(const SelectStatement& statement) {
  return statement.ctes.empty() && statement.order_by.empty() && statement.limit == nullptr &&
         statement.offset == nullptr;
}

}  // namespace

bool RecursiveDescentParser::AtQueryStart() const {
  int ahead = 0;
  while (IsOperator(PeekToken(ahead), "(")) ahead++;
  return IsWord(PeekToken(ahead), "SELECT") || IsWord(PeekToken(ahead), "WITH");
}

bool RecursiveDescentParser::AtParenthesizedQueryInFrom() const {
  if (!AtOperator("(")) return false;
  if (IsWord(PeekToken(1), "SELECT") || IsWord(PeekToken(1), "WITH")) return true;
  if (!IsOperator(PeekToken(1), "(")) return false;
  int ahead = 1;
  while (IsOperator(PeekToken(ahead), "(")) ahead++;
  if (!IsWord(PeekToken(ahead), "SELECT") && !IsWord(PeekToken(ahead), "WITH")) return false;
  // The end of the first item, the group opened by token 1.
  int depth = 0;
  for (ahead = 1;; ahead++) {
    const Token& token = PeekToken(ahead);
    if (token.kind == TokenKind::kEndOfInput) return false;
    if (IsOperator(token, "(")) depth++;
    if (IsOperator(token, ")") && --depth == 0) break;
  }
  const Token& next = PeekToken(ahead + 1);
  for (std::string_view word : {"UNION", "EXCEPT", "INTERSECT", "ORDER", "LIMIT", "OFFSET", "FETCH"}) {
    if (IsWord(next, word)) return true;
  }
  return IsOperator(next, ")");
}

absl::StatusOr<std::unique_ptr<SelectStatement>> RecursiveDescentParser::ParseSelectStatement() {
  NestingScope scope(nesting_);
  if (!scope.ok()) return TooDeeplyNested();
  auto statement = std::make_unique<SelectStatement>();
  statement->position = Current().position;
  if (AtWord("WITH")) TESSERA_RETURN_IF_ERROR(ParseWithClause(*statement));
  TESSERA_ASSIGN_OR_RETURN(statement->body, ParseQueryBody());
  if (AtWord("ORDER")) TESSERA_RETURN_IF_ERROR(ParseOrderBy(*statement));
  TESSERA_RETURN_IF_ERROR(ParseLimitOffsetFetch(*statement));
  // "(SELECT ... ORDER BY ... LIMIT ...)" alone is that statement.
  if (HasOnlyBody(*statement) && statement->body->kind == QueryBody::Kind::kNested) {
    return std::move(statement->body->nested);
  }
  return statement;
}

absl::Status RecursiveDescentParser::ParseWithClause(SelectStatement& statement) {
  TESSERA_RETURN_IF_ERROR(ExpectWord("WITH"));
  const bool recursive = AtWord("RECURSIVE") && IsName(PeekToken(1)) && ConsumeWord("RECURSIVE");
  do {
    CommonTableExpr cte;
    cte.recursive = recursive;
    cte.position = Current().position;
    TESSERA_ASSIGN_OR_RETURN(cte.name, ExpectName("a name for the WITH query"));
    if (AtOperator("(")) {
      TESSERA_ASSIGN_OR_RETURN(cte.column_names, ParseNameList("a column name"));
    }
    TESSERA_RETURN_IF_ERROR(ExpectWord("AS"));
    TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
    TESSERA_ASSIGN_OR_RETURN(cte.query, ParseSelectStatement());
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
    statement.ctes.push_back(std::move(cte));
  } while (ConsumeOperator(","));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<QueryBody>> RecursiveDescentParser::ParseQueryBody() {
  ChainTracker chain(nesting_);
  chain.BeforeOperand();
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<QueryBody> left, ParseIntersectTerm());
  chain.AfterOperand();
  while (AtWord("UNION") || AtWord("EXCEPT")) {
    auto node = std::make_unique<QueryBody>();
    node->kind = QueryBody::Kind::kSetOperation;
    node->set_operation = AtWord("UNION") ? SetOperation::kUnion : SetOperation::kExcept;
    Advance();
    node->all = ConsumeWord("ALL");
    if (!node->all) ConsumeWord("DISTINCT");
    chain.BeforeOperand();
    TESSERA_ASSIGN_OR_RETURN(node->right, ParseIntersectTerm());
    chain.AfterOperand();
    node->left = std::move(left);
    left = std::move(node);
    if (!chain.NodeBuilt()) return TooDeeplyNested();
  }
  return left;
}

absl::StatusOr<std::unique_ptr<QueryBody>> RecursiveDescentParser::ParseIntersectTerm() {
  ChainTracker chain(nesting_);
  chain.BeforeOperand();
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<QueryBody> left, ParseQueryPrimary());
  chain.AfterOperand();
  while (AtWord("INTERSECT")) {
    auto node = std::make_unique<QueryBody>();
    node->kind = QueryBody::Kind::kSetOperation;
    node->set_operation = SetOperation::kIntersect;
    Advance();
    node->all = ConsumeWord("ALL");
    if (!node->all) ConsumeWord("DISTINCT");
    chain.BeforeOperand();
    TESSERA_ASSIGN_OR_RETURN(node->right, ParseQueryPrimary());
    chain.AfterOperand();
    node->left = std::move(left);
    left = std::move(node);
    if (!chain.NodeBuilt()) return TooDeeplyNested();
  }
  return left;
}

absl::StatusOr<std::unique_ptr<QueryBody>> RecursiveDescentParser::ParseQueryPrimary() {
  if (AtWord("SELECT")) {
    auto body = std::make_unique<QueryBody>();
    body->kind = QueryBody::Kind::kSelect;
    TESSERA_ASSIGN_OR_RETURN(body->select, ParseSelectCore());
    return body;
  }
  if (!AtOperator("(")) return ErrorExpected("SELECT");
  Advance();
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<SelectStatement> inner, ParseSelectStatement());
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  if (HasOnlyBody(*inner)) return std::move(inner->body);
  auto body = std::make_unique<QueryBody>();
  body->kind = QueryBody::Kind::kNested;
  body->nested = std::move(inner);
  return body;
}

absl::StatusOr<std::unique_ptr<SelectCore>> RecursiveDescentParser::ParseSelectCore() {
  NestingScope scope(nesting_);
  if (!scope.ok()) return TooDeeplyNested();
  auto core = std::make_unique<SelectCore>();
  core->position = Current().position;
  TESSERA_RETURN_IF_ERROR(ExpectWord("SELECT"));
  if (ConsumeWord("DISTINCT")) {
    if (AtWord("ON")) return ErrorAt(Current().position, "DISTINCT ON is not supported");
    core->distinct = true;
  } else {
    ConsumeWord("ALL");
  }
  do {
    TESSERA_ASSIGN_OR_RETURN(SelectItem item, ParseSelectItem());
    core->items.push_back(std::move(item));
  } while (ConsumeOperator(","));
  if (ConsumeWord("FROM")) {
    do {
      TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<TableRef> table, ParseTableRef());
      core->from.push_back(std::move(table));
    } while (ConsumeOperator(","));
  }
  if (ConsumeWord("WHERE")) {
    TESSERA_ASSIGN_OR_RETURN(core->where, ParseExpression());
  }
  if (ConsumeWord("GROUP")) {
    TESSERA_RETURN_IF_ERROR(ExpectWord("BY"));
    TESSERA_RETURN_IF_ERROR(ParseGroupBy(*core));
  }
  if (ConsumeWord("HAVING")) {
    TESSERA_ASSIGN_OR_RETURN(core->having, ParseExpression());
  }
  if (AtWord("WINDOW")) TESSERA_RETURN_IF_ERROR(ParseWindowClause(*core));
  return core;
}

absl::StatusOr<SelectItem> RecursiveDescentParser::ParseSelectItem() {
  SelectItem item;
  if (AtOperator("*")) {
    item.expr = MakeExpr(ExprKind::kStar, Current().position);
    Advance();
    return item;
  }
  if (IsName(Current()) && IsOperator(PeekToken(1), ".") && IsOperator(PeekToken(2), "*")) {
    item.expr = MakeExpr(ExprKind::kStar, Current().position);
    item.expr->qualifier = Current().text;
    Advance();
    Advance();
    Advance();
    return item;
  }
  TESSERA_ASSIGN_OR_RETURN(item.expr, ParseExpression());
  if (ConsumeWord("AS")) {
    if (Current().kind == TokenKind::kKeyword) {  // after AS even a reserved word is a name: AS order
      item.alias = absl::AsciiStrToLower(Current().text);
      Advance();
    } else {
      TESSERA_ASSIGN_OR_RETURN(item.alias, ExpectName("an alias"));
    }
  } else if (IsName(Current()) && !AtStatementOption()) {
    item.alias = Current().text;
    Advance();
  }
  return item;
}

absl::StatusOr<std::unique_ptr<TableRef>> RecursiveDescentParser::ParseTableRef() {
  ChainTracker chain(nesting_);
  chain.BeforeOperand();
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<TableRef> left, ParseTablePrimary());
  chain.AfterOperand();
  while (true) {
    const bool natural = ConsumeWord("NATURAL");
    JoinType join_type = JoinType::kInner;
    if (AtWord("CROSS")) {
      if (natural) return ErrorAt(Current().position, "NATURAL CROSS JOIN is not valid");
      Advance();
      join_type = JoinType::kCross;
    } else if (ConsumeWord("INNER")) {
      join_type = JoinType::kInner;
    } else if (AtWord("LEFT") || AtWord("RIGHT") || AtWord("FULL")) {
      join_type = AtWord("LEFT") ? JoinType::kLeft : AtWord("RIGHT") ? JoinType::kRight : JoinType::kFull;
      Advance();
      ConsumeWord("OUTER");
    } else if (!AtWord("JOIN")) {
      if (natural) return ErrorExpected("JOIN");
      break;
    }
    TESSERA_RETURN_IF_ERROR(ExpectWord("JOIN"));

    auto join = std::make_unique<TableRef>();
    join->kind = TableRefKind::kJoin;
    join->position = left->position;
    join->join_type = join_type;
    join->natural = natural;
    chain.BeforeOperand();
    TESSERA_ASSIGN_OR_RETURN(join->right, ParseTablePrimary());
    if (join_type != JoinType::kCross && !natural) {
      if (ConsumeWord("ON")) {
        TESSERA_ASSIGN_OR_RETURN(join->join_condition, ParseExpression());
      } else if (ConsumeWord("USING")) {
        TESSERA_ASSIGN_OR_RETURN(join->using_columns, ParseNameList("a column name"));
      } else {
        return ErrorExpected("ON or USING");
      }
    }
    chain.AfterOperand();
    join->left = std::move(left);
    left = std::move(join);
    if (!chain.NodeBuilt()) return TooDeeplyNested();
  }
  return left;
}

absl::StatusOr<std::unique_ptr<TableRef>> RecursiveDescentParser::ParseTablePrimary() {
  const SourcePosition position = Current().position;
  // LATERAL is not reserved: it is the keyword only before `(` or `name(`, else a table named lateral.
  if (AtWord("LATERAL") && (IsOperator(PeekToken(1), "(") || (IsName(PeekToken(1)) && IsOperator(PeekToken(2), "(")))) {
    Advance();
    const SourcePosition item_position = Current().position;
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<TableRef> table, ParseTablePrimary());
    if (table->kind != TableRefKind::kSubquery && table->kind != TableRefKind::kFunction) {
      return ErrorAt(item_position, "LATERAL must be followed by a subquery or a table function");
    }
    table->lateral = true;
    table->position = position;
    return table;
  }
  if (AtOperator("(")) {
    NestingScope scope(nesting_);
    if (!scope.ok()) return TooDeeplyNested();
    std::unique_ptr<TableRef> table;
    if (AtParenthesizedQueryInFrom()) {
      Advance();
      table = std::make_unique<TableRef>();
      table->kind = TableRefKind::kSubquery;
      TESSERA_ASSIGN_OR_RETURN(table->subquery, ParseSelectStatement());
    } else {
      Advance();
      TESSERA_ASSIGN_OR_RETURN(table, ParseTableRef());
    }
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
    table->position = position;
    if (table->alias.empty()) TESSERA_RETURN_IF_ERROR(ParseTableAlias(*table));
    return table;
  }
  auto table = std::make_unique<TableRef>();
  table->kind = TableRefKind::kBaseTable;
  table->position = position;
  TESSERA_ASSIGN_OR_RETURN(table->name, ExpectName("a table name"));
  if (ConsumeOperator("(")) {  // a table function: generate_series(1, 10)
    table->kind = TableRefKind::kFunction;
    if (!AtOperator(")")) {
      TESSERA_ASSIGN_OR_RETURN(table->arguments, ParseExpressionList());
    }
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  }
  TESSERA_RETURN_IF_ERROR(ParseTableAlias(*table));
  return table;
}

absl::Status RecursiveDescentParser::ParseTableAlias(TableRef& table) {
  if (ConsumeWord("AS")) {
    TESSERA_ASSIGN_OR_RETURN(table.alias, ExpectName("an alias"));
  } else if (IsName(Current()) && !AtStatementOption()) {
    table.alias = Current().text;
    Advance();
  } else {
    return absl::OkStatus();
  }
  if (AtOperator("(")) {
    TESSERA_ASSIGN_OR_RETURN(table.column_aliases, ParseNameList("a column alias"));
  }
  return absl::OkStatus();
}

absl::Status RecursiveDescentParser::ParseOrderBy(SelectStatement& statement) {
  TESSERA_RETURN_IF_ERROR(ExpectWord("ORDER"));
  TESSERA_RETURN_IF_ERROR(ExpectWord("BY"));
  return ParseOrderByItems(&statement.order_by);
}

absl::Status RecursiveDescentParser::ParseOrderByItems(std::vector<OrderByItem>* items) {
  do {
    OrderByItem item;
    TESSERA_ASSIGN_OR_RETURN(item.expr, ParseExpression());
    if (ConsumeWord("DESC")) {
      item.ascending = false;
    } else {
      ConsumeWord("ASC");
    }
    if (ConsumeWord("NULLS")) {
      if (ConsumeWord("FIRST")) {
        item.nulls_first = true;
      } else if (ConsumeWord("LAST")) {
        item.nulls_first = false;
      } else {
        return ErrorExpected("FIRST or LAST");
      }
    }
    items->push_back(std::move(item));
  } while (ConsumeOperator(","));
  return absl::OkStatus();
}

absl::Status RecursiveDescentParser::ParseLimitOffsetFetch(SelectStatement& statement) {
  bool limit_seen = false;
  bool offset_seen = false;
  while (true) {
    const SourcePosition position = Current().position;
    if (AtWord("LIMIT") || AtWord("FETCH")) {
      if (limit_seen) return ErrorAt(position, "multiple LIMIT or FETCH clauses are not allowed");
      limit_seen = true;
      if (ConsumeWord("LIMIT")) {
        if (ConsumeWord("ALL")) continue;
        TESSERA_ASSIGN_OR_RETURN(statement.limit, ParseExpression());
        continue;
      }
      Advance();  // FETCH {FIRST | NEXT} [n] {ROW | ROWS} ONLY
      if (!ConsumeWord("FIRST") && !ConsumeWord("NEXT")) return ErrorExpected("FIRST or NEXT");
      if (AtWord("ROW") || AtWord("ROWS")) {
        statement.limit = MakeLiteral(LiteralKind::kInteger, "1", Current().position);
      } else {
        TESSERA_ASSIGN_OR_RETURN(statement.limit, ParseExpression());
      }
      if (!ConsumeWord("ROW") && !ConsumeWord("ROWS")) return ErrorExpected("ROW or ROWS");
      if (AtWord("WITH")) return ErrorAt(Current().position, "FETCH ... WITH TIES is not supported");
      TESSERA_RETURN_IF_ERROR(ExpectWord("ONLY"));
    } else if (ConsumeWord("OFFSET")) {
      if (offset_seen) return ErrorAt(position, "multiple OFFSET clauses are not allowed");
      offset_seen = true;
      TESSERA_ASSIGN_OR_RETURN(statement.offset, ParseExpression());
      if (!ConsumeWord("ROW")) ConsumeWord("ROWS");
    } else {
      return absl::OkStatus();
    }
  }
}

}  // namespace tessera::parser
