// Binder errors: every user mistake gets a clear message with the line, column and a caret under the
// offending text; unknown names suggest the closest known one; type errors name both types.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/optimizer/optimizer_catalog_for_test.h"

namespace tessera::optimizer {
namespace {

using ::testing::HasSubstr;

struct ErrorCase {
  std::string sql;
  std::string message;  // expected substring of the error message
};

class BinderErrorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    catalog_ = new testing::TestCatalog("tpch");
    catalog_->CreateView("broken_view", "SELECT zzz FROM nation");
    catalog_->CreateView("loop_a", "SELECT * FROM loop_b");
    catalog_->CreateView("loop_b", "SELECT * FROM loop_a");
  }
  static void TearDownTestSuite() {
    delete catalog_;
    catalog_ = nullptr;
  }
  static const Catalog& catalog() { return catalog_->catalog(); }
  static testing::TestCatalog* catalog_;
};

testing::TestCatalog* BinderErrorTest::catalog_ = nullptr;

TEST_F(BinderErrorTest, MessagesNameTheProblem) {
  const std::vector<ErrorCase> cases = {
      // Unknown names, with suggestions.
      {"SELECT * FROM nosuch", "table 'nosuch' does not exist at line 1, column 15"},
      {"SELECT * FROM lineitems", "table 'lineitems' does not exist; did you mean 'lineitem'?"},
      {"WITH totals AS (SELECT 1 AS x) SELECT * FROM total", "table 'total' does not exist; did you mean 'totals'?"},
      {"SELECT n_nme FROM nation", "column 'n_nme' does not exist; did you mean 'n_name'?"},
      {"SELECT nation.n_nme FROM nation", "column 'nation.n_nme' does not exist; did you mean 'nation.n_name'?"},
      {"SELECT x.n_name FROM nation", "missing FROM-clause entry for table 'x'"},
      {"SELECT nation.n_name FROM nation n", "missing FROM-clause entry for table 'nation'"},
      {"SELECT natoin.n_name FROM nation", "missing FROM-clause entry for table 'natoin'; did you mean 'nation'?"},
      {"SELECT foo(1)", "function foo does not exist"},
      {"SELECT uper(n_name) FROM nation", "function uper does not exist; did you mean 'upper'?"},
      // Scoping.
      {"SELECT n_name FROM nation n1, nation n2",
       "column reference 'n_name' is ambiguous (it could be n1.n_name or n2.n_name)"},
      {"SELECT * FROM nation, nation", "table name 'nation' specified more than once"},
      {"SELECT * FROM nation n JOIN (SELECT * FROM region WHERE r_regionkey = n.n_regionkey) r ON TRUE",
       "missing FROM-clause entry for table 'n'"},
      {"SELECT * FROM nation JOIN region USING (x)",
       "column 'x' specified in USING clause does not exist in left table"},
      {"SELECT * FROM nation JOIN region USING (n_name)",
       "column 'n_name' specified in USING clause does not exist in right table"},
      {"WITH a AS (SELECT 1), a AS (SELECT 2) SELECT * FROM a", "WITH query name 'a' specified more than once"},
      {"WITH a(x, y) AS (SELECT 1) SELECT * FROM a", "WITH query 'a' has 1 columns available but 2 columns specified"},
      {"SELECT * FROM (SELECT 1) AS t(a, b)", "table 't' has 1 columns available but 2 columns specified"},
      {"SELECT *", "SELECT * with no tables specified is not valid"},
      // Types.
      {"SELECT * FROM nation WHERE n_name = 5", "cannot compare CHAR(25) with INTEGER"},
      {"SELECT * FROM nation WHERE n_nationkey", "argument of WHERE must be type BOOLEAN, not type INTEGER"},
      {"SELECT * FROM nation WHERE NOT n_nationkey", "argument of NOT must be type BOOLEAN, not type INTEGER"},
      {"SELECT count(*) FROM nation HAVING count(*)", "argument of HAVING must be type BOOLEAN, not type BIGINT"},
      {"SELECT * FROM nation JOIN region ON n_name", "argument of JOIN condition must be type BOOLEAN"},
      {"SELECT o_orderdate * 2 FROM orders", "operator * cannot be applied to DATE and INTEGER"},
      {"SELECT n_name + 1 FROM nation", "operator + cannot be applied to CHAR(25) and INTEGER"},
      {"SELECT CAST(o_orderdate AS BOOLEAN) FROM orders", "cannot cast DATE to BOOLEAN"},
      {"SELECT CAST(n_name AS BLOB) FROM nation", "unknown type 'BLOB'"},
      {"SELECT abs(n_name) FROM nation", "function abs(CHAR(25)) does not exist"},
      {"SELECT sum(n_name) FROM nation", "function sum(CHAR(25)) does not exist"},
      {"SELECT avg(o_orderdate) FROM orders", "function avg(DATE) does not exist"},
      {"SELECT * FROM nation WHERE n_nationkey LIKE '1%'", "LIKE requires a string operand, not INTEGER"},
      {"SELECT * FROM nation WHERE n_name LIKE n_comment", "the pattern of LIKE must be a constant string"},
      {"SELECT EXTRACT(YEAR FROM n_name) FROM nation",
       "EXTRACT(YEAR FROM ...) requires a DATE or TIMESTAMP, not CHAR(25)"},
      {"SELECT CASE WHEN TRUE THEN 1 ELSE DATE '2020-01-01' END", "CASE types INTEGER and DATE cannot be matched"},
      {"SELECT CASE WHEN n_name THEN 1 END FROM nation", "argument of CASE/WHEN must be type BOOLEAN"},
      {"SELECT * FROM nation WHERE n_nationkey IN (1, DATE '2020-01-01')",
       "IN types INTEGER and DATE cannot be matched"},
      {"SELECT coalesce(n_nationkey, n_name) FROM nation", "COALESCE types INTEGER and CHAR(25) cannot be matched"},
      {"SELECT substring(n_name, 'a') FROM nation", "substring positions must be integers, not VARCHAR"},
      {"SELECT n_name FROM nation UNION SELECT n_nationkey FROM nation",
       "UNION types CHAR(25) and INTEGER cannot be matched (column 1)"},
      // Literals.
      {"SELECT * FROM orders WHERE o_orderdate < '1995-13-45'", "invalid input for DATE: '1995-13-45'"},
      {"SELECT DATE '2020-02-30'", "invalid DATE literal '2020-02-30'"},
      {"SELECT DATE '2020-01-01' + INTERVAL 'abc'", "invalid INTERVAL literal 'abc'"},
      {"SELECT 123456789012345678901234567890123456789012", "numeric literal 1234567890123456789012345678901234567"},
      // Aggregates and grouping.
      {"SELECT * FROM nation WHERE sum(n_nationkey) > 1", "aggregate functions are not allowed in WHERE"},
      {"SELECT * FROM nation JOIN region ON count(*) > 1", "aggregate functions are not allowed in JOIN condition"},
      {"SELECT sum(count(*)) FROM nation", "aggregate function calls cannot be nested"},
      {"SELECT n_name, count(*) FROM nation",
       "column 'n_name' must appear in the GROUP BY clause or be used in an aggregate function"},
      {"SELECT n_name FROM nation GROUP BY n_regionkey",
       "column 'n_name' must appear in the GROUP BY clause or be used in an aggregate function"},
      {"SELECT n_regionkey FROM nation GROUP BY n_regionkey HAVING n_name = 'x'",
       "column 'n_name' must appear in the GROUP BY clause"},
      {"SELECT * FROM nation GROUP BY n_regionkey", "column 'nation.n_nationkey' must appear in the GROUP BY clause"},
      {"SELECT count(*) FROM nation GROUP BY count(*)", "aggregate functions are not allowed in GROUP BY"},
      {"SELECT n_name FROM nation GROUP BY 3", "GROUP BY position 3 is not in select list"},
      {"SELECT sum(1, 2)", "function sum takes exactly one argument"},
      {"SELECT nullif(1)", "function nullif expects 2 arguments, got 1"},
      {"SELECT upper(DISTINCT n_name) FROM nation", "DISTINCT specified, but upper is not an aggregate function"},
      // ORDER BY, LIMIT, set operations.
      {"SELECT n_name FROM nation ORDER BY 5", "ORDER BY position 5 is not in select list"},
      {"SELECT n_name AS a, n_comment AS a FROM nation ORDER BY a", "ORDER BY 'a' is ambiguous"},
      {"SELECT DISTINCT n_name FROM nation ORDER BY n_regionkey",
       "for SELECT DISTINCT, ORDER BY expressions must appear in select list"},
      {"SELECT * FROM nation LIMIT -1", "LIMIT must be a non-negative integer constant"},
      {"SELECT * FROM nation LIMIT 'x'", "LIMIT must be a non-negative integer constant"},
      {"SELECT * FROM nation OFFSET 1.5", "OFFSET must be a non-negative integer constant"},
      {"SELECT n_name, n_nationkey FROM nation UNION SELECT r_name FROM region",
       "each UNION query must have the same number of columns (2 vs 1)"},
      {"SELECT n_name FROM nation UNION SELECT r_name FROM region ORDER BY upper(n_name)",
       "ORDER BY on a UNION/INTERSECT/EXCEPT result must name an output column or its position"},
      {"SELECT n_name FROM nation UNION SELECT r_name FROM region ORDER BY x",
       "column 'x' does not exist in the result of the set operation"},
      // Subqueries.
      {"SELECT (SELECT n_name, n_nationkey FROM nation)", "subquery must return only one column"},
      {"SELECT * FROM nation WHERE n_nationkey IN (SELECT r_regionkey, r_name FROM region)",
       "subquery has too many columns"},
      {"SELECT count(*) FROM nation GROUP BY (SELECT 1)", "subqueries are not allowed in GROUP BY"},
      {"SELECT * FROM nation JOIN region ON n_regionkey = (SELECT 1)", "subqueries are not allowed in JOIN condition"},
      {"SELECT (SELECT n_name FROM nation WHERE n_nationkey = r_regionkey) FROM region",
       "correlated reference to 'r_regionkey' is not supported here"},
      {"SELECT * FROM nation WHERE n_nationkey IN (SELECT count(*) FROM region WHERE r_regionkey = "
       "n_regionkey)",
       "correlated reference to 'n_regionkey' is not supported here"},
      {"SELECT r_name FROM region WHERE r_regionkey IN (SELECT n_regionkey FROM nation WHERE n_name = "
       "r_name) "
       "OR r_regionkey = 0",
       "a correlated IN (subquery) is only supported as a condition ANDed at the top of WHERE"},
      // Views.
      {"SELECT * FROM broken_view", "in view 'broken_view': column 'zzz' does not exist"},
      {"SELECT * FROM loop_a", "view 'loop_a' references itself"},
      // Not supported yet.
      {"SELECT round(n_name) FROM nation", "function round(CHAR(25)) does not exist"},
      {"SELECT EXTRACT(HOUR FROM o_orderdate) FROM orders", "EXTRACT(HOUR FROM ...) is not supported"},
  };
  EXPECT_GE(cases.size(), 40u);
  for (const ErrorCase& error : cases) {
    EXPECT_THAT(testing::BindError(catalog(), error.sql), HasSubstr(error.message)) << error.sql;
  }
}

TEST_F(BinderErrorTest, MessageShowsLineColumnAndCaret) {
  EXPECT_EQ(testing::BindError(catalog(), "SELECT n_name\nFROM nation\nWHERE n_nationkey = 'x'"),
            "invalid input for INTEGER: 'x' at line 3, column 7\n"
            "  WHERE n_nationkey = 'x'\n"
            "        ^");
  EXPECT_EQ(testing::BindError(catalog(), "SELECT r_name, qqqq FROM region"),
            "column 'qqqq' does not exist at line 1, column 16\n"
            "  SELECT r_name, qqqq FROM region\n"
            "                 ^");
}

TEST_F(BinderErrorTest, ViewErrorsPointIntoTheViewText) {
  EXPECT_EQ(testing::BindError(catalog(), "SELECT * FROM broken_view"),
            "in view 'broken_view': column 'zzz' does not exist at line 1, column 8\n"
            "  SELECT zzz FROM nation\n"
            "         ^");
}

TEST_F(BinderErrorTest, StatusCodesTellUserMistakesFromUnsupportedSql) {
  auto code = [&](const std::string& sql) { return testing::Plan(catalog(), sql).status().code(); };
  EXPECT_EQ(code("SELECT * FROM nosuch"), absl::StatusCode::kNotFound);
  EXPECT_EQ(code("SELECT nosuch FROM nation"), absl::StatusCode::kNotFound);
  EXPECT_EQ(code("SELECT n_name = 1 FROM nation"), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(code("SELECT EXTRACT(HOUR FROM o_orderdate) FROM orders"), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tessera::optimizer
