// Scalar expressions: precedence and associativity, literals, predicates, functions and special forms.

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "parser/ast.h"
#include "tests/parser/parse_for_test.h"

namespace tessera::parser {
namespace {

std::string DumpOf(std::string_view expression) {
  std::unique_ptr<ParsedExpr> expr = testing::ParseExpr(expression);
  return expr ? testing::Dump(*expr) : "<error>";
}

TEST(ExpressionTest, ArithmeticPrecedenceAndLeftAssociativity) {
  EXPECT_EQ(DumpOf("1 + 2 * 3"), "(+ 1 (* 2 3))");
  EXPECT_EQ(DumpOf("1 * 2 + 3"), "(+ (* 1 2) 3)");
  EXPECT_EQ(DumpOf("1 - 2 - 3"), "(- (- 1 2) 3)");
  EXPECT_EQ(DumpOf("1 - (2 - 3)"), "(- 1 (- 2 3))");
  EXPECT_EQ(DumpOf("8 / 4 / 2"), "(/ (/ 8 4) 2)");
  EXPECT_EQ(DumpOf("a % b * c"), "(* (% a b) c)");
  EXPECT_EQ(DumpOf("l_extendedprice * (1 - l_discount) * (1 + l_tax)"),
            "(* (* l_extendedprice (- 1 l_discount)) (+ 1 l_tax))");
}

TEST(ExpressionTest, UnaryOperatorsBindTighterThanBinary) {
  EXPECT_EQ(DumpOf("-a * b"), "(* (- a) b)");
  EXPECT_EQ(DumpOf("a - -b"), "(- a (- b))");
  EXPECT_EQ(DumpOf("+a"), "(+ a)");
  EXPECT_EQ(DumpOf("- - a"), "(- (- a))");
}

TEST(ExpressionTest, SignsFoldIntoNumericLiterals) {
  EXPECT_EQ(DumpOf("-5"), "-5");
  EXPECT_EQ(DumpOf("-2.5"), "dec:-2.5");
  EXPECT_EQ(DumpOf("+7"), "7");
  EXPECT_EQ(DumpOf("-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(DumpOf("- -5"), "(- -5)");
  EXPECT_EQ(DumpOf("3 - 5"), "(- 3 5)");
  EXPECT_EQ(DumpOf("3 * -5"), "(* 3 -5)");
  // The cast binds tighter than the sign, so the sign stays an operator.
  EXPECT_EQ(DumpOf("-5::int"), "(- (cast 5 INT))");
}

TEST(ExpressionTest, CastOperatorBindsTighterThanUnaryMinus) {
  EXPECT_EQ(DumpOf("-x::bigint"), "(- (cast x BIGINT))");
  EXPECT_EQ(DumpOf("x::int::text"), "(cast (cast x INT) TEXT)");
  EXPECT_EQ(DumpOf("a + b::double"), "(+ a (cast b DOUBLE))");
  EXPECT_EQ(DumpOf("(a + b)::decimal(15, 2)"), "(cast (+ a b) DECIMAL(15,2))");
}

TEST(ExpressionTest, ConcatSitsBetweenComparisonAndAddition) {
  EXPECT_EQ(DumpOf("a || b + c"), "(|| a (+ b c))");
  EXPECT_EQ(DumpOf("a || b = c || d"), "(= (|| a b) (|| c d))");
  EXPECT_EQ(DumpOf("a || b || c"), "(|| (|| a b) c)");
}

TEST(ExpressionTest, BooleanPrecedence) {
  EXPECT_EQ(DumpOf("a OR b AND c"), "(OR a (AND b c))");
  EXPECT_EQ(DumpOf("a AND b OR c"), "(OR (AND a b) c)");
  EXPECT_EQ(DumpOf("NOT a AND b"), "(AND (NOT a) b)");
  EXPECT_EQ(DumpOf("NOT a = b"), "(NOT (= a b))");
  EXPECT_EQ(DumpOf("NOT NOT a"), "(NOT (NOT a))");
  EXPECT_EQ(DumpOf("a = 1 OR b < 2 AND NOT c >= 3"), "(OR (= a 1) (AND (< b 2) (NOT (>= c 3))))");
  EXPECT_EQ(DumpOf("(a OR b) AND c"), "(AND (OR a b) c)");
}

TEST(ExpressionTest, ComparisonOperators) {
  EXPECT_EQ(DumpOf("a = b"), "(= a b)");
  EXPECT_EQ(DumpOf("a <> b"), "(<> a b)");
  EXPECT_EQ(DumpOf("a != b"), "(<> a b)");
  EXPECT_EQ(DumpOf("a < b"), "(< a b)");
  EXPECT_EQ(DumpOf("a <= b"), "(<= a b)");
  EXPECT_EQ(DumpOf("a > b"), "(> a b)");
  EXPECT_EQ(DumpOf("a >= b + 1"), "(>= a (+ b 1))");
}

TEST(ExpressionTest, Literals) {
  EXPECT_EQ(DumpOf("42"), "42");
  EXPECT_EQ(DumpOf("0.05"), "dec:0.05");
  EXPECT_EQ(DumpOf("1e3"), "dec:1e3");
  EXPECT_EQ(DumpOf("'it''s'"), "'it's'");
  EXPECT_EQ(DumpOf("TRUE"), "TRUE");
  EXPECT_EQ(DumpOf("false"), "FALSE");
  EXPECT_EQ(DumpOf("null"), "NULL");
  EXPECT_EQ(DumpOf("DATE '1998-12-01'"), "date:1998-12-01");
  EXPECT_EQ(DumpOf("date '1995-09-01'"), "date:1995-09-01");
  EXPECT_EQ(DumpOf("TIMESTAMP '2020-01-01 10:00:00'"), "timestamp:2020-01-01 10:00:00");
}

TEST(ExpressionTest, IntervalLiterals) {
  EXPECT_EQ(DumpOf("INTERVAL '3' MONTH"), "interval:3:MONTH");
  EXPECT_EQ(DumpOf("interval '90' day"), "interval:90:DAY");
  EXPECT_EQ(DumpOf("INTERVAL '2' DAYS"), "interval:2:DAY");
  EXPECT_EQ(DumpOf("INTERVAL '1' YEAR"), "interval:1:YEAR");
  EXPECT_EQ(DumpOf("INTERVAL '5' hours"), "interval:5:HOUR");
  EXPECT_EQ(DumpOf("INTERVAL '10' MINUTE"), "interval:10:MINUTE");
  EXPECT_EQ(DumpOf("INTERVAL '30' SECONDS"), "interval:30:SECOND");
  EXPECT_EQ(DumpOf("INTERVAL '1 day'"), "interval:1 day:");
  EXPECT_EQ(DumpOf("INTERVAL 3 DAY"), "interval:3:DAY");
  EXPECT_EQ(DumpOf("DATE '1998-12-01' - INTERVAL '90' DAY"), "(- date:1998-12-01 interval:90:DAY)");
}

TEST(ExpressionTest, DateTimestampIntervalAreNamesWhenNotFollowedByAString) {
  EXPECT_EQ(DumpOf("date"), "date");
  EXPECT_EQ(DumpOf("date + 1"), "(+ date 1)");
  EXPECT_EQ(DumpOf("timestamp"), "timestamp");
  EXPECT_EQ(DumpOf("interval"), "interval");
  EXPECT_EQ(DumpOf("d.date"), "d.date");
  EXPECT_EQ(DumpOf("date(x)"), "(fn DATE x)");
}

TEST(ExpressionTest, ColumnReferences) {
  std::unique_ptr<ParsedExpr> column = testing::ParseExpr("n1.N_NAME");
  ASSERT_NE(column, nullptr);
  EXPECT_EQ(column->kind, ExprKind::kColumnRef);
  EXPECT_EQ(column->qualifier, "n1");
  EXPECT_EQ(column->name, "n_name");
  EXPECT_EQ(DumpOf("\"T\".\"Col\""), "T.Col");
  EXPECT_EQ(DumpOf("t.\"order\""), "t.order");
  EXPECT_EQ(DumpOf("t.order"), "t.order");
}

TEST(ExpressionTest, FunctionCalls) {
  EXPECT_EQ(DumpOf("sum(l_extendedprice * (1 - l_discount))"), "(fn SUM (* l_extendedprice (- 1 l_discount)))");
  EXPECT_EQ(DumpOf("COALESCE(a, b, 0)"), "(fn COALESCE a b 0)");
  EXPECT_EQ(DumpOf("nullif(a, 0)"), "(fn NULLIF a 0)");
  EXPECT_EQ(DumpOf("now()"), "(fn NOW)");
  EXPECT_EQ(DumpOf("Upper(\"Name\")"), "(fn UPPER Name)");
  EXPECT_EQ(DumpOf("left(s, 3)"), "(fn LEFT s 3)");
  EXPECT_EQ(DumpOf("count(ALL x)"), "(fn COUNT x)");
}

TEST(ExpressionTest, CountStarAndCountDistinct) {
  std::unique_ptr<ParsedExpr> count = testing::ParseExpr("count(*)");
  ASSERT_NE(count, nullptr);
  EXPECT_EQ(count->kind, ExprKind::kFunctionCall);
  EXPECT_EQ(count->name, "COUNT");
  ASSERT_EQ(count->children.size(), 1u);
  EXPECT_EQ(count->children[0]->kind, ExprKind::kStar);
  EXPECT_FALSE(count->distinct);

  std::unique_ptr<ParsedExpr> distinct = testing::ParseExpr("COUNT(DISTINCT ps_suppkey)");
  ASSERT_NE(distinct, nullptr);
  EXPECT_TRUE(distinct->distinct);
  EXPECT_EQ(testing::Dump(*distinct), "(fn COUNT distinct ps_suppkey)");
}

TEST(ExpressionTest, AggregateNamesAreUsableAsColumns) {
  EXPECT_EQ(DumpOf("count + sum"), "(+ count sum)");
  EXPECT_EQ(DumpOf("min - max + avg"), "(+ (- min max) avg)");
}

TEST(ExpressionTest, LikeBetweenInIsNull) {
  EXPECT_EQ(DumpOf("p_type LIKE '%BRASS'"), "(like p_type '%BRASS')");
  EXPECT_EQ(DumpOf("p_type NOT LIKE 'MEDIUM%'"), "(not-like p_type 'MEDIUM%')");
  EXPECT_EQ(DumpOf("a LIKE 'x' || y"), "(like a (|| 'x' y))");
  EXPECT_EQ(DumpOf("x BETWEEN 1 AND 5"), "(between x 1 5)");
  EXPECT_EQ(DumpOf("x NOT BETWEEN a + 1 AND b * 2"), "(not-between x (+ a 1) (* b 2))");
  EXPECT_EQ(DumpOf("x BETWEEN 1 AND 5 AND y"), "(AND (between x 1 5) y)");
  EXPECT_EQ(DumpOf("x IN (1, 2, 3)"), "(in x 1 2 3)");
  EXPECT_EQ(DumpOf("x NOT IN ('a')"), "(not-in x 'a')");
  EXPECT_EQ(DumpOf("x IS NULL"), "(is-null x)");
  EXPECT_EQ(DumpOf("x + 1 IS NOT NULL"), "(is-not-null (+ x 1))");
  EXPECT_EQ(DumpOf("a = b IS NULL"), "(is-null (= a b))");
  EXPECT_EQ(DumpOf("NOT x IS NULL"), "(NOT (is-null x))");
  EXPECT_EQ(DumpOf("a < b AND c NOT IN (1) OR d LIKE 'e'"), "(OR (AND (< a b) (not-in c 1)) (like d 'e'))");
}

TEST(ExpressionTest, Subqueries) {
  std::unique_ptr<ParsedExpr> in = testing::ParseExpr("o_orderkey IN (SELECT l_orderkey FROM lineitem)");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->kind, ExprKind::kInSubquery);
  EXPECT_FALSE(in->negated);
  ASSERT_NE(in->subquery, nullptr);
  EXPECT_EQ(in->subquery->body->select->from[0]->name, "lineitem");

  EXPECT_EQ(DumpOf("x NOT IN (SELECT s_suppkey FROM supplier)"), "(not-in-subquery x)");
  EXPECT_EQ(DumpOf("EXISTS (SELECT * FROM t)"), "(exists)");
  EXPECT_EQ(DumpOf("NOT EXISTS (SELECT * FROM t)"), "(not-exists)");
  EXPECT_EQ(DumpOf("a AND NOT EXISTS (SELECT 1)"), "(AND a (not-exists))");
  EXPECT_EQ(DumpOf("(SELECT max(x) FROM t) * 2"), "(* (subquery) 2)");
  EXPECT_EQ(DumpOf("((SELECT 1))"), "(subquery)");
  EXPECT_EQ(DumpOf("x = (WITH c AS (SELECT 1) SELECT * FROM c)"), "(= x (subquery))");
}

TEST(ExpressionTest, CaseForms) {
  EXPECT_EQ(DumpOf("CASE WHEN a THEN 1 ELSE 0 END"), "(case else a 1 0)");
  EXPECT_EQ(DumpOf("CASE WHEN a THEN 1 WHEN b THEN 2 END"), "(case a 1 b 2)");
  EXPECT_EQ(DumpOf("CASE x WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE 'many' END"),
            "(case operand else x 1 'one' 2 'two' 'many')");
  EXPECT_EQ(DumpOf("CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END"),
            "(case else (OR (= o_orderpriority '1-URGENT') (= o_orderpriority '2-HIGH')) 1 0)");
}

TEST(ExpressionTest, CastForms) {
  EXPECT_EQ(DumpOf("CAST('1998-09-02' AS date)"), "(cast '1998-09-02' DATE)");
  EXPECT_EQ(DumpOf("CAST(x AS DOUBLE PRECISION)"), "(cast x DOUBLE)");
  EXPECT_EQ(DumpOf("CAST(x AS character varying(20))"), "(cast x VARCHAR(20))");
  EXPECT_EQ(DumpOf("CAST(x AS numeric(15,2))"), "(cast x NUMERIC(15,2))");
  EXPECT_EQ(DumpOf("x::varchar"), "(cast x VARCHAR)");
}

TEST(ExpressionTest, ExtractAndSubstring) {
  EXPECT_EQ(DumpOf("extract(year FROM l_shipdate)"), "(extract YEAR l_shipdate)");
  EXPECT_EQ(DumpOf("EXTRACT(Month FROM d + 1)"), "(extract MONTH (+ d 1))");
  EXPECT_EQ(DumpOf("substring(c_phone FROM 1 FOR 2)"), "(substring c_phone 1 2)");
  EXPECT_EQ(DumpOf("substring(c_phone FROM 3)"), "(substring c_phone 3)");
  EXPECT_EQ(DumpOf("SUBSTRING(s, 1, 2)"), "(substring s 1 2)");
  EXPECT_EQ(DumpOf("substring(s, 2)"), "(substring s 2)");
}

TEST(ExpressionTest, PositionsPointAtTheFirstToken) {
  std::unique_ptr<ParsedExpr> expr = testing::ParseExpr("a + (b * c)");
  ASSERT_NE(expr, nullptr);
  EXPECT_EQ(expr->position.column, 8);
  EXPECT_EQ(expr->children[1]->position.column, 13);
  std::unique_ptr<ParsedExpr> negative = testing::ParseExpr("-5");
  EXPECT_EQ(negative->position.column, 8);
}

}  // namespace
}  // namespace tessera::parser
