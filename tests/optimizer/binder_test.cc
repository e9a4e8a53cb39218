// The binder on small queries: name resolution and scoping, FROM forms, aggregation, ORDER BY, set
// operations, typing and coercion, and subqueries. Plan shapes are checked with patterns on ToString().

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimizer/plan_validation.h"
#include "tests/optimizer/optimizer_catalog_for_test.h"

namespace tessera::optimizer {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class BinderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    catalog_ = new testing::TestCatalog("tpch");
    catalog_->CreateTables(
        "CREATE TABLE t (a INTEGER, b VARCHAR(10), c DECIMAL(10,2) NOT NULL, d DATE);"
        "CREATE TABLE u (a INTEGER NOT NULL, e BIGINT);");
    catalog_->CreateView("european_nations",
                         "SELECT n_nationkey AS k, n_name FROM nation, region "
                         "WHERE n_regionkey = r_regionkey AND r_name = 'EUROPE'");
    catalog_->CreateView("renamed", "SELECT a, e FROM u", {"x", "y"});
  }
  static void TearDownTestSuite() {
    delete catalog_;
    catalog_ = nullptr;
  }

  // The bound plan's text; fails the test on an error or an invalid plan.
  static std::string Bound(const std::string& sql) {
    auto plan = testing::Plan(catalog_->catalog(), sql);
    if (!plan.ok()) {
      ADD_FAILURE() << sql << "\n" << plan.status().message();
      return "";
    }
    absl::Status valid = ValidatePlan(**plan);
    EXPECT_TRUE(valid.ok()) << valid.message();
    return (*plan)->ToString();
  }

  static std::unique_ptr<LogicalOperator> BoundPlan(const std::string& sql) {
    auto plan = testing::Plan(catalog_->catalog(), sql);
    EXPECT_TRUE(plan.ok()) << sql << "\n" << plan.status().message();
    return plan.ok() ? *std::move(plan) : nullptr;
  }

  static std::string Optimized(const std::string& sql) {
    auto plan = testing::Plan(catalog_->catalog(), sql, /*optimize=*/true);
    if (!plan.ok()) {
      ADD_FAILURE() << sql << "\n" << plan.status().message();
      return "";
    }
    absl::Status valid = ValidatePlan(**plan);
    EXPECT_TRUE(valid.ok()) << valid.message() << "\n" << (*plan)->ToString();
    return (*plan)->ToString();
  }

  static std::vector<std::string> Names(const LogicalOperator& plan) { return plan.OutputNames(); }

  static testing::TestCatalog* catalog_;
};

testing::TestCatalog* BinderTest::catalog_ = nullptr;

// ---- names and scoping

TEST_F(BinderTest, ResolvesQualifiedAndUnqualifiedNamesThroughAliases) {
  const std::string plan =
      Bound("SELECT n.n_name, r_name FROM nation n, region AS r WHERE n.n_regionkey = r.r_regionkey");
  EXPECT_THAT(plan, HasSubstr("TableScan nation AS n"));
  EXPECT_THAT(plan, HasSubstr("TableScan region AS r"));
  EXPECT_THAT(plan, HasSubstr("Filter (n_regionkey = r_regionkey)"));
  EXPECT_THAT(plan, HasSubstr("Project [n_name, r_name]"));
}

TEST_F(BinderTest, SameTableTwiceIsTellApartByAlias) {
  const std::string plan =
      Bound("SELECT n1.n_name, n2.n_name FROM nation n1, nation n2 WHERE n1.n_regionkey = n2.n_regionkey");
  EXPECT_THAT(plan, HasSubstr("Filter (n1.n_regionkey = n2.n_regionkey)"));
  EXPECT_THAT(plan, HasSubstr("Project [n1.n_name, n2.n_name]"));
}

TEST_F(BinderTest, StarAndQualifiedStar) {
  auto plan = BoundPlan("SELECT * FROM region");
  EXPECT_EQ(Names(*plan), (std::vector<std::string>{"r_regionkey", "r_name", "r_comment"}));
  plan = BoundPlan("SELECT r.*, n_name FROM nation, region r WHERE n_regionkey = r_regionkey");
  EXPECT_EQ(Names(*plan), (std::vector<std::string>{"r_regionkey", "r_name", "r_comment", "n_name"}));
}

TEST_F(BinderTest, SelectWithoutFromReadsOneRow) {
  const std::string plan = Bound("SELECT 1 AS one, 'x'");
  EXPECT_THAT(plan, HasSubstr("Project [one := 1, 'x']\n  Values [] ()"));
}

TEST_F(BinderTest, CorrelatedNameResolvesInnerScopeFirst) {
  // Inside the subquery, n_regionkey is the subquery's own column; r_regionkey comes from the outer query.
  const std::string plan =
      Bound("SELECT r_name FROM region WHERE EXISTS (SELECT * FROM nation WHERE n_regionkey = r_regionkey)");
  EXPECT_THAT(plan, HasSubstr("Join SEMI keys=[r_regionkey = n_regionkey]"));
}

// ---- FROM forms

TEST_F(BinderTest, ExplicitJoinsPutEqualitiesIntoKeys) {
  const std::string plan = Bound(
      "SELECT n_name FROM nation JOIN region ON n_regionkey = r_regionkey AND r_name <> 'ASIA' "
      "LEFT JOIN supplier ON s_nationkey = n_nationkey");
  EXPECT_THAT(plan, HasSubstr("Join INNER keys=[n_regionkey = r_regionkey] residual=(r_name <> 'ASIA')"));
  EXPECT_THAT(plan, HasSubstr("Join LEFT OUTER keys=[n_nationkey = s_nationkey]"));
}

TEST_F(BinderTest, UsingAndNaturalJoinsMergeColumns) {
  auto plan = BoundPlan("SELECT * FROM t JOIN u USING (a)");
  EXPECT_EQ(Names(*plan), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_THAT(plan->ToString(), HasSubstr("Join INNER keys=[t.a = u.a]"));
  plan = BoundPlan("SELECT * FROM t NATURAL JOIN u");
  EXPECT_EQ(Names(*plan), (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  // Both sides stay reachable by their qualified names.
  plan = BoundPlan("SELECT a, t.a, u.a FROM t JOIN u USING (a)");
  EXPECT_EQ(plan->output_width(), 3);
}

TEST_F(BinderTest, RightJoinBecomesLeftJoinWithColumnsInOrder) {
  auto plan = BoundPlan("SELECT * FROM t RIGHT JOIN u ON t.a = u.a");
  EXPECT_EQ(Names(*plan), (std::vector<std::string>{"a", "b", "c", "d", "a", "e"}));
  EXPECT_THAT(plan->ToString(), HasSubstr("Join LEFT OUTER keys=[u.a = t.a]"));
  EXPECT_TRUE(plan->output()[2].nullable);   // t.c is NOT NULL but padded
  EXPECT_FALSE(plan->output()[4].nullable);  // u.a
}

TEST_F(BinderTest, FullJoinUsingCoalescesTheMergedColumn) {
  const std::string plan = Bound("SELECT a FROM t FULL JOIN u USING (a)");
  EXPECT_THAT(plan, HasSubstr("Join FULL OUTER keys=[t.a = u.a]"));
  EXPECT_THAT(plan, HasSubstr("a := coalesce(t.a, u.a)"));
}

TEST_F(BinderTest, DerivedTableWithColumnAliases) {
  auto plan = BoundPlan("SELECT x, y FROM (SELECT n_nationkey, n_name FROM nation) AS s(x, y) WHERE x > 3");
  EXPECT_EQ(Names(*plan), (std::vector<std::string>{"x", "y"}));
  EXPECT_THAT(plan->ToString(), HasSubstr("Filter (x > 3)"));
}

TEST_F(BinderTest, CtesAreBoundAtEachUseAndSeeEarlierCtes) {
  const std::string plan = Bound(
      "WITH a AS (SELECT n_nationkey AS k FROM nation), b AS (SELECT k + 1 AS k2 FROM a) "
      "SELECT * FROM a, b, a AS again WHERE a.k = b.k2");
  size_t scans = 0;
  for (size_t at = plan.find("TableScan nation"); at != std::string::npos; at = plan.find("TableScan nation", at + 1)) {
    ++scans;
  }
  EXPECT_EQ(scans, 3u);
}

TEST_F(BinderTest, CteShadowsTableAndHasColumnNames) {
  auto plan = BoundPlan("WITH nation(x) AS (SELECT r_regionkey FROM region) SELECT * FROM nation");
  EXPECT_EQ(Names(*plan), (std::vector<std::string>{"x"}));
  EXPECT_THAT(plan->ToString(), HasSubstr("TableScan region"));
}

TEST_F(BinderTest, ViewsAreExpandedWithTheirColumnNames) {
  auto plan = BoundPlan("SELECT k FROM european_nations WHERE n_name LIKE 'F%'");
  EXPECT_THAT(plan->ToString(), HasSubstr("Filter ((n_regionkey = r_regionkey) AND (r_name = 'EUROPE'))"));
  plan = BoundPlan("SELECT x + 1, y FROM renamed");
  EXPECT_EQ(Names(*plan), (std::vector<std::string>{"x + 1", "y"}));
}

// ---- aggregation

TEST_F(BinderTest, AggregatesBecomeAggregatePlusProject) {
  const std::string plan = Bound(
      "SELECT n_regionkey, count(*) AS c, sum(n_nationkey) + 1 FROM nation GROUP BY n_regionkey "
      "HAVING count(*) > 2");
  EXPECT_THAT(plan, HasSubstr("Aggregate groups=[n_regionkey] aggregates=[count(*), sum(n_nationkey)]"));
  EXPECT_THAT(plan, HasSubstr("Filter (count(*) > 2)"));
  EXPECT_THAT(plan, HasSubstr("sum(n_nationkey) + 1 := (sum(n_nationkey) + 1)"));
}

TEST_F(BinderTest, GroupByOrdinalAliasAndExpression) {
  EXPECT_THAT(Bound("SELECT n_regionkey, count(*) FROM nation GROUP BY 1"),
              HasSubstr("Aggregate groups=[n_regionkey]"));
  EXPECT_THAT(Bound("SELECT n_regionkey AS r, count(*) FROM nation GROUP BY r"),
              HasSubstr("Aggregate groups=[n_regionkey]"));
  const std::string plan = Bound(
      "SELECT extract(year FROM o_orderdate) AS y, count(*) FROM orders GROUP BY extract(year FROM "
      "o_orderdate)");
  EXPECT_THAT(plan, HasSubstr("Aggregate groups=[extract_year(o_orderdate)]"));
  EXPECT_THAT(plan, HasSubstr("Project [y := extract(year FROM o_orderdate)"));
}

TEST_F(BinderTest, GroupedExpressionsAndIdenticalAggregatesAreShared) {
  const std::string plan = Bound(
      "SELECT n_regionkey + 1, max(n_nationkey), max(n_nationkey) * 2 FROM nation GROUP BY n_regionkey + 1 "
      "ORDER BY max(n_nationkey)");
  EXPECT_THAT(plan, HasSubstr("Aggregate groups=[(n_regionkey + 1)] aggregates=[max(n_nationkey)]\n"));
}

TEST_F(BinderTest, AggregateWithoutGroupByAndHavingOnly) {
  EXPECT_THAT(Bound("SELECT count(*) FROM nation HAVING count(*) > 1"),
              HasSubstr("Filter (count(*) > 1)\n    Aggregate groups=[] aggregates=[count(*)]"));
}

TEST_F(BinderTest, AggregateResultTypes) {
  auto plan = BoundPlan(
      "SELECT count(*), count(DISTINCT l_suppkey), sum(l_quantity), avg(l_quantity), sum(l_linenumber), "
      "avg(l_linenumber), sum(l_orderkey), min(l_shipdate), max(l_comment) FROM lineitem");
  const auto& out = plan->output();
  EXPECT_EQ(out[0].type, Type::BigInt());
  EXPECT_EQ(out[1].type, Type::BigInt());
  EXPECT_EQ(out[2].type, Type::Decimal(38, 2));
  EXPECT_EQ(out[3].type, Type::Double());
  EXPECT_EQ(out[4].type, Type::BigInt());
  EXPECT_EQ(out[5].type, Type::Double());
  EXPECT_EQ(out[6].type, Type::Decimal(38, 0));
  EXPECT_EQ(out[7].type, Type::Date());
  EXPECT_EQ(out[8].type, Type::Varchar(44));
  EXPECT_THAT(plan->ToString(), HasSubstr("count(DISTINCT l_suppkey)"));
  EXPECT_THAT(plan->ToString(), HasSubstr("sum(l_orderkey)"));
}

// ---- ORDER BY, DISTINCT, LIMIT, set operations

TEST_F(BinderTest, OrderByOrdinalAliasAndHiddenExpression) {
  std::string plan = Bound("SELECT n_name AS name, n_nationkey FROM nation ORDER BY 2 DESC, name");
  EXPECT_THAT(plan, HasSubstr("Sort [n_nationkey DESC, name ASC]"));
  plan = Bound("SELECT n_name FROM nation ORDER BY n_regionkey NULLS FIRST, n_nationkey + 1 DESC");
  EXPECT_THAT(plan, HasSubstr("Project [n_name]\n  Sort [n_regionkey ASC NULLS FIRST, n_nationkey + 1 DESC]"));
  auto bound = BoundPlan("SELECT n_name FROM nation ORDER BY n_regionkey");
  EXPECT_EQ(Names(*bound), (std::vector<std::string>{"n_name"}));
}

TEST_F(BinderTest, OrderByAggregateNotInSelectList) {
  const std::string plan = Bound("SELECT n_regionkey FROM nation GROUP BY n_regionkey ORDER BY count(*) DESC");
  EXPECT_THAT(plan, HasSubstr("Sort [count(*) DESC]"));
}

TEST_F(BinderTest, DistinctLimitOffset) {
  const std::string plan = Bound("SELECT DISTINCT n_regionkey FROM nation ORDER BY n_regionkey LIMIT 3 OFFSET 1");
  EXPECT_THAT(plan, HasSubstr("Limit 3 OFFSET 1\n  Sort [n_regionkey ASC]\n    Distinct\n      Project [n_regionkey]"));
}

TEST_F(BinderTest, SetOperationsUnifyTypes) {
  auto plan = BoundPlan("SELECT n_nationkey FROM nation UNION SELECT o_orderkey FROM orders ORDER BY 1 LIMIT 5");
  EXPECT_EQ(plan->output()[0].type, Type::BigInt());
  const std::string text = plan->ToString();
  EXPECT_THAT(text, HasSubstr("SetOperation UNION\n"));
  EXPECT_THAT(text, HasSubstr("n_nationkey := CAST(n_nationkey AS BIGINT)"));
  EXPECT_THAT(Bound("SELECT a FROM t UNION ALL SELECT a FROM u"), HasSubstr("SetOperation UNION ALL"));
  EXPECT_THAT(Bound("SELECT a FROM t INTERSECT SELECT a FROM u EXCEPT SELECT 1"),
              HasSubstr("SetOperation EXCEPT\n  SetOperation INTERSECT"));
  EXPECT_THAT(Bound("SELECT n_name AS x FROM nation UNION SELECT r_name FROM region ORDER BY x DESC"),
              HasSubstr("Sort [x DESC]"));
}

// ---- typing and coercion

TEST_F(BinderTest, StringLiteralsBecomeDatesAndConstantsFold) {
  const std::string plan = Bound(
      "SELECT o_orderkey FROM orders WHERE o_orderdate >= '1995-01-01' AND "
      "o_orderdate < DATE '1995-01-01' + INTERVAL '3' MONTH AND o_orderdate <= CAST('1995-06-30' AS DATE) - "
      "1");
  EXPECT_THAT(plan, HasSubstr("(o_orderdate >= DATE '1995-01-01')"));
  EXPECT_THAT(plan, HasSubstr("(o_orderdate < DATE '1995-04-01')"));
  EXPECT_THAT(plan, HasSubstr("(o_orderdate <= DATE '1995-06-29')"));
}

TEST_F(BinderTest, DateArithmetic) {
  auto plan = BoundPlan(
      "SELECT o_orderdate + INTERVAL '1' DAY, INTERVAL '1' YEAR + o_orderdate, o_orderdate - o_orderdate "
      "FROM orders");
  EXPECT_EQ(plan->output()[0].type, Type::Date());
  EXPECT_EQ(plan->output()[1].type, Type::Date());
  EXPECT_EQ(plan->output()[2].type, Type::Integer());
  EXPECT_THAT(plan->ToString(), HasSubstr("(o_orderdate + INTERVAL '1 year')"));
}

TEST_F(BinderTest, NumericPromotionAndDecimalRules) {
  auto plan = BoundPlan(
      "SELECT l_extendedprice * (1 - l_discount), l_extendedprice / l_quantity, l_linenumber + l_orderkey, "
      "l_linenumber / 2, l_quantity * 2.5e0, 7 / 2, l_quantity + 1 FROM lineitem");
  const auto& out = plan->output();
  EXPECT_EQ(out[0].type, Type::Decimal(32, 4));  // (15,2) * (16,2)
  EXPECT_EQ(out[1].type, Type::Double());        // DECIMAL / DECIMAL is DOUBLE
  EXPECT_EQ(out[2].type, Type::BigInt());
  EXPECT_EQ(out[3].type, Type::Integer());
  EXPECT_EQ(out[4].type, Type::Double());
  EXPECT_EQ(out[5].type, Type::Integer());
  EXPECT_EQ(out[6].type, Type::Decimal(16, 2));
  const std::string text = plan->ToString();
  EXPECT_THAT(text, HasSubstr("(l_extendedprice * (1.00 - CAST(l_discount AS DECIMAL(16,2))))"));
  EXPECT_THAT(text, HasSubstr("7 / 2 := 3"));
  EXPECT_THAT(text, HasSubstr("(CAST(l_linenumber AS BIGINT) + l_orderkey)"));
}

TEST_F(BinderTest, ComparisonsMeetInOneType) {
  const std::string plan = Bound(
      "SELECT * FROM lineitem WHERE l_quantity < 24 AND l_discount BETWEEN 0.05 AND 0.07 AND l_linenumber = "
      "2.5 "
      "AND l_shipmode = 'AIR' AND l_comment = 'a string longer than forty-four characters, much longer'");
  EXPECT_THAT(plan, HasSubstr("(l_quantity < 24.00)"));
  EXPECT_THAT(plan, HasSubstr("(l_discount >= 0.05) AND (l_discount <= 0.07)"));
  EXPECT_THAT(plan, HasSubstr("(CAST(l_linenumber AS DECIMAL(11,1)) = 2.5)"));
  EXPECT_THAT(plan, HasSubstr("(l_shipmode = 'AIR')"));
  EXPECT_THAT(plan, HasSubstr("(CAST(l_comment AS VARCHAR) = 'a string longer"));
}

TEST_F(BinderTest, CaseCoalesceNullIfInListLike) {
  auto plan = BoundPlan(
      "SELECT CASE n_regionkey WHEN 1 THEN 'one' WHEN 2 THEN 'two' ELSE n_name END, coalesce(n_comment, "
      "'none'), "
      "nullif(n_regionkey, 0), CASE WHEN n_nationkey > 3 THEN 1.5 END FROM nation "
      "WHERE n_regionkey IN (1, 2) AND n_nationkey NOT IN (3, n_regionkey) AND n_name NOT LIKE 'A%'");
  const std::string text = plan->ToString();
  // String literals take the type of the other results when they fit.
  EXPECT_THAT(text, HasSubstr("CASE WHEN (n_regionkey = 1) THEN 'one' WHEN (n_regionkey = 2) THEN 'two' ELSE "
                              "n_name END"));
  EXPECT_THAT(text, HasSubstr("(n_regionkey IN (1, 2)) AND (n_nationkey <> 3) AND (n_nationkey <> n_regionkey)"));
  EXPECT_THAT(text, HasSubstr("(n_name NOT LIKE 'A%')"));
  EXPECT_EQ(plan->output()[0].type, Type::Char(25));
  EXPECT_EQ(plan->output()[1].type, Type::Varchar(152));
  EXPECT_EQ(plan->output()[2].type, Type::Integer());
  EXPECT_TRUE(plan->output()[2].nullable);
  EXPECT_EQ(plan->output()[3].type, Type::Decimal(2, 1));
  EXPECT_TRUE(plan->output()[3].nullable);
}

TEST_F(BinderTest, ExtractAndSubstring) {
  auto plan = BoundPlan(
      "SELECT extract(month FROM o_orderdate), substring(o_clerk FROM 2 FOR 3), "
      "substr(o_comment, 4) FROM orders");
  EXPECT_EQ(plan->output()[0].type, Type::Integer());
  EXPECT_EQ(plan->output()[1].type, Type::Varchar(15));
  EXPECT_THAT(plan->ToString(), HasSubstr("extract_month(o_orderdate)"));
  EXPECT_THAT(plan->ToString(), HasSubstr("substring(o_clerk, 2, 3)"));
}

TEST_F(BinderTest, NullabilityFollowsTheSchema) {
  auto plan = BoundPlan("SELECT a, c, c + 1, a IS NULL FROM t");
  EXPECT_TRUE(plan->output()[0].nullable);
  EXPECT_FALSE(plan->output()[1].nullable);
  EXPECT_FALSE(plan->output()[2].nullable);
  EXPECT_FALSE(plan->output()[3].nullable);
}

// ---- subqueries

TEST_F(BinderTest, NotInOverNullableColumnsIsNullAware) {
  EXPECT_THAT(Bound("SELECT * FROM t WHERE a NOT IN (SELECT a FROM u)"),
              HasSubstr("Join ANTI NULL-AWARE keys=[t.a = u.a]"));
  EXPECT_THAT(Bound("SELECT * FROM u WHERE a NOT IN (SELECT a FROM t)"),
              HasSubstr("Join ANTI NULL-AWARE keys=[u.a = t.a]"));
  EXPECT_THAT(Bound("SELECT * FROM u WHERE NOT (a IN (SELECT n_nationkey FROM nation))"),
              HasSubstr("Join ANTI keys=[a = n_nationkey]"));
}

TEST_F(BinderTest, InSubqueryWithCorrelationAddsKeys) {
  EXPECT_THAT(Bound("SELECT r_name FROM region WHERE r_name IN (SELECT n_name FROM nation WHERE n_regionkey "
                    "= r_regionkey)"),
              HasSubstr("Join SEMI keys=[r_name = n_name, r_regionkey = n_regionkey]"));
}

TEST_F(BinderTest, UncorrelatedScalarSubqueries) {
  // An aggregate yields exactly one row: cross join.
  EXPECT_THAT(Bound("SELECT n_name FROM nation WHERE n_nationkey > (SELECT avg(n_nationkey) FROM nation)"),
              HasSubstr("Join CROSS"));
  // Anything else may yield no row (NULL) or several (an error at run time).
  EXPECT_THAT(Bound("SELECT (SELECT r_name FROM region WHERE r_regionkey = 1) FROM nation"),
              HasSubstr("Join LEFT OUTER single-row"));
}

TEST_F(BinderTest, CorrelatedCountKeepsZeroForMissingGroups) {
  const std::string plan =
      Bound("SELECT r_name, (SELECT count(*) FROM nation WHERE n_regionkey = r_regionkey) FROM region");
  EXPECT_THAT(plan, HasSubstr("Join LEFT OUTER keys=[r_regionkey = n_regionkey]"));
  EXPECT_THAT(plan, HasSubstr("CASE WHEN (__matched IS NULL) THEN 0 ELSE count(*) END"));
  EXPECT_THAT(plan, HasSubstr("Project [n_regionkey, count(*), __matched := TRUE]"));
}

TEST_F(BinderTest, CorrelatedScalarInSelectListUsesLeftJoin) {
  EXPECT_THAT(Bound("SELECT r_name, (SELECT max(n_name) FROM nation WHERE n_regionkey = r_regionkey) FROM region"),
              HasSubstr("Join LEFT OUTER keys=[r_regionkey = n_regionkey]"));
  // In a WHERE comparison, NULL rejects the row anyway: inner join.
  EXPECT_THAT(Bound("SELECT r_name FROM region WHERE r_regionkey < (SELECT max(n_nationkey) FROM nation "
                    "WHERE n_regionkey = r_regionkey)"),
              HasSubstr("Join INNER keys=[r_regionkey = n_regionkey]"));
}

TEST_F(BinderTest, ExistsAndInUnderOrUseMatchMarkers) {
  std::string plan = Bound(
      "SELECT r_name FROM region WHERE EXISTS (SELECT * FROM nation WHERE n_regionkey = r_regionkey) OR "
      "r_regionkey = 0");
  EXPECT_THAT(plan, HasSubstr("Filter ((__matched IS NOT NULL) OR (r_regionkey = 0))"));
  EXPECT_THAT(plan, HasSubstr("Join LEFT OUTER keys=[r_regionkey = key0]"));
  plan = Bound("SELECT r_name FROM region WHERE r_regionkey IN (SELECT n_regionkey FROM nation) OR r_regionkey = 0");
  EXPECT_THAT(plan, HasSubstr("CASE WHEN (__matched IS NOT NULL) THEN TRUE WHEN (count(*) = 0) THEN FALSE"));
  plan = Bound("SELECT NOT EXISTS (SELECT 1 FROM region) FROM nation");
  EXPECT_THAT(plan, HasSubstr("(NOT (count(*) > 0))"));
}

TEST_F(BinderTest, SubqueriesInsideSubqueriesDecorrelateLevelByLevel) {
  const std::string plan = Bound(
      "SELECT r_name FROM region WHERE r_regionkey IN (SELECT n_regionkey FROM nation WHERE EXISTS "
      "(SELECT * FROM supplier WHERE s_nationkey = n_nationkey))");
  EXPECT_THAT(plan, HasSubstr("Join SEMI keys=[r_regionkey = n_regionkey]"));
  EXPECT_THAT(plan, HasSubstr("Join SEMI keys=[n_nationkey = s_nationkey]"));
}

// ---- the rules on small queries

TEST_F(BinderTest, LeftJoinUnderNullRejectingFilterBecomesInner) {
  const std::string plan =
      Optimized("SELECT n_name FROM nation LEFT JOIN region ON n_regionkey = r_regionkey WHERE r_name = 'ASIA'");
  EXPECT_THAT(plan, HasSubstr("Join INNER keys=[n_regionkey = r_regionkey]"));
  EXPECT_THAT(plan, HasSubstr("TableScan region [r_regionkey, r_name] filter=(r_name = 'ASIA')"));
}

TEST_F(BinderTest, FiltersMoveThroughProjectsAndOntoGroupKeys) {
  const std::string plan = Optimized(
      "SELECT * FROM (SELECT n_regionkey, count(*) AS c FROM nation GROUP BY n_regionkey) s "
      "WHERE n_regionkey = 1 AND c > 2");
  EXPECT_THAT(plan, HasSubstr("Filter (count(*) > 2)\n    Aggregate"));
  EXPECT_THAT(plan, HasSubstr("TableScan nation [n_regionkey] filter=(n_regionkey = 1)"));
}

TEST_F(BinderTest, FiltersReachBothSidesOfASetOperation) {
  const std::string plan = Optimized("SELECT * FROM (SELECT a FROM t UNION ALL SELECT a FROM u) s WHERE a > 5");
  EXPECT_THAT(plan, HasSubstr("TableScan t [a] filter=(a > 5)"));
  EXPECT_THAT(plan, HasSubstr("TableScan u [a] filter=(a > 5)"));
}

TEST_F(BinderTest, LimitStopsPushDown) {
  const std::string plan = Optimized("SELECT * FROM (SELECT a FROM t LIMIT 10) s WHERE a > 5");
  EXPECT_THAT(plan, HasSubstr("Filter (a > 5)\n    Limit 10\n"));
}

TEST_F(BinderTest, ColumnPruningKeepsOneColumnForCounts) {
  EXPECT_THAT(Optimized("SELECT count(*) FROM lineitem"), HasSubstr("TableScan lineitem [l_orderkey]"));
}

}  // namespace
}  // namespace tessera::optimizer
