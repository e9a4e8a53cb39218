// DDL and utility statements: CREATE TABLE/VIEW, DROP, COPY, INSERT, EXPLAIN, ANALYZE, SET, SHOW, DESCRIBE.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "parser/expr_factory.h"
#include "parser/recursive_descent_parser.h"

namespace tessera::parser {

bool RecursiveDescentParser::ConsumeIfExists() {
  if (!AtWord("IF") || !IsWord(PeekToken(1), "EXISTS")) return false;
  Advance();
  Advance();
  return true;
}

bool RecursiveDescentParser::ConsumeIfNotExists() {
  if (!AtWord("IF") || !IsWord(PeekToken(1), "NOT") || !IsWord(PeekToken(2), "EXISTS")) return false;
  Advance();
  Advance();
  Advance();
  return true;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseCreate() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("CREATE"));
  if (AtWord("TABLE")) return ParseCreateTable();
  if (ConsumeWord("OR")) {
    TESSERA_RETURN_IF_ERROR(ExpectWord("REPLACE"));
    if (!AtWord("VIEW")) return ErrorExpected("VIEW");
    return ParseCreateView(/*or_replace=*/true);
  }
  if (AtWord("VIEW")) return ParseCreateView(/*or_replace=*/false);
  return ErrorExpected("TABLE or VIEW");
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseCreateTable() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("TABLE"));
  auto statement = std::make_unique<CreateTableStatement>();
  statement->if_not_exists = ConsumeIfNotExists();
  TESSERA_ASSIGN_OR_RETURN(statement->table, ExpectName("a table name"));
  if (AtWord("AS") || AtWord("WITH")) {  // CREATE TABLE name [WITH (...)] AS query
    TESSERA_RETURN_IF_ERROR(ParseTableOptions(*statement));
    TESSERA_RETURN_IF_ERROR(ExpectWord("AS"));
    if (!AtQueryStart()) return ErrorExpected("SELECT");
    TESSERA_ASSIGN_OR_RETURN(statement->query, ParseSelectStatement());
    return statement;
  }
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  bool has_primary_key = false;
  do {
    if (AtWord("PRIMARY")) {
      const SourcePosition position = Current().position;
      Advance();
      TESSERA_RETURN_IF_ERROR(ExpectWord("KEY"));
      if (has_primary_key) return ErrorAt(position, "multiple primary keys for a table are not allowed");
      has_primary_key = true;
      TESSERA_ASSIGN_OR_RETURN(statement->primary_key, ParseNameList("a column name"));
    } else {
      TESSERA_RETURN_IF_ERROR(ParseColumnDefinition(*statement));
      if (statement->columns.back().primary_key) {
        if (has_primary_key) {
          return ErrorAt(statement->columns.back().position, "multiple primary keys for a table are not allowed");
        }
        has_primary_key = true;
      }
    }
  } while (ConsumeOperator(","));
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));

  if (ConsumeWord("PARTITION")) {
    TESSERA_RETURN_IF_ERROR(ExpectWord("BY"));
    if (!AtWord("HASH")) return ErrorExpected("HASH (only hash partitioning is supported)");
    Advance();
    statement->partition_position = PeekToken(1).position;
    TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> columns, ParseNameList("a column name"));
    if (columns.size() != 1) {
      return ErrorAt(statement->partition_position, "PARTITION BY HASH takes exactly one column");
    }
    statement->partition_column = std::move(columns[0]);
  }
  TESSERA_RETURN_IF_ERROR(ParseTableOptions(*statement));
  return statement;
}

absl::Status RecursiveDescentParser::ParseTableOptions(CreateTableStatement& table) {
  if (!ConsumeWord("WITH")) return absl::OkStatus();
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  do {
    if (Current().kind != TokenKind::kIdentifier && Current().kind != TokenKind::kKeyword) {
      return ErrorExpected("a table option name");
    }
    std::string name = absl::AsciiStrToLower(Current().text);
    Advance();
    TESSERA_RETURN_IF_ERROR(ExpectOperator("="));
    TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ParsedExpr> value, ParseOptionValue());
    table.options.emplace_back(std::move(name), std::move(value));
  } while (ConsumeOperator(","));
  return ExpectOperator(")");
}

absl::Status RecursiveDescentParser::ParseColumnDefinition(CreateTableStatement& table) {
  ColumnDefinition column;
  column.position = Current().position;
  TESSERA_ASSIGN_OR_RETURN(column.name, ExpectName("a column name or PRIMARY KEY"));
  TESSERA_ASSIGN_OR_RETURN(column.type, ParseTypeName());
  bool nullability_given = false;
  while (true) {
    const SourcePosition position = Current().position;
    if (AtWord("NOT") || AtWord("NULL")) {
      const bool not_null = ConsumeWord("NOT");
      TESSERA_RETURN_IF_ERROR(ExpectWord("NULL"));
      if (nullability_given && column.not_null != not_null) {
        return ErrorAt(position, absl::StrCat("conflicting NULL/NOT NULL declarations for column ", column.name));
      }
      nullability_given = true;
      column.not_null = not_null;
    } else if (ConsumeWord("DEFAULT")) {
      if (column.default_value != nullptr) {
        return ErrorAt(position, absl::StrCat("multiple default values specified for column ", column.name));
      }
      TESSERA_ASSIGN_OR_RETURN(column.default_value, ParseExpression());
    } else if (ConsumeWord("PRIMARY")) {
      TESSERA_RETURN_IF_ERROR(ExpectWord("KEY"));
      column.primary_key = true;
    } else {
      break;
    }
  }
  if (column.primary_key) {
    if (nullability_given && !column.not_null) {
      return ErrorAt(column.position, absl::StrCat("conflicting NULL/NOT NULL declarations for column ", column.name));
    }
    column.not_null = true;
  }
  if (!AtOperator(",") && !AtOperator(")")) {
    return ErrorExpected("NOT NULL, NULL, DEFAULT, PRIMARY KEY, ',' or ')'");
  }
  table.columns.push_back(std::move(column));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseCreateView(bool or_replace) {
  TESSERA_RETURN_IF_ERROR(ExpectWord("VIEW"));
  auto statement = std::make_unique<CreateViewStatement>();
  statement->or_replace = or_replace;
  TESSERA_ASSIGN_OR_RETURN(statement->name, ExpectName("a view name"));
  if (AtOperator("(")) {
    TESSERA_ASSIGN_OR_RETURN(statement->column_names, ParseNameList("a column name"));
  }
  TESSERA_RETURN_IF_ERROR(ExpectWord("AS"));
  if (!AtQueryStart()) return ErrorExpected("SELECT");
  const int first_index = index_;
  TESSERA_ASSIGN_OR_RETURN(statement->query, ParseSelectStatement());
  statement->query_text = SourceText(first_index, index_ - 1);
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseDrop() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("DROP"));
  StatementKind kind;
  std::string_view what;
  if (ConsumeWord("TABLE")) {
    kind = StatementKind::kDropTable;
    what = "a table name";
  } else if (ConsumeWord("VIEW")) {
    kind = StatementKind::kDropView;
    what = "a view name";
  } else {
    return ErrorExpected("TABLE or VIEW");
  }
  auto statement = std::make_unique<DropStatement>(kind);
  statement->if_exists = ConsumeIfExists();
  TESSERA_ASSIGN_OR_RETURN(statement->name, ExpectName(what));
  return statement;
}

absl::StatusOr<std::unique_ptr<ParsedExpr>> RecursiveDescentParser::ParseOptionValue() {
  const Token& token = Current();
  if (token.kind == TokenKind::kIdentifier || token.kind == TokenKind::kQuotedIdentifier ||
      (token.kind == TokenKind::kKeyword && !AtWord("TRUE") && !AtWord("FALSE") && !AtWord("NULL"))) {
    std::string word = token.kind == TokenKind::kQuotedIdentifier ? token.text : std::string(TokenSource(token));
    auto literal = MakeLiteral(LiteralKind::kString, std::move(word), token.position);
    Advance();
    return literal;
  }
  const SourcePosition position = token.position;
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<ParsedExpr> value, ParseUnary());
  if (value->kind != ExprKind::kLiteral) return ErrorAt(position, "expected a literal option value");
  return value;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseCopy() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("COPY"));
  auto statement = std::make_unique<CopyStatement>();
  if (AtOperator("(") && AtQueryStart()) {
    Advance();
    TESSERA_ASSIGN_OR_RETURN(statement->query, ParseSelectStatement());
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
    if (!ConsumeWord("TO")) return ErrorExpected("TO (COPY (query) can only write)");
    statement->from = false;
  } else {
    TESSERA_ASSIGN_OR_RETURN(statement->table, ExpectName("a table name"));
    if (AtOperator("(")) {
      TESSERA_ASSIGN_OR_RETURN(statement->columns, ParseNameList("a column name"));
    }
    if (ConsumeWord("FROM")) {
      statement->from = true;
    } else if (ConsumeWord("TO")) {
      statement->from = false;
    } else {
      return ErrorExpected("FROM or TO");
    }
  }
  if (ConsumeWord(statement->from ? "STDIN" : "STDOUT")) {
    statement->stdio = true;
  } else {
    if (Current().kind != TokenKind::kString) {
      return ErrorExpected(statement->from ? "a file path in single quotes or STDIN"
                                           : "a file path in single quotes or STDOUT");
    }
    statement->path = Current().text;
    Advance();
  }

  const bool with = ConsumeWord("WITH");
  if (!with && !AtOperator("(")) return statement;
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  do {
    if (Current().kind != TokenKind::kIdentifier && Current().kind != TokenKind::kKeyword) {
      return ErrorExpected("a COPY option name");
    }
    std::string name = absl::AsciiStrToLower(Current().text);
    const SourcePosition position = Current().position;
    Advance();
    ConsumeOperator("=");
    std::unique_ptr<ParsedExpr> value;
    if (AtOperator(",") || AtOperator(")")) {
      value = MakeLiteral(LiteralKind::kBoolean, "TRUE", position);  // a bare option such as HEADER
    } else {
      TESSERA_ASSIGN_OR_RETURN(value, ParseOptionValue());
    }
    statement->options.emplace_back(std::move(name), std::move(value));
  } while (ConsumeOperator(","));
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseInsert() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("INSERT"));
  TESSERA_RETURN_IF_ERROR(ExpectWord("INTO"));
  auto statement = std::make_unique<InsertStatement>();
  TESSERA_ASSIGN_OR_RETURN(statement->table, ExpectName("a table name"));
  if (AtOperator("(") && !AtQueryStart()) {
    TESSERA_ASSIGN_OR_RETURN(statement->columns, ParseNameList("a column name"));
  }
  if (ConsumeWord("VALUES")) {
    do {
      TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
      TESSERA_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<ParsedExpr>> row, ParseExpressionList());
      TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
      statement->values.push_back(std::move(row));
    } while (ConsumeOperator(","));
    return statement;
  }
  if (!AtQueryStart()) return ErrorExpected("VALUES or SELECT");
  TESSERA_ASSIGN_OR_RETURN(statement->query, ParseSelectStatement());
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseExplain() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("EXPLAIN"));
  auto statement = std::make_unique<ExplainStatement>();
  if (AtOperator("(") && !AtQueryStart()) {
    Advance();
    do {
      if (ConsumeWord("ANALYZE")) {
        statement->analyze = true;
        if (ConsumeWord("FALSE")) {
          statement->analyze = false;
        } else {
          ConsumeWord("TRUE");
        }
      } else if (ConsumeWord("FORMAT")) {
        if (AtWord("TEXT") || AtWord("DOT")) {
          statement->format = Current().upper;
          Advance();
        } else {
          return ErrorExpected("TEXT or DOT");
        }
      } else {
        return ErrorExpected("an EXPLAIN option (FORMAT or ANALYZE)");
      }
    } while (ConsumeOperator(","));
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  } else if (ConsumeWord("ANALYZE")) {
    statement->analyze = true;
  }
  if (AtEndOfStatement()) return ErrorExpected("a statement to explain");
  TESSERA_ASSIGN_OR_RETURN(statement->statement, ParseStatement());
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseAnalyze() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("ANALYZE"));
  auto statement = std::make_unique<AnalyzeStatement>();
  if (!AtEndOfStatement()) {
    TESSERA_ASSIGN_OR_RETURN(statement->table, ExpectName("a table name"));
  }
  return statement;
}

absl::StatusOr<std::string> RecursiveDescentParser::ParseSettingName() {
  std::string name;
  do {
    if (Current().kind != TokenKind::kIdentifier && Current().kind != TokenKind::kQuotedIdentifier) {
      return ErrorExpected("a setting name");
    }
    if (!name.empty()) name.push_back('.');
    name += absl::AsciiStrToLower(Current().text);
    Advance();
  } while (ConsumeOperator("."));
  return name;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseSet() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("SET"));
  auto statement = std::make_unique<SetStatement>();
  TESSERA_ASSIGN_OR_RETURN(statement->name, ParseSettingName());
  if (!ConsumeOperator("=") && !ConsumeWord("TO")) return ErrorExpected("'=' or TO");
  const Token& token = Current();
  const bool bare_word = (token.kind == TokenKind::kIdentifier || token.kind == TokenKind::kKeyword) &&
                         !AtWord("TRUE") && !AtWord("FALSE") && !AtWord("NULL") &&
                         (IsOperator(PeekToken(1), ";") || PeekToken(1).kind == TokenKind::kEndOfInput);
  if (bare_word) {  // SET policy = fair, SET x TO DEFAULT
    statement->value = MakeLiteral(LiteralKind::kString, std::string(TokenSource(token)), token.position);
    Advance();
    return statement;
  }
  if (AtEndOfStatement()) return ErrorExpected("a value");
  TESSERA_ASSIGN_OR_RETURN(statement->value, ParseExpression());
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseCancelQuery() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("CANCEL"));
  TESSERA_RETURN_IF_ERROR(ExpectWord("QUERY"));
  auto statement = std::make_unique<CancelQueryStatement>();
  const Token& id = Current();
  if (id.kind != TokenKind::kInteger || !absl::SimpleAtoi(id.text, &statement->query_id) || statement->query_id < 1) {
    return ErrorExpected("a query id (a positive integer, as SHOW QUERIES lists it)");
  }
  Advance();
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseShow() {
  TESSERA_RETURN_IF_ERROR(ExpectWord("SHOW"));
  auto statement = std::make_unique<ShowStatement>();
  if (ConsumeWord("ALL")) {
    statement->name = "all";
  } else if (AtWord("STATS")) {
    Advance();
    statement->name = "stats";
    if (!AtEndOfStatement()) {
      TESSERA_ASSIGN_OR_RETURN(statement->target, ExpectName("a table name"));
    }
  } else {
    // TABLES, MEMORY and setting names are all plain words here.
    TESSERA_ASSIGN_OR_RETURN(statement->name, ParseSettingName());
  }
  return statement;
}

absl::StatusOr<std::unique_ptr<Statement>> RecursiveDescentParser::ParseDescribe() {
  Advance();  // DESCRIBE or DESC
  auto statement = std::make_unique<DescribeStatement>();
  TESSERA_ASSIGN_OR_RETURN(statement->table, ExpectName("a table name"));
  return statement;
}

}  // namespace tessera::parser
