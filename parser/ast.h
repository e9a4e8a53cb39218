#pragma once
// The abstract syntax tree produced by the parser. Purely syntactic: names are unresolved strings and types are
// names with parameters; the binder (optimizer/) gives them meaning. Every node keeps the source position of its
// first token so later stages can point at the offending text in error messages.
//
// Trees are owned through std::unique_ptr and are immutable after parsing; they may be read from any thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessera::parser {

// 1-based line and column of a token, plus its 0-based byte offset in the statement text.
struct SourcePosition {
  int line = 1;
  int column = 1;
  int offset = 0;
};

// A type as written, e.g. DECIMAL(15, 2) -> {"DECIMAL", {15, 2}}; names are upper-cased.
struct TypeName {
  std::string name;
  std::vector<int64_t> parameters;
  SourcePosition position;
};

struct SelectStatement;
struct WindowSpec;

enum class ExprKind {
  kLiteral,         // literal
  kColumnRef,       // qualifier (may be empty) + name
  kStar,            // `*` or `t.*` (qualifier), only in select lists and COUNT(*)
  kUnary,           // op: "-", "+", "NOT"; children[0]
  kBinary,          // op: "+", "-", "*", "/", "%", "||", "=", "<>", "<", "<=", ">", ">=", "AND", "OR"
  kFunctionCall,    // name (upper-cased), children = arguments, distinct for COUNT(DISTINCT x); includes aggregates
  kCase,            // children: [operand?] then WHEN/THEN pairs, then ELSE?; see case_has_operand / case_has_else
  kCast,            // children[0], cast_type
  kBetween,         // children: value, low, high; negated for NOT BETWEEN
  kInList,          // children: value, then list items; negated for NOT IN
  kInSubquery,      // children[0] = value, subquery; negated for NOT IN
  kExists,          // subquery; negated for NOT EXISTS
  kScalarSubquery,  // subquery
  kLike,            // children: value, pattern; negated for NOT LIKE
  kIsNull,          // children[0]; negated for IS NOT NULL
  kExtract,         // name = field (YEAR, MONTH, DAY, ...), children[0]
  kSubstring,       // children: string, start, [length]  (SUBSTRING(s FROM a FOR b) and SUBSTRING(s, a, b))
};

enum class LiteralKind {
  kNull,
  kBoolean,    // text "TRUE"/"FALSE"
  kInteger,    // digits only, text kept exactly (may overflow int64: the binder decides); a unary minus directly
               // before a number is folded into the literal: "-5"
  kDecimal,    // digits with a '.' or an exponent, text kept exactly (with a folded '-', as for kInteger)
  kString,     // text is the unescaped content
  kDate,       // DATE 'yyyy-mm-dd'; text is the quoted content
  kTimestamp,  // TIMESTAMP '...'
  kInterval,   // INTERVAL '3' MONTH / INTERVAL '1 day': text = quoted content, interval_unit = unit or ""
};

struct OrderByItem;

struct ParsedExpr {
  ExprKind kind = ExprKind::kLiteral;
  SourcePosition position;

  // kLiteral
  LiteralKind literal_kind = LiteralKind::kNull;
  std::string literal_text;
  std::string interval_unit;  // upper-cased: YEAR, MONTH, DAY, HOUR, MINUTE, SECOND (singular)

  // kColumnRef / kStar: qualifier is the table (or alias) name, empty if none. name is the column,
  // the function name, the EXTRACT field, or the operator.
  std::string qualifier;
  std::string name;

  std::vector<std::unique_ptr<ParsedExpr>> children;
  std::unique_ptr<SelectStatement> subquery;
  std::optional<TypeName> cast_type;
  // kFunctionCall with an OVER clause: a window function call (null for plain calls). See WindowSpec.
  std::unique_ptr<WindowSpec> window;

  bool distinct = false;  // COUNT(DISTINCT x)
  // f(x) FILTER (WHERE c) was written; the parser has rewritten the argument to CASE WHEN c THEN x END (COUNT(*)
  // to COUNT(CASE WHEN c THEN 1 END)), which aggregates that skip NULLs compute alike. The binder rejects it on
  // functions that are not aggregates.
  bool aggregate_filter = false;
  // Ordered aggregates: `string_agg(x, ',' ORDER BY y)` (within_group false) or `percentile_cont(0.5) WITHIN
  // GROUP (ORDER BY x)` (within_group true); empty for other calls. The binder says which functions accept it.
  std::vector<OrderByItem> aggregate_order_by;
  bool within_group = false;
  bool negated = false;           // NOT IN / NOT LIKE / NOT BETWEEN / IS NOT NULL / NOT EXISTS
  bool case_has_operand = false;  // CASE x WHEN ...
  bool case_has_else = false;

  ParsedExpr();
  ~ParsedExpr();
  ParsedExpr(ParsedExpr&&) noexcept;
  ParsedExpr& operator=(ParsedExpr&&) noexcept;
};

// Renders an expression back to SQL-like text (for column headers, EXPLAIN and error messages), e.g.
// `sum(l_extendedprice * (1 - l_discount))`: function names lower-case, keywords upper-case, parentheses only where
// precedence needs them, identifiers double-quoted only where needed. Parsing the result gives the same tree.
std::string ToString(const ParsedExpr& expr);

struct SelectStatement;
// Renders a query back to SQL text on one line; parsing the result gives the same tree (positions aside).
std::string ToString(const SelectStatement& query);

enum class JoinType { kInner, kLeft, kRight, kFull, kCross };

enum class TableRefKind { kBaseTable, kSubquery, kJoin, kFunction };

struct TableRef {
  TableRefKind kind = TableRefKind::kBaseTable;
  SourcePosition position;
  std::string name;  // kBaseTable: the table, view or CTE name; kFunction: the function's
  std::vector<std::unique_ptr<ParsedExpr>> arguments;  // kFunction: `name(arguments)` (a table function)
  std::string alias;                                   // empty if none
  std::vector<std::string> column_aliases;             // AS t(a, b, c)
  std::unique_ptr<SelectStatement> subquery;           // kSubquery
  // kSubquery / kFunction written `LATERAL (...)` / `LATERAL f(...)`: it may read the FROM items before it (a
  // table function may do so without the word, as in PostgreSQL and DuckDB).
  bool lateral = false;
  // kJoin
  JoinType join_type = JoinType::kInner;
  std::unique_ptr<TableRef> left;
  std::unique_ptr<TableRef> right;
  std::unique_ptr<ParsedExpr> join_condition;  // ON ...
  std::vector<std::string> using_columns;      // USING (...)
  bool natural = false;

  TableRef();
  ~TableRef();
};

struct SelectItem {
  std::unique_ptr<ParsedExpr> expr;
  std::string alias;  // empty if none
};

struct OrderByItem {
  std::unique_ptr<ParsedExpr> expr;  // may be an integer literal (ordinal) or an alias
  bool ascending = true;
  std::optional<bool> nulls_first;  // unset: the default (NULLS LAST for ASC, NULLS FIRST for DESC)
};

// A window frame bound: UNBOUNDED PRECEDING, <offset> PRECEDING, CURRENT ROW, <offset> FOLLOWING,
// UNBOUNDED FOLLOWING. `offset` is set for kPreceding / kFollowing only.
enum class FrameBoundKind { kUnboundedPreceding, kPreceding, kCurrentRow, kFollowing, kUnboundedFollowing };
struct FrameBound {
  FrameBoundKind kind = FrameBoundKind::kUnboundedPreceding;
  std::unique_ptr<ParsedExpr> offset;
  SourcePosition position;
};

enum class FrameUnit { kRows, kRange };

// `ROWS|RANGE BETWEEN start AND end`; the short form `ROWS start` has end = CURRENT ROW.
struct WindowFrame {
  FrameUnit unit = FrameUnit::kRange;
  FrameBound start;
  FrameBound end;
  SourcePosition position;
};

// The window of `f(...) OVER (...)` or of a `WINDOW name AS (...)` definition: `OVER name` is a spec with
// only base_name set; `OVER (name ORDER BY ...)` refines the named window.
struct WindowSpec {
  SourcePosition position;
  std::string base_name;  // lower-cased unless quoted; "" when none
  std::vector<std::unique_ptr<ParsedExpr>> partition_by;
  std::vector<OrderByItem> order_by;
  std::optional<WindowFrame> frame;
  bool parenthesized = true;  // false for `OVER name`
};

struct WindowDefinition {
  std::string name;
  std::unique_ptr<WindowSpec> spec;
  SourcePosition position;
};

// One SELECT ... FROM ... WHERE ... GROUP BY ... HAVING block.
struct SelectCore {
  SourcePosition position;
  bool distinct = false;
  std::vector<SelectItem> items;
  std::vector<std::unique_ptr<TableRef>> from;  // comma-separated; empty for SELECT without FROM
  std::unique_ptr<ParsedExpr> where;
  // GROUP BY: every distinct grouping expression once. With ROLLUP, CUBE or GROUPING SETS, grouping_sets lists
  // the sets as indexes into group_by (the expansion of the clause, in the standard's order; {} is the empty set,
  // the grand total); empty for a plain GROUP BY, which groups by all of group_by.
  std::vector<std::unique_ptr<ParsedExpr>> group_by;
  std::vector<std::vector<int>> grouping_sets;
  std::unique_ptr<ParsedExpr> having;
  std::vector<WindowDefinition> windows;  // WINDOW w AS (...), ...
};

enum class SetOperation { kUnion, kIntersect, kExcept };

// A query body: either one SelectCore or a set operation over two bodies (left-deep, standard precedence:
// INTERSECT binds tighter than UNION/EXCEPT). A parenthesized query with its own ORDER BY/LIMIT appears as `nested`.
struct QueryBody {
  enum class Kind { kSelect, kSetOperation, kNested } kind = Kind::kSelect;
  std::unique_ptr<SelectCore> select;
  SetOperation set_operation = SetOperation::kUnion;
  bool all = false;
  std::unique_ptr<QueryBody> left;
  std::unique_ptr<QueryBody> right;
  std::unique_ptr<SelectStatement> nested;

  QueryBody();
  ~QueryBody();
};

struct CommonTableExpr {
  std::string name;
  std::vector<std::string> column_names;
  // Under WITH RECURSIVE (every query of that WITH): the query may read its own name (the binder decides
  // whether it does; optimizer/recursive_cte_binder.cc).
  bool recursive = false;
  std::unique_ptr<SelectStatement> query;
  SourcePosition position;
};

struct SelectStatement {
  SourcePosition position;
  std::vector<CommonTableExpr> ctes;
  std::unique_ptr<QueryBody> body;
  std::vector<OrderByItem> order_by;
  std::unique_ptr<ParsedExpr> limit;
  std::unique_ptr<ParsedExpr> offset;

  SelectStatement();
  ~SelectStatement();
};

enum class StatementKind {
  kSelect,
  kCreateTable,
  kDropTable,
  kCreateView,
  kDropView,
  kCopy,
  kInsert,
  kExplain,
  kAnalyze,
  kSet,
  kShow,         // SHOW name | SHOW ALL | SHOW TABLES
  kDescribe,     // DESCRIBE t / DESC t
  kDelete,       // DELETE FROM t [USING ...] [WHERE ...]
  kUpdate,       // UPDATE t SET c = e, ... [FROM ...] [WHERE ...]
  kVacuum,       // VACUUM [t]
  kCancelQuery,  // CANCEL QUERY id
};

struct Statement {
  explicit Statement(StatementKind k) : kind(k) {}
  virtual ~Statement() = default;
  StatementKind kind;
  SourcePosition position;
  std::string text;  // the statement's own source text, without the terminating ';'
};

struct SelectQueryStatement : Statement {
  SelectQueryStatement() : Statement(StatementKind::kSelect) {}
  std::unique_ptr<SelectStatement> query;
  // `OPTION (PRIORITY n)` after the query: this statement's scheduling priority (>= 1); 0 = the session's.
  int priority = 0;
};

struct ColumnDefinition {
  std::string name;
  TypeName type;
  bool not_null = false;
  bool primary_key = false;  // accepted; implies NOT NULL
  std::unique_ptr<ParsedExpr> default_value;
  SourcePosition position;
};

struct CreateTableStatement : Statement {
  CreateTableStatement() : Statement(StatementKind::kCreateTable) {}
  std::string table;
  bool if_not_exists = false;
  std::vector<ColumnDefinition> columns;
  std::vector<std::string> primary_key;  // table-level PRIMARY KEY (...)
  // PARTITION BY HASH (column): the column rows are spread over a distributed cluster's ranks by; "" when none.
  std::string partition_column;
  SourcePosition partition_position;  // of the column name
  // WITH (block_size = '4MB', ...): option names lower-cased, values as literals.
  std::vector<std::pair<std::string, std::unique_ptr<ParsedExpr>>> options;
  // CREATE TABLE name [WITH (...)] AS query: the columns are the query's (`columns` is empty); null otherwise.
  std::unique_ptr<SelectStatement> query;
};

struct DropStatement : Statement {
  explicit DropStatement(StatementKind k) : Statement(k) {}  // kDropTable or kDropView
  std::string name;
  bool if_exists = false;
};

struct CreateViewStatement : Statement {
  CreateViewStatement() : Statement(StatementKind::kCreateView) {}
  std::string name;
  bool or_replace = false;
  std::vector<std::string> column_names;
  std::unique_ptr<SelectStatement> query;
  std::string query_text;  // the view's defining SELECT as written, persisted in the catalog
};

struct CopyStatement : Statement {
  CopyStatement() : Statement(StatementKind::kCopy) {}
  std::string table;                       // empty for COPY (query) TO
  std::unique_ptr<SelectStatement> query;  // COPY (SELECT ...) TO STDOUT | 'path'
  std::vector<std::string> columns;        // optional column list
  bool from = true;                        // COPY t FROM 'path' (true) or COPY t TO 'path' (false)
  std::string path;
  bool stdio = false;  // FROM STDIN / TO STDOUT: the client connection's data, not a file (path empty)
  // (DELIMITER '|', HEADER false, NULL '', FORMAT csv): names lower-cased, values as literals.
  std::vector<std::pair<std::string, std::unique_ptr<ParsedExpr>>> options;
};

struct InsertStatement : Statement {
  InsertStatement() : Statement(StatementKind::kInsert) {}
  std::string table;
  std::vector<std::string> columns;                              // optional column list
  std::vector<std::vector<std::unique_ptr<ParsedExpr>>> values;  // INSERT ... VALUES (...), (...)
  std::unique_ptr<SelectStatement> query;                        // INSERT ... SELECT
};

struct ExplainStatement : Statement {
  ExplainStatement() : Statement(StatementKind::kExplain) {}
  bool analyze = false;
  std::string format = "TEXT";  // TEXT or DOT, from EXPLAIN (FORMAT DOT)
  std::unique_ptr<Statement> statement;
};

struct AnalyzeStatement : Statement {
  AnalyzeStatement() : Statement(StatementKind::kAnalyze) {}
  std::string table;  // empty: all tables
};

struct SetStatement : Statement {
  SetStatement() : Statement(StatementKind::kSet) {}
  std::string name;  // lower-cased
  std::unique_ptr<ParsedExpr> value;
};

struct ShowStatement : Statement {
  ShowStatement() : Statement(StatementKind::kShow) {}
  std::string name;    // lower-cased: a setting name, "all", "tables", "stats" or "memory"
  std::string target;  // SHOW STATS table_name: the table (empty: all tables)
};

struct DescribeStatement : Statement {
  DescribeStatement() : Statement(StatementKind::kDescribe) {}
  std::string table;
};

// DELETE and UPDATE carry the query that finds their rows, built by the parser:
//   DELETE FROM t [[AS] a] [USING u, ...] [WHERE p]  ->  SELECT a."#row_id" FROM t AS a, u, ... WHERE p
//   UPDATE t [[AS] a] SET c = e, ... [FROM u, ...] [WHERE p]
//                                       ->  SELECT a.*, e, ..., a."#row_id" FROM t AS a, u, ... WHERE p
// "#row_id" (kRowIdColumnRef) is the hidden row-id column that the engine's binding of t provides
// (catalog/row_deletions.h); the alias defaults to the table name.
constexpr char kRowIdColumnRef[] = "#row_id";

struct DeleteStatement : Statement {
  DeleteStatement() : Statement(StatementKind::kDelete) {}
  std::string table;
  SourcePosition table_position;
  std::unique_ptr<SelectStatement> query;
};

struct UpdateStatement : Statement {
  UpdateStatement() : Statement(StatementKind::kUpdate) {}
  struct Assignment {
    std::string column;
    SourcePosition position;  // of the column name
  };
  std::string table;
  SourcePosition table_position;
  std::vector<Assignment> assignments;  // assignment i's value is query's select item 1 + i (after a.*)
  std::unique_ptr<SelectStatement> query;
};

struct VacuumStatement : Statement {
  VacuumStatement() : Statement(StatementKind::kVacuum) {}
  std::string table;  // empty: all tables
};

struct CancelQueryStatement : Statement {
  CancelQueryStatement() : Statement(StatementKind::kCancelQuery) {}
  int64_t query_id = 0;  // a server's query id, as SHOW QUERIES lists it
};

}  // namespace tessera::parser
