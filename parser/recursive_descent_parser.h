#pragma once
// The recursive-descent parser over the lexer's tokens. Internal to the parser module: use parser/parser.h.
//
// One instance parses one text; its member functions are split by topic over several files:
//   recursive_descent_parser.cc  token cursor, errors, statement list and dispatch
//   statement_parser.cc          DDL and utility statements (CREATE, DROP, COPY, INSERT, EXPLAIN, SET, ...)
//   query_parser.cc              SELECT: WITH, set operations, select list, FROM and joins, ORDER BY, LIMIT
//   group_by_parser.cc           GROUP BY with ROLLUP, CUBE and GROUPING SETS
//   expression_parser.cc         scalar expressions: precedence levels, predicates, primaries
//   special_form_parser.cc       CASE, CAST, EXTRACT, SUBSTRING, function calls, typed literals, type names
//
// Every parse function returns an error status instead of throwing; recursion is bounded by NestingBudget.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "parser/ast.h"
#include "parser/nesting_budget.h"
#include "parser/token.h"

namespace tessera::parser {

class RecursiveDescentParser {
 public:
  // `tokens` must come from Tokenize(sql) (ends with kEndOfInput).
  RecursiveDescentParser(std::string_view sql, std::vector<Token> tokens);

  // Parses all ';'-separated statements up to the end of input; empty statements are skipped.
  absl::StatusOr<std::vector<std::unique_ptr<Statement>>> ParseStatementList();

  // Parses exactly one statement, optionally followed by ';'s, up to the end of input.
  absl::StatusOr<std::unique_ptr<Statement>> ParseSingleStatement();

 private:
  using ExprPtr = std::unique_ptr<ParsedExpr>;

  // ---- Token cursor (recursive_descent_parser.cc) ----
  const Token& Current() const { return tokens_[index_]; }
  const Token& PeekToken(int ahead) const;
  void Advance();
  static bool IsOperator(const Token& token, std::string_view op);
  // True for a keyword or unquoted identifier spelled `upper_word` (any case).
  static bool IsWord(const Token& token, std::string_view upper_word);
  // True for tokens usable as a name: identifiers, quoted identifiers and non-reserved keywords.
  static bool IsName(const Token& token);
  bool AtOperator(std::string_view op) const { return IsOperator(Current(), op); }
  bool AtWord(std::string_view upper_word) const { return IsWord(Current(), upper_word); }
  // At `OPTION ( PRIORITY` ending a query statement, where OPTION is not an implicit alias.
  bool AtStatementOption() const {
    return AtWord("OPTION") && IsOperator(PeekToken(1), "(") && IsWord(PeekToken(2), "PRIORITY");
  }
  bool AtEndOfStatement() const;
  bool ConsumeOperator(std::string_view op);
  bool ConsumeWord(std::string_view upper_word);
  absl::Status ExpectOperator(std::string_view op);
  absl::Status ExpectWord(std::string_view upper_word);
  // Consumes a name (see IsName) and returns it: lower-cased unless quoted. `what` names it in errors.
  absl::StatusOr<std::string> ExpectName(std::string_view what);
  // '(' name, name, ... ')'
  absl::StatusOr<std::vector<std::string>> ParseNameList(std::string_view what);
  // The source text of tokens [first_index, last_index].
  std::string SourceText(int first_index, int last_index) const;
  std::string_view TokenSource(const Token& token) const;

  // ---- Errors ----
  absl::Status ErrorAt(const SourcePosition& position, std::string_view what) const;
  // "expected <what>, found '<token>'" or "unexpected end of input, expected <what>" at the current token.
  absl::Status ErrorExpected(std::string_view what) const;
  absl::Status TooDeeplyNested() const;
  std::string DescribeToken(const Token& token) const;

  // ---- Statements (recursive_descent_parser.cc, statement_parser.cc) ----
  absl::StatusOr<std::unique_ptr<Statement>> ParseStatement();
  absl::StatusOr<std::unique_ptr<Statement>> ParseStatementBody();
  absl::StatusOr<std::unique_ptr<Statement>> ParseCreate();
  absl::StatusOr<std::unique_ptr<Statement>> ParseCreateTable();
  absl::StatusOr<std::unique_ptr<Statement>> ParseCreateView(bool or_replace);
  absl::Status ParseColumnDefinition(CreateTableStatement& table);
  // `WITH (name = value, ...)` after CREATE TABLE's columns (or before AS), if present.
  absl::Status ParseTableOptions(CreateTableStatement& table);
  absl::StatusOr<std::unique_ptr<Statement>> ParseDrop();
  absl::StatusOr<std::unique_ptr<Statement>> ParseCopy();
  absl::StatusOr<std::unique_ptr<Statement>> ParseInsert();
  absl::StatusOr<std::unique_ptr<Statement>> ParseExplain();
  absl::StatusOr<std::unique_ptr<Statement>> ParseAnalyze();
  absl::StatusOr<std::unique_ptr<Statement>> ParseSet();
  absl::StatusOr<std::unique_ptr<Statement>> ParseShow();
  absl::StatusOr<std::unique_ptr<Statement>> ParseDescribe();
  absl::StatusOr<std::unique_ptr<Statement>> ParseDelete();  // dml_parser.cc
  absl::StatusOr<std::unique_ptr<Statement>> ParseUpdate();
  absl::StatusOr<std::unique_ptr<Statement>> ParseVacuum();
  // CANCEL QUERY id (parser/statement_parser.cc).
  absl::StatusOr<std::unique_ptr<Statement>> ParseCancelQuery();
  // DELETE / UPDATE: the target table's optional alias (not a word that starts the next clause).
  absl::StatusOr<std::string> ParseTargetAlias(std::string_view next_clause);
  absl::StatusOr<std::vector<std::unique_ptr<TableRef>>> ParseFromList();
  // A possibly dotted setting name (a.b.c), lower-cased.
  absl::StatusOr<std::string> ParseSettingName();
  // An option value: a literal, or a bare word returned as a kString literal with its original spelling.
  absl::StatusOr<ExprPtr> ParseOptionValue();
  // Consumes IF EXISTS / IF NOT EXISTS when present (IF is not reserved, so `DROP TABLE if` drops table
  // "if").
  bool ConsumeIfExists();
  bool ConsumeIfNotExists();

  // ---- Queries (query_parser.cc) ----
  absl::StatusOr<std::unique_ptr<SelectStatement>> ParseSelectStatement();
  absl::Status ParseWithClause(SelectStatement& statement);
  absl::StatusOr<std::unique_ptr<QueryBody>> ParseQueryBody();      // UNION / EXCEPT level
  absl::StatusOr<std::unique_ptr<QueryBody>> ParseIntersectTerm();  // INTERSECT level
  absl::StatusOr<std::unique_ptr<QueryBody>> ParseQueryPrimary();   // SELECT ... or ( query )
  absl::StatusOr<std::unique_ptr<SelectCore>> ParseSelectCore();
  absl::StatusOr<SelectItem> ParseSelectItem();
  // ---- GROUP BY (group_by_parser.cc): expressions, ROLLUP, CUBE, GROUPING SETS, () ----
  absl::Status ParseGroupBy(SelectCore& core);
  absl::StatusOr<std::unique_ptr<TableRef>> ParseTableRef();  // a table primary and its joins
  absl::StatusOr<std::unique_ptr<TableRef>> ParseTablePrimary();
  absl::Status ParseTableAlias(TableRef& table);
  absl::Status ParseOrderBy(SelectStatement& statement);
  // `expr [ASC|DESC] [NULLS FIRST|LAST], ...` (after ORDER BY).
  absl::Status ParseOrderByItems(std::vector<OrderByItem>* items);
  absl::Status ParseLimitOffsetFetch(SelectStatement& statement);
  // True if the current token starts a query (SELECT, WITH) or is '(' followed, through any number of '(',
  // by SELECT or WITH.
  bool AtQueryStart() const;
  // At a '(' that opens a parenthesized query expression in FROM, e.g. `((SELECT ...) EXCEPT (SELECT ...))`,
  // rather than a parenthesized join: its first item is a parenthesized query and the token after that item
  // is a set operator, ORDER BY / LIMIT / OFFSET / FETCH, or the closing ')'.
  bool AtParenthesizedQueryInFrom() const;

  // ---- Expressions (expression_parser.cc) ----
  enum class BinaryLevel { kOr, kAnd, kConcat, kAdditive, kMultiplicative };
  absl::StatusOr<ExprPtr> ParseExpression();
  absl::StatusOr<std::vector<ExprPtr>> ParseExpressionList();
  absl::StatusOr<ExprPtr> ParseBinaryLevel(BinaryLevel level);
  absl::StatusOr<ExprPtr> ParseOperandOf(BinaryLevel level);
  // The operator of `level` at the current token, or "" if none.
  std::string BinaryOperatorAt(BinaryLevel level) const;
  absl::StatusOr<ExprPtr> ParseNot();
  absl::StatusOr<ExprPtr> ParseComparison();
  absl::StatusOr<ExprPtr> ParseUnary();
  absl::StatusOr<ExprPtr> ParsePostfix();
  absl::StatusOr<ExprPtr> ParsePrimary();
  absl::StatusOr<ExprPtr> ParseParenthesized();
  absl::StatusOr<ExprPtr> ParseCase();
  absl::StatusOr<ExprPtr> ParseCast();
  absl::StatusOr<ExprPtr> ParseExists();
  absl::StatusOr<ExprPtr> ParseExtract();
  absl::StatusOr<ExprPtr> ParseSubstring();
  // POSITION(substring IN string): the call STRPOS(string, substring); POSITION(a, b) is an ordinary call.
  absl::StatusOr<ExprPtr> ParsePosition();
  absl::StatusOr<ExprPtr> ParseFunctionCall();
  // `FILTER ( WHERE condition )` after the aggregate call `call`, folded into its argument (ast.h).
  absl::StatusOr<ExprPtr> ParseAggregateFilter(ExprPtr call);
  absl::StatusOr<ExprPtr> ParseColumnRef();
  absl::StatusOr<ExprPtr> ParseTypedLiteral(LiteralKind kind);  // DATE '...', TIMESTAMP '...'
  absl::StatusOr<ExprPtr> ParseInterval();
  absl::StatusOr<ExprPtr> ParseInPredicate(ExprPtr value, bool negated, const SourcePosition& position);
  absl::StatusOr<TypeName> ParseTypeName();

  // ---- Windows (window_parser.cc) ----
  // After a function call's `)`: `OVER name` or `OVER (spec)`.
  absl::StatusOr<std::unique_ptr<WindowSpec>> ParseOverClause();
  // The inside of `( [name] [PARTITION BY ...] [ORDER BY ...] [frame] )`, parentheses included.
  absl::StatusOr<std::unique_ptr<WindowSpec>> ParseWindowSpec();
  absl::StatusOr<WindowFrame> ParseWindowFrame();
  absl::StatusOr<FrameBound> ParseFrameBound();
  // `WINDOW name AS (spec), ...` at the end of a SELECT block.
  absl::Status ParseWindowClause(SelectCore& core);

  std::string_view sql_;
  std::vector<Token> tokens_;
  int index_ = 0;
  NestingBudget nesting_;
};

}  // namespace tessera::parser
