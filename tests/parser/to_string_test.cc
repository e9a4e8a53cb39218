// ToString renders expressions for column headers and queries for EXPLAIN; re-parsing the text gives the same
// tree (checked through the rendering, which shows every node).

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "parser/ast.h"
#include "tests/parser/parse_for_test.h"

namespace tessera::parser {
namespace {

std::string Rendered(std::string_view expression) {
  std::unique_ptr<ParsedExpr> expr = testing::ParseExpr(expression);
  return expr ? ToString(*expr) : "<error>";
}

// Renders `expression`, re-parses the rendering, and checks that the trees agree.
void ExpectRoundTrip(std::string_view expression) {
  std::unique_ptr<ParsedExpr> expr = testing::ParseExpr(expression);
  ASSERT_NE(expr, nullptr) << std::string(expression);
  const std::string rendered = ToString(*expr);
  std::unique_ptr<ParsedExpr> reparsed = testing::ParseExpr(rendered);
  ASSERT_NE(reparsed, nullptr) << rendered;
  EXPECT_EQ(testing::Dump(*reparsed), testing::Dump(*expr)) << std::string(expression) << " -> " << rendered;
}

TEST(ToStringTest, ColumnHeaderStyle) {
  EXPECT_EQ(Rendered("sum(l_extendedprice * (1 - l_discount))"), "sum(l_extendedprice * (1 - l_discount))");
  EXPECT_EQ(Rendered("SUM(L_EXTENDEDPRICE*(1-L_DISCOUNT)*(1+L_TAX))"),
            "sum(l_extendedprice * (1 - l_discount) * (1 + l_tax))");
  EXPECT_EQ(Rendered("count(*)"), "count(*)");
  EXPECT_EQ(Rendered("COUNT(DISTINCT ps_suppkey)"), "count(DISTINCT ps_suppkey)");
  EXPECT_EQ(Rendered("n1.n_name"), "n1.n_name");
  EXPECT_EQ(Rendered("extract(YEAR from l_shipdate)"), "extract(year FROM l_shipdate)");
  EXPECT_EQ(Rendered("substring(c_phone from 1 for 2)"), "substring(c_phone FROM 1 FOR 2)");
  EXPECT_EQ(Rendered("substring(c_phone, 1)"), "substring(c_phone FROM 1)");
  EXPECT_EQ(Rendered("100.00 * sum(x) / sum(y)"), "100.00 * sum(x) / sum(y)");
}

TEST(ToStringTest, OrderedAggregateCalls) {
  EXPECT_EQ(Rendered("STRING_AGG(s, ',' ORDER BY s DESC)"), "string_agg(s, ',' ORDER BY s DESC)");
  EXPECT_EQ(Rendered("percentile_cont(0.25) within group (order by x)"),
            "percentile_cont(0.25) WITHIN GROUP (ORDER BY x)");
  ExpectRoundTrip("string_agg(s ORDER BY s)");
  ExpectRoundTrip("percentile_disc(0.5) WITHIN GROUP (ORDER BY a + b DESC) FILTER (WHERE c > 1)");
  ExpectRoundTrip("median(x) + quantile_cont(x, 0.9)");
}

TEST(ToStringTest, ParenthesesOnlyWherePrecedenceNeedsThem) {
  EXPECT_EQ(Rendered("(a + b) + c"), "a + b + c");
  EXPECT_EQ(Rendered("a + (b + c)"), "a + (b + c)");
  EXPECT_EQ(Rendered("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(Rendered("(a * b) + c"), "a * b + c");
  EXPECT_EQ(Rendered("a * (b + c)"), "a * (b + c)");
  EXPECT_EQ(Rendered("(a OR b) AND c"), "(a OR b) AND c");
  EXPECT_EQ(Rendered("a OR (b AND c)"), "a OR b AND c");
  EXPECT_EQ(Rendered("NOT (a AND b)"), "NOT (a AND b)");
  EXPECT_EQ(Rendered("(NOT a) AND b"), "NOT a AND b");
  EXPECT_EQ(Rendered("-(a + b)"), "-(a + b)");
  EXPECT_EQ(Rendered("(a = b) = c"), "a = b = c");
  EXPECT_EQ(Rendered("a = (b = c)"), "a = (b = c)");
  EXPECT_EQ(Rendered("(a || b) || c"), "a || b || c");
}

TEST(ToStringTest, NegativeNumbersAndSignsNeverTurnIntoComments) {
  EXPECT_EQ(Rendered("-5"), "-5");
  EXPECT_EQ(Rendered("- -5"), "-(-5)");
  EXPECT_EQ(Rendered("- - x"), "-(-x)");
  EXPECT_EQ(Rendered("1 - -2"), "1 - -2");
  EXPECT_EQ(Rendered("-x"), "-x");
}

TEST(ToStringTest, KeywordsLiteralsAndTypes) {
  EXPECT_EQ(Rendered("case when a then 'x' else null end"), "CASE WHEN a THEN 'x' ELSE NULL END");
  EXPECT_EQ(Rendered("case a when 1 then true end"), "CASE a WHEN 1 THEN TRUE END");
  EXPECT_EQ(Rendered("cast(a as decimal(15,2))"), "CAST(a AS DECIMAL(15, 2))");
  EXPECT_EQ(Rendered("a::int"), "CAST(a AS INT)");
  EXPECT_EQ(Rendered("date '1998-12-01' - interval '90' days"), "DATE '1998-12-01' - INTERVAL '90' DAY");
  EXPECT_EQ(Rendered("timestamp '2020-01-01 00:00:00'"), "TIMESTAMP '2020-01-01 00:00:00'");
  EXPECT_EQ(Rendered("interval '1 day'"), "INTERVAL '1 day'");
  EXPECT_EQ(Rendered("'it''s'"), "'it''s'");
  EXPECT_EQ(Rendered("x not between 1 and 2"), "x NOT BETWEEN 1 AND 2");
  EXPECT_EQ(Rendered("x not in (1, 2)"), "x NOT IN (1, 2)");
  EXPECT_EQ(Rendered("x not like 'a%'"), "x NOT LIKE 'a%'");
  EXPECT_EQ(Rendered("x is not null"), "x IS NOT NULL");
  EXPECT_EQ(Rendered("x in (select a from t)"), "x IN (SELECT a FROM t)");
  EXPECT_EQ(Rendered("not exists (select * from t where a = b)"), "NOT EXISTS (SELECT * FROM t WHERE a = b)");
  EXPECT_EQ(Rendered("(select max(a) from t)"), "(SELECT max(a) FROM t)");
}

TEST(ToStringTest, IdentifiersAreQuotedOnlyWhenNeeded) {
  EXPECT_EQ(Rendered("date"), "date");
  EXPECT_EQ(Rendered("\"Mixed\""), "\"Mixed\"");
  EXPECT_EQ(Rendered("\"select\""), "\"select\"");
  EXPECT_EQ(Rendered("\"a b\".\"c\"\"d\""), "\"a b\".\"c\"\"d\"");
  EXPECT_EQ(Rendered("\"lower_ok\""), "lower_ok");
  EXPECT_EQ(Rendered("\"1abc\""), "\"1abc\"");
}

TEST(ToStringTest, ExpressionsRoundTrip) {
  const char* const kExpressions[] = {
      "a + b * c - d / e % f",
      "-a * -(b + c)",
      "- -a",
      "NOT NOT a",
      "NOT (NOT EXISTS (SELECT 1))",
      "a = b = c",
      "a <> b AND c <= d OR e >= f AND NOT g < h",
      "(a OR b) AND (c OR d)",
      "a || 'x' || b::text",
      "x BETWEEN a + 1 AND b * 2 AND y",
      "(x BETWEEN 1 AND 2) = TRUE",
      "x NOT IN (1, 2 + 3, (SELECT 4))",
      "(a IS NULL) IS NOT NULL",
      "a LIKE b || '%'",
      "(a LIKE b) = (c NOT LIKE d)",
      "CASE WHEN a > 0 THEN -1 WHEN a < 0 THEN 1 END + 1",
      "CAST(CAST(x AS INT) AS VARCHAR(10))",
      "-x::int",
      "(-x)::int",
      "-5::int",
      "extract(month FROM d + INTERVAL '1' MONTH)",
      "substring(s, 1, 2) || substring(s FROM 3)",
      "left(s, 2) || right(s, 1)",
      "\"extract\"(x) + \"substring\"(y)",
      "\"select\"(x)",
      "count(*) + count(DISTINCT a) + sum(ALL b)",
      "coalesce(nullif(a, 0), -1.5e3)",
      "t.\"Order\" + \"T\".x",
      "DATE '2020-01-01' + INTERVAL 3 DAY",
      "(SELECT a FROM t ORDER BY a DESC NULLS LAST LIMIT 1 OFFSET 2) + 1",
      "x IN (SELECT a FROM t UNION SELECT b FROM u INTERSECT SELECT c FROM v)",
      "EXISTS (WITH c (x) AS (SELECT 1) SELECT x FROM c)",
      "rank() OVER (PARTITION BY a, b + 1 ORDER BY c DESC NULLS LAST, d) + 1",
      "sum(x) OVER (ORDER BY y ROWS BETWEEN 2 PRECEDING AND UNBOUNDED FOLLOWING) / sum(sum(x)) OVER ()",
      "lag(x, 1, 0) OVER w + count(*) OVER (w ORDER BY z RANGE BETWEEN CURRENT ROW AND CURRENT ROW)",
  };
  for (const char* expression : kExpressions) ExpectRoundTrip(expression);
}

TEST(ToStringTest, QueriesRoundTrip) {
  const char* const kQueries[] = {
      "SELECT DISTINCT a AS x, t.*, * FROM t AS u(a, b), v WHERE a > 1 GROUP BY 1, b HAVING count(*) > 2 "
      "ORDER BY x DESC NULLS FIRST, 2 LIMIT 10 OFFSET 3",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x RIGHT JOIN c USING (y) FULL JOIN d ON TRUE CROSS JOIN e",
      "SELECT * FROM a NATURAL JOIN b NATURAL FULL JOIN c",
      "SELECT * FROM a JOIN (b JOIN c ON p) ON q",
      "SELECT * FROM (a JOIN b ON p) AS j, (SELECT 1) AS s",
      "SELECT 1 UNION SELECT 2 INTERSECT SELECT 3 EXCEPT ALL SELECT 4",
      "SELECT 1 UNION (SELECT 2 UNION ALL SELECT 3)",
      "(SELECT 1 UNION SELECT 2) INTERSECT SELECT 3",
      "(SELECT a FROM t ORDER BY a LIMIT 1) UNION ALL (SELECT b FROM u LIMIT 2) ORDER BY 1",
      "WITH x AS (SELECT 1), \"Y\" (a) AS (SELECT 2) SELECT * FROM x, \"Y\"",
      "WITH RECURSIVE t (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT * FROM t",
      "SELECT * FROM generate_series(1, 10, 2) AS g(n), range(5), t",
      "SELECT * FROM t, LATERAL (SELECT a) AS s JOIN LATERAL (SELECT 1) AS v ON TRUE LEFT JOIN LATERAL f(t.a) ON TRUE",
      "SELECT * FROM lateral, lateral AS l",
      "SELECT a AS \"select\", b AS date FROM \"from\" AS \"where\"",
      "SELECT rank() OVER w, sum(x) OVER (v ORDER BY y ROWS 3 PRECEDING) FROM t GROUP BY a HAVING TRUE "
      "WINDOW w AS (ORDER BY a), v AS (PARTITION BY b)",
  };
  for (const char* sql : kQueries) {
    std::unique_ptr<SelectStatement> query = testing::ParseQuery(sql);
    ASSERT_NE(query, nullptr) << sql;
    const std::string rendered = ToString(*query);
    std::unique_ptr<SelectStatement> reparsed = testing::ParseQuery(rendered);
    ASSERT_NE(reparsed, nullptr) << rendered;
    EXPECT_EQ(ToString(*reparsed), rendered) << sql;
  }
}

TEST(ToStringTest, WindowShortFrameRendersAsBetween) {
  EXPECT_EQ(ToString(*testing::ParseQuery("select sum(x) over (order by y rows 2 preceding) from t")),
            "SELECT sum(x) OVER (ORDER BY y ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t");
  EXPECT_EQ(ToString(*testing::ParseQuery("select count(*) over from t")), "SELECT count(*) AS over FROM t");
}

TEST(ToStringTest, QueryRenderingExamples) {
  EXPECT_EQ(ToString(*testing::ParseQuery("select a from t where b = 1 order by a desc limit 5")),
            "SELECT a FROM t WHERE b = 1 ORDER BY a DESC LIMIT 5");
  EXPECT_EQ(ToString(*testing::ParseQuery("select * from a join b on a.x = b.y")),
            "SELECT * FROM a JOIN b ON a.x = b.y");
  EXPECT_EQ(ToString(*testing::ParseQuery("select 1 union all (select 2 union select 3)")),
            "SELECT 1 UNION ALL (SELECT 2 UNION SELECT 3)");
  EXPECT_EQ(ToString(*testing::ParseQuery("with recursive t as (select 1) select * from t")),
            "WITH RECURSIVE t AS (SELECT 1) SELECT * FROM t");
}

}  // namespace
}  // namespace tessera::parser
