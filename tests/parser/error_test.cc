// Malformed statements: each error names the line, column and what was expected or found, and shows the
// offending line with a caret. Also: deep nesting is an error, never a crash.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "parser/parser.h"
#include "tests/parser/parse_for_test.h"

namespace tessera::parser {
namespace {

using ::testing::HasSubstr;
using testing::ParseError;
using ::testing::StartsWith;

// The first line of the message, without the "syntax error at line " prefix.
std::string Headline(std::string_view sql) {
  const std::string message = ParseError(sql);
  const std::string prefix = "syntax error at line ";
  EXPECT_THAT(message, StartsWith(prefix)) << std::string(sql);
  return message.substr(prefix.size(), message.find('\n') - prefix.size());
}

struct MalformedCase {
  const char* sql;
  const char* headline;  // "L, column C: what"
};

const MalformedCase kMalformed[] = {
    {"SELECT", "1, column 7: unexpected end of input, expected an expression"},
    {"SELECT FROM t", "1, column 8: expected an expression, found 'FROM'"},
    {"SELECT a, FROM t", "1, column 11: expected an expression, found 'FROM'"},
    {"SELECT a FROM", "1, column 14: unexpected end of input, expected a table name"},
    {"SELECT a FROM t WHERE", "1, column 22: unexpected end of input, expected an expression"},
    {"SELECT a FROM t WHERE a =", "1, column 26: unexpected end of input, expected an expression"},
    {"SELECT (1 + 2", "1, column 14: unexpected end of input, expected ')'"},
    {"SELECT 1 + 2)", "1, column 13: expected end of statement, found ')'"},
    {"SELECT a FROM t GROUP a", "1, column 23: expected BY, found 'a'"},
    {"SELECT a FROM t ORDER a", "1, column 23: expected BY, found 'a'"},
    {"SELECT a FROM t ORDER BY", "1, column 25: unexpected end of input, expected an expression"},
    {"SELECT a FROM t LIMIT", "1, column 22: unexpected end of input, expected an expression"},
    {"SELECT a FROM t t2 t3", "1, column 20: expected end of statement, found 't3'"},
    {"SELECT 1 2", "1, column 10: expected end of statement, found '2'"},
    {"SELECT * FROM a JOIN b", "1, column 23: unexpected end of input, expected ON or USING"},
    {"SELECT * FROM a NATURAL b", "1, column 25: expected JOIN, found 'b'"},
    {"SELECT * FROM a NATURAL CROSS JOIN b", "1, column 25: NATURAL CROSS JOIN is not valid"},
    {"SELECT * FROM a JOIN b USING ()", "1, column 31: expected a column name, found ')'"},
    {"SELECT * FROM (SELECT 1", "1, column 24: unexpected end of input, expected ')'"},
    {"SELECT * FROM (SELECT 1) AS", "1, column 28: unexpected end of input, expected an alias"},
    {"SELECT CASE END", "1, column 13: expected an expression, found 'END'"},
    {"SELECT CASE WHEN a THEN 1", "1, column 26: unexpected end of input, expected WHEN, ELSE or END"},
    {"SELECT CASE a ELSE 1 END", "1, column 15: expected WHEN, found 'ELSE'"},
    {"SELECT CAST(a)", "1, column 14: expected AS, found ')'"},
    {"SELECT CAST(a AS)", "1, column 17: expected a type name, found ')'"},
    {"SELECT CAST(a AS 5)", "1, column 18: expected a type name, found '5'"},
    {"SELECT a::", "1, column 11: unexpected end of input, expected a type name"},
    {"SELECT x BETWEEN 1", "1, column 19: unexpected end of input, expected AND"},
    {"SELECT x IN 1", "1, column 13: expected '(', found '1'"},
    {"SELECT x IN ()", "1, column 14: expected an expression, found ')'"},
    {"SELECT x NOT 5", "1, column 10: expected end of statement, found 'NOT'"},
    {"SELECT x IS 5", "1, column 13: expected NULL or NOT NULL, found '5'"},
    {"SELECT x LIKE 'a' ESCAPE '\\'", "1, column 19: LIKE ... ESCAPE is not supported"},
    {"SELECT x ILIKE 'a'", "1, column 10: ILIKE is not supported; use lower(x) LIKE pattern"},
    {"SELECT sum(*) FROM t", "1, column 12: expected an expression, found '*'"},
    {"SELECT count(DISTINCT) FROM t", "1, column 22: expected an expression, found ')'"},
    {"SELECT f(a,) FROM t", "1, column 12: expected an expression, found ')'"},
    {"SELECT extract(FROM d)", "1, column 16: expected a date/time field such as YEAR, found 'FROM'"},
    {"SELECT extract(year d)", "1, column 21: expected FROM, found 'd'"},
    {"SELECT substring(s)", "1, column 19: expected FROM or ',', found ')'"},
    {"SELECT substring(s FROM)", "1, column 24: expected an expression, found ')'"},
    {"SELECT t.* + 1 FROM t", "1, column 12: expected end of statement, found '+'"},
    {"SELECT a.b.c FROM t", "1, column 11: column references with more than two name parts are not supported"},
    {"SELECT * FROM t WHERE EXISTS (1)", "1, column 31: expected SELECT, found '1'"},
    {"SELECT rank() OVER (ORDER BY a GROUPS 1 PRECEDING) FROM t",
     "1, column 32: GROUPS window frames are not supported"},
    {"SELECT rank() OVER (ORDER BY a ROWS BETWEEN 1 AND 2) FROM t",
     "1, column 47: expected PRECEDING or FOLLOWING, found 'AND'"},
    {"SELECT rank() OVER (PARTITION a) FROM t", "1, column 31: expected BY, found 'a'"},
    {"SELECT rank() OVER (ORDER BY a LIMIT 1) FROM t", "1, column 32: expected ROWS, RANGE or ')', found 'LIMIT'"},
    {"SELECT rank() OVER (ORDER BY a ROWS UNBOUNDED) FROM t",
     "1, column 46: expected PRECEDING or FOLLOWING, found ')'"},
    {"SELECT 1 FROM t WINDOW w AS (), w AS ()", "1, column 33: window \"w\" is already defined"},
    {"SELECT 1 UNION", "1, column 15: unexpected end of input, expected SELECT"},
    {"SELECT 1 UNION ALL FROM", "1, column 20: expected SELECT, found 'FROM'"},
    {"WITH AS (SELECT 1) SELECT 1", "1, column 6: expected a name for the WITH query, found 'AS'"},
    {"WITH x (SELECT 1) SELECT 1", "1, column 9: expected a column name, found 'SELECT'"},
    {"WITH x AS SELECT 1", "1, column 11: expected '(', found 'SELECT'"},
    {"WITH RECURSIVE x AS SELECT 1", "1, column 21: expected '(', found 'SELECT'"},
    {"CREATE TABLE t AS (1)", "1, column 19: expected SELECT, found '('"},
    {"SELECT DISTINCT ON (a) a FROM t", "1, column 17: DISTINCT ON is not supported"},
    {"SELECT a FROM t LIMIT 1 LIMIT 2", "1, column 25: multiple LIMIT or FETCH clauses are not allowed"},
    {"SELECT a FROM t OFFSET 1 OFFSET 2", "1, column 26: multiple OFFSET clauses are not allowed"},
    {"SELECT a FROM t FETCH FIRST 5 ONLY", "1, column 31: expected ROW or ROWS, found 'ONLY'"},
    {"SELECT a FROM t FETCH 5 ROWS ONLY", "1, column 23: expected FIRST or NEXT, found '5'"},
    {"SELECT a FROM t ORDER BY a NULLS", "1, column 33: unexpected end of input, expected FIRST or LAST"},
    {"SELECT * FROM generate_series(1 FROM t", "1, column 33: expected ')', found 'FROM'"},
    {"SELECT * FROM t, LATERAL (u JOIN v ON TRUE)",
     "1, column 26: LATERAL must be followed by a subquery or a table function"},
    {"CREATE t (a INT)", "1, column 8: expected TABLE or VIEW, found 't'"},
    {"CREATE TABLE (a INT)", "1, column 14: expected a table name, found '('"},
    {"CREATE TABLE t", "1, column 15: unexpected end of input, expected '('"},
    {"CREATE TABLE t ()", "1, column 17: expected a column name or PRIMARY KEY, found ')'"},
    {"CREATE TABLE t (a)", "1, column 18: expected a type name, found ')'"},
    {"CREATE TABLE t (a INT,)", "1, column 23: expected a column name or PRIMARY KEY, found ')'"},
    {"CREATE TABLE t (a INT NOT)", "1, column 26: expected NULL, found ')'"},
    {"CREATE TABLE t (a INT NULL NOT NULL)", "1, column 28: conflicting NULL/NOT NULL declarations for column a"},
    {"CREATE TABLE t (a INT PRIMARY KEY, b INT PRIMARY KEY)",
     "1, column 36: multiple primary keys for a table are not allowed"},
    {"CREATE TABLE t (a INT, PRIMARY KEY (a), PRIMARY KEY (a))",
     "1, column 41: multiple primary keys for a table are not allowed"},
    {"CREATE TABLE t (a DECIMAL(15, x))", "1, column 31: expected an integer type parameter, found 'x'"},
    {"CREATE TABLE t (a DECIMAL(99999999999999999999))", "1, column 27: type parameter out of range"},
    {"CREATE TABLE t (a INT UNIQUE)",
     "1, column 23: expected NOT NULL, NULL, DEFAULT, PRIMARY KEY, ',' or ')', found 'UNIQUE'"},
    {"CREATE TABLE t (a INT DEFAULT 1 DEFAULT 2)", "1, column 33: multiple default values specified for column a"},
    {"CREATE TABLE t (a INT) WITH (x)", "1, column 31: expected '=', found ')'"},
    {"CREATE TABLE t (a INT) WITH (x = a + 1)", "1, column 36: expected ')', found '+'"},
    {"CREATE TABLE IF EXISTS t (a INT)", "1, column 17: expected '(', found 'EXISTS'"},
    {"CREATE OR VIEW v AS SELECT 1", "1, column 11: expected REPLACE, found 'VIEW'"},
    {"CREATE OR REPLACE TABLE t (a INT)", "1, column 19: expected VIEW, found 'TABLE'"},
    {"CREATE VIEW v SELECT 1", "1, column 15: expected AS, found 'SELECT'"},
    {"CREATE VIEW v AS INSERT INTO t VALUES (1)", "1, column 18: expected SELECT, found 'INSERT'"},
    {"DROP t", "1, column 6: expected TABLE or VIEW, found 't'"},
    {"DROP TABLE", "1, column 11: unexpected end of input, expected a table name"},
    {"DROP TABLE a, b", "1, column 13: expected end of statement, found ','"},
    {"DROP VIEW IF EXISTS", "1, column 20: unexpected end of input, expected a view name"},
    {"COPY t 'x.csv'", "1, column 8: expected FROM or TO, found string literal 'x.csv'"},
    {"COPY t FROM x.csv", "1, column 13: expected a file path in single quotes or STDIN, found 'x'"},
    {"COPY t FROM", "1, column 12: unexpected end of input, expected a file path in single quotes or STDIN"},
    {"COPY t FROM 'x' WITH FORMAT csv", "1, column 22: expected '(', found 'FORMAT'"},
    {"COPY t FROM 'x' (FORMAT csv", "1, column 28: unexpected end of input, expected ')'"},
    {"COPY t FROM 'x' (, HEADER)", "1, column 18: expected a COPY option name, found ','"},
    {"COPY t FROM 'x' (DELIMITER a + b)", "1, column 30: expected ')', found '+'"},
    {"INSERT t VALUES (1)", "1, column 8: expected INTO, found 't'"},
    {"INSERT INTO t", "1, column 14: unexpected end of input, expected VALUES or SELECT"},
    {"INSERT INTO t VALUES", "1, column 21: unexpected end of input, expected '('"},
    {"INSERT INTO t VALUES (1", "1, column 24: unexpected end of input, expected ')'"},
    {"INSERT INTO t VALUES (1),", "1, column 26: unexpected end of input, expected '('"},
    {"INSERT INTO t (a, b", "1, column 20: unexpected end of input, expected ')'"},
    {"INSERT INTO t DEFAULT VALUES", "1, column 15: expected VALUES or SELECT, found 'DEFAULT'"},
    {"EXPLAIN", "1, column 8: unexpected end of input, expected a statement to explain"},
    {"EXPLAIN (FORMAT JSON) SELECT 1", "1, column 17: expected TEXT or DOT, found 'JSON'"},
    {"EXPLAIN (VERBOSE) SELECT 1", "1, column 10: expected an EXPLAIN option (FORMAT or ANALYZE), found 'VERBOSE'"},
    {"EXPLAIN (FORMAT DOT SELECT 1", "1, column 21: expected ')', found 'SELECT'"},
    {"SET", "1, column 4: unexpected end of input, expected a setting name"},
    {"SET x", "1, column 6: unexpected end of input, expected '=' or TO"},
    {"SET x =", "1, column 8: unexpected end of input, expected a value"},
    {"SET = 1", "1, column 5: expected a setting name, found '='"},
    {"SHOW", "1, column 5: unexpected end of input, expected a setting name"},
    {"DESCRIBE", "1, column 9: unexpected end of input, expected a table name"},
    {"DESC", "1, column 5: unexpected end of input, expected a table name"},
    {"ANALYZE a b", "1, column 11: expected end of statement, found 'b'"},
    {"TRUNCATE t", "1, column 1: expected a statement, found 'TRUNCATE'"},
    {"UPDATE t SET", "1, column 13: unexpected end of input, expected a column name"},
    {"UPDATE t SET a = 1, a", "1, column 22: unexpected end of input, expected '='"},
    {"UPDATE t SET u.a = 1", "1, column 14: SET may only name columns of the table being updated"},
    {"DELETE FROM t USING", "1, column 20: unexpected end of input, expected a table name"},
    {"DELETE FROM", "1, column 12: unexpected end of input, expected a table name"},
    {"VACUUM a b", "1, column 10: expected end of statement, found 'b'"},
    {"SELECT 'abc", "1, column 8: unterminated string literal"},
    {"SELECT \"abc", "1, column 8: unterminated quoted identifier"},
    {"SELECT 1 /* unterminated", "1, column 10: unterminated block comment"},
    {"SELECT 1abc", "1, column 8: trailing junk after numeric literal"},
    {"SELECT a ? b", "1, column 10: unexpected character '?'"},
    {"SELECT \"\" FROM t", "1, column 8: zero-length quoted identifier"},
    {"SELECT a FROM t; garbage", "1, column 18: expected a statement, found 'garbage'"}};

TEST(ErrorTest, MalformedStatementsHaveExpectedMessages) {
  EXPECT_GE(std::size(kMalformed), 40u);
  for (const MalformedCase& c : kMalformed) {
    EXPECT_EQ(Headline(c.sql), c.headline) << c.sql;
  }
}

TEST(ErrorTest, MessageShowsTheLineAndACaretUnderTheToken) {
  EXPECT_EQ(ParseError("SELECT a\nFROM t\nWHERE a = = 1"),
            "syntax error at line 3, column 11: expected an expression, found '='\n"
            "  WHERE a = = 1\n"
            "            ^");
  // The example of parser/parser.h.
  EXPECT_EQ(ParseError("-- first line\nSELECT FROM t"),
            "syntax error at line 2, column 8: expected an expression, found 'FROM'\n"
            "  SELECT FROM t\n"
            "         ^");
}

TEST(ErrorTest, EndOfInputPointsJustAfterTheLastToken) {
  EXPECT_EQ(ParseError("SELECT (a\n  + b   \n\n"),
            "syntax error at line 2, column 6: unexpected end of input, expected ')'\n"
            "    + b   \n"
            "       ^");
}

TEST(ErrorTest, CaretKeepsTabsAndCountsCodePoints) {
  EXPECT_EQ(ParseError("SELECT\t'é',\tFROM"),
            "syntax error at line 1, column 13: expected an expression, found 'FROM'\n"
            "  SELECT\t'é',\tFROM\n"
            "        \t    \t^");
}

TEST(ErrorTest, CarriageReturnsAreNotShown) {
  EXPECT_EQ(ParseError("SELECT a,\r\nFROM t\r\n"),
            "syntax error at line 2, column 1: expected an expression, found 'FROM'\n"
            "  FROM t\n"
            "  ^");
}

TEST(ErrorTest, LongLinesAreShownAsAWindowAroundTheColumn) {
  std::string sql = "SELECT ";
  for (int i = 0; i < 100; ++i) absl::StrAppend(&sql, "column_", i, " + ");
  sql += "FROM t";
  const std::string message = ParseError(sql);
  EXPECT_THAT(message, StartsWith(absl::StrCat("syntax error at line 1, column ", sql.size() - 5,
                                               ": expected an expression, found 'FROM'\n  ...")));
  const std::vector<std::string> lines = absl::StrSplit(message, '\n');
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_LE(lines[1].size(), 2u + 3u + 100u + 3u);
  // The caret sits under the 'F' of FROM.
  const size_t caret = lines[2].find('^');
  ASSERT_NE(caret, std::string::npos);
  EXPECT_EQ(lines[1].substr(caret, 4), "FROM");
}

TEST(ErrorTest, LongTokensAreShortenedInMessages) {
  const std::string name(100, 'x');
  EXPECT_THAT(ParseError("SELECT (1 " + name),
              HasSubstr(absl::StrCat("expected ')', found '", std::string(40, 'x'), "...'")));
  EXPECT_THAT(ParseError("COPY t '" + name + "'"),
              HasSubstr(absl::StrCat("found string literal '", std::string(40, 'x'), "...'")));
}

TEST(ErrorTest, FormatErrorWithCaretForLaterStages) {
  SourcePosition position;
  position.line = 2;
  position.column = 8;
  position.offset = 16;
  EXPECT_EQ(FormatErrorWithCaret("SELECT 1\nSELECT missing FROM t", position, "column \"missing\" does not exist"),
            "column \"missing\" does not exist at line 2, column 8\n"
            "  SELECT missing FROM t\n"
            "         ^");
  // Positions past the end are clamped rather than trusted.
  position.offset = 1000;
  EXPECT_THAT(FormatErrorWithCaret("SELECT 1", position, "oops"), StartsWith("oops at line 2, column 8\n"));
}

TEST(ErrorTest, DeepNestingIsAnErrorNotACrash) {
  const std::string deep_parentheses = "SELECT " + std::string(20000, '(') + "1" + std::string(20000, ')');
  EXPECT_THAT(ParseError(deep_parentheses), HasSubstr("expression or query nested too deeply"));

  std::string deep_subqueries = "SELECT 1";
  for (int i = 0; i < 1000; ++i) deep_subqueries = "SELECT (" + deep_subqueries + ")";
  EXPECT_THAT(ParseError(deep_subqueries), HasSubstr("nested too deeply"));

  std::string signs;
  for (int i = 0; i < 20000; ++i) signs += "- + ";
  EXPECT_THAT(ParseError("SELECT " + signs + "1"), HasSubstr("nested too deeply"));
  std::string negations;
  for (int i = 0; i < 20000; ++i) negations += "NOT ";
  EXPECT_THAT(ParseError("SELECT " + negations + "TRUE"), HasSubstr("nested too deeply"));

  std::string explains;
  for (int i = 0; i < 10000; ++i) explains += "EXPLAIN ";
  EXPECT_THAT(ParseError(explains + "SELECT 1"), HasSubstr("nested too deeply"));

  EXPECT_THAT(ParseError("SELECT * FROM " + std::string(20000, '(') + "t"), HasSubstr("nested too deeply"));
  EXPECT_THAT(ParseError(std::string(20000, '(') + "SELECT 1"), HasSubstr("nested too deeply"));
}

TEST(ErrorTest, LongLeftDeepChainsAreBoundedToo) {
  // Chains are built by loops, not recursion; they are bounded so that later recursive walks stay safe.
  std::string sum = "SELECT 1";
  for (int i = 0; i < 20000; ++i) sum += " + 1";
  EXPECT_THAT(ParseError(sum), HasSubstr("nested too deeply"));
  std::string unions = "SELECT 1";
  for (int i = 0; i < 20000; ++i) unions += " UNION SELECT 1";
  EXPECT_THAT(ParseError(unions), HasSubstr("nested too deeply"));
  std::string joins = "SELECT * FROM t";
  for (int i = 0; i < 20000; ++i) joins += " JOIN t ON TRUE";
  EXPECT_THAT(ParseError(joins), HasSubstr("nested too deeply"));
  std::string casts = "SELECT 1";
  for (int i = 0; i < 20000; ++i) casts += "::int";
  EXPECT_THAT(ParseError(casts), HasSubstr("nested too deeply"));
  // Nested parentheses, each holding a chain, add up.
  std::string nested = "a";
  for (int level = 0; level < 100; ++level) {
    nested = "(" + nested;
    for (int i = 0; i < 100; ++i) nested += " + a";
    nested += ")";
  }
  EXPECT_THAT(ParseError("SELECT " + nested), HasSubstr("nested too deeply"));
}

TEST(ErrorTest, ReasonableNestingAndLongFlatListsAreFine) {
  const std::string parentheses = "SELECT " + std::string(150, '(') + "1" + std::string(150, ')');
  EXPECT_TRUE(ParseStatement(parentheses).ok());
  std::string disjunction = "SELECT * FROM t WHERE a = 0";
  for (int i = 1; i < 500; ++i) absl::StrAppend(&disjunction, " OR a = ", i);
  EXPECT_TRUE(ParseStatement(disjunction).ok());
  std::string in_list = "SELECT * FROM t WHERE a IN (0";
  for (int i = 1; i < 20000; ++i) absl::StrAppend(&in_list, ", ", i);
  EXPECT_TRUE(ParseStatement(in_list + ")").ok());
  std::string subqueries = "SELECT 1";
  for (int i = 0; i < 30; ++i) subqueries = "SELECT * FROM (" + subqueries + ") AS t" + std::to_string(i);
  EXPECT_TRUE(ParseStatement(subqueries).ok());
}

}  // namespace
}  // namespace tessera::parser
