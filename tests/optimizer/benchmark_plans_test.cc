// All 22 TPC-H and 13 SSB queries bind, validate (as bound and after every rule), keep their result schema
// through the rules, and have the plan shapes the binder and the rules promise (semi/anti joins for EXISTS/IN,
// decorrelated scalar subqueries, no cartesian products where join predicates exist, filters in the scans).

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimizer/plan_validation.h"
#include "tests/optimizer/optimizer_catalog_for_test.h"

namespace tessera::optimizer {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;

int Count(const std::string& text, const std::string& pattern) {
  int count = 0;
  for (size_t at = text.find(pattern); at != std::string::npos; at = text.find(pattern, at + 1)) ++count;
  return count;
}

// A join without keys whose right side is not a single-row aggregate is a cartesian product.
bool YieldsOneRow(const LogicalOperator& plan) {
  if (plan.kind() == LogicalOperatorKind::kAggregate) return plan.As<Aggregate>().group_by.empty();
  if (plan.kind() == LogicalOperatorKind::kProject) return YieldsOneRow(*plan.children[0]);
  return false;
}

int CartesianProducts(const LogicalOperator& plan) {
  int count = 0;
  if (plan.kind() == LogicalOperatorKind::kJoin) {
    const auto& join = plan.As<Join>();
    if (join.left_keys.empty() && (join.join_type == JoinType::kInner || join.join_type == JoinType::kCross) &&
        !YieldsOneRow(*plan.children[1]) && !YieldsOneRow(*plan.children[0])) {
      ++count;
    }
  }
  for (const auto& child : plan.children) count += CartesianProducts(*child);
  return count;
}

class BenchmarkPlansTest : public ::testing::Test {
 protected:
  // Binds every query of `benchmark` (bound and optimized) and keeps the plans' text by file stem ("q04").
  void BindAll(const std::string& benchmark) {
    testing::TestCatalog catalog(benchmark, /*statistics=*/true);
    ASSERT_TRUE(catalog.ok());
    const auto files = testing::BenchmarkQueryFiles(benchmark);
    ASSERT_FALSE(files.empty()) << "benchmarks/" << benchmark << "/queries not found; set TESSERA_SHARED_DIR";
    for (const auto& file : files) {
      SCOPED_TRACE(file.string());
      const std::string sql = testing::ReadFile(file);
      auto bound = testing::Plan(catalog.catalog(), sql, /*optimize=*/false);
      ASSERT_TRUE(bound.ok()) << bound.status().message();
      // ValidatePlan on the bound plan and after every rule, also in Release builds (as the SQL tests do): an
      // invalid plan fails PlanQuery with "the plan is invalid after rule NAME".
      OptimizerOptions options;
      options.validate_plans = true;
      auto optimized = testing::Plan(catalog.catalog(), sql, /*optimize=*/true, options);
      ASSERT_TRUE(optimized.ok()) << optimized.status().message();
      absl::Status valid = ValidatePlan(**bound);
      EXPECT_TRUE(valid.ok()) << valid.message() << "\n" << (*bound)->ToString();
      // The rules keep the result: same columns, names and types.
      ASSERT_EQ((*bound)->output_width(), (*optimized)->output_width());
      for (int i = 0; i < (*bound)->output_width(); ++i) {
        EXPECT_EQ((*bound)->output()[i].name, (*optimized)->output()[i].name);
        EXPECT_EQ((*bound)->output()[i].type, (*optimized)->output()[i].type);
      }
      EXPECT_EQ(CartesianProducts(**optimized), 0) << (*optimized)->ToString();
      const std::string stem = file.stem().string();
      bound_[stem] = (*bound)->ToString();
      optimized_[stem] = (*optimized)->ToString();
    }
  }

  std::map<std::string, std::string> bound_;
  std::map<std::string, std::string> optimized_;
};

TEST_F(BenchmarkPlansTest, AllTpchQueriesBindAndOptimize) {
  BindAll("tpch");
  EXPECT_EQ(bound_.size(), 22u);
}

TEST_F(BenchmarkPlansTest, AllSsbQueriesBindAndOptimize) {
  BindAll("ssb");
  EXPECT_EQ(bound_.size(), 13u);
}

TEST_F(BenchmarkPlansTest, TpchSubqueriesAreDecorrelated) {
  BindAll("tpch");
  // Q2: correlated MIN becomes an aggregate grouped by the correlation key, inner-joined back.
  EXPECT_THAT(bound_["q02"], HasSubstr("Aggregate groups=[ps_partkey] aggregates=[min(ps_supplycost)]"));
  EXPECT_THAT(bound_["q02"], HasSubstr("Join INNER keys=[p_partkey = partsupp.ps_partkey]"));
  // Q4: EXISTS -> semi join on the correlation equality; the uncorrelated conjunct filters the subquery.
  EXPECT_THAT(bound_["q04"], HasSubstr("Join SEMI keys=[o_orderkey = l_orderkey]"));
  EXPECT_THAT(bound_["q04"], HasSubstr("Filter (l_commitdate < l_receiptdate)"));
  // Q11: uncorrelated scalar subquery in HAVING: cross join with its single row.
  EXPECT_THAT(bound_["q11"], HasSubstr("Join CROSS\n        Aggregate groups=[ps_partkey]"));
  // Q13: LEFT OUTER JOIN with the ON condition; its right-only conjunct moves into the orders scan.
  EXPECT_THAT(bound_["q13"], HasSubstr("Join LEFT OUTER keys=[c_custkey = o_custkey] residual=(o_comment NOT LIKE "
                                       "'%special%requests%')"));
  EXPECT_THAT(optimized_["q13"], HasSubstr("filter=(o_comment NOT LIKE '%special%requests%')"));
  // Q15: the CTE is bound at each of its two uses.
  EXPECT_EQ(Count(bound_["q15"], "TableScan lineitem"), 2);
  // Q16: NOT IN over NOT NULL columns -> plain anti join.
  EXPECT_THAT(bound_["q16"], HasSubstr("Join ANTI keys=[ps_suppkey = s_suppkey]"));
  EXPECT_THAT(bound_["q16"], Not(HasSubstr("NULL-AWARE")));
  // Q17: correlated AVG -> aggregate grouped by l_partkey joined back on it.
  EXPECT_THAT(bound_["q17"], HasSubstr("Aggregate groups=[l_partkey] aggregates=[avg(l_quantity)]"));
  EXPECT_THAT(bound_["q17"], HasSubstr("Join INNER keys=[p_partkey = lineitem.l_partkey]"));
  // Q18: IN over a grouped subquery -> semi join with the whole subquery.
  EXPECT_THAT(bound_["q18"], HasSubstr("Join SEMI keys=[o_orderkey = lineitem.l_orderkey]"));
  EXPECT_THAT(bound_["q18"], HasSubstr("Filter (sum(l_quantity) > 300.00)"));
  // Q20: nested IN -> semi joins; the correlated SUM is grouped by both correlation keys.
  EXPECT_EQ(Count(bound_["q20"], "Join SEMI"), 2);
  EXPECT_THAT(bound_["q20"], HasSubstr("Aggregate groups=[l_partkey, l_suppkey] aggregates=[sum(l_quantity)]"));
  EXPECT_THAT(bound_["q20"], HasSubstr("Join INNER keys=[ps_partkey = l_partkey, ps_suppkey = l_suppkey]"));
  // Q21: EXISTS and NOT EXISTS with a non-equality correlated predicate as the residual.
  EXPECT_THAT(bound_["q21"],
              HasSubstr("Join SEMI keys=[l1.l_orderkey = l2.l_orderkey] residual=(l2.l_suppkey <> l1.l_suppkey)"));
  EXPECT_THAT(bound_["q21"],
              HasSubstr("Join ANTI keys=[l1.l_orderkey = l3.l_orderkey] residual=(l3.l_suppkey <> l1.l_suppkey)"));
  // Q22: NOT EXISTS -> anti join; the uncorrelated AVG is cross joined.
  EXPECT_THAT(bound_["q22"], HasSubstr("Join ANTI keys=[c_custkey = o_custkey]"));
  EXPECT_THAT(bound_["q22"], HasSubstr("Aggregate groups=[] aggregates=[avg(c_acctbal)]"));
  // No unresolved column index (#i) anywhere.
  for (const auto& [query, plan] : bound_) EXPECT_THAT(plan, Not(ContainsRegex("[ (\\[]#[0-9]"))) << query;
}

TEST_F(BenchmarkPlansTest, TpchRulesPushPredicatesAndOrderJoins) {
  BindAll("tpch");
  // Binding keeps FROM lists as cross joins; the rules turn every one into a keyed join.
  EXPECT_THAT(bound_["q05"], HasSubstr("Join CROSS"));
  for (const auto& [query, plan] : optimized_) EXPECT_THAT(plan, Not(HasSubstr("Join CROSS"))) << query;
  // Q1: filter and column pruning into the scan.
  EXPECT_THAT(optimized_["q01"],
              HasSubstr("TableScan lineitem [l_quantity, l_extendedprice, l_discount, l_tax, l_returnflag, "
                        "l_linestatus, l_shipdate] filter=(l_shipdate <= DATE '1998-09-02')"));
  // Q3: the smallest input joins first: customer is the build side of orders (an exact-filter semi join: it
  // contributes no column and c_custkey is dense).
  EXPECT_THAT(optimized_["q03"],
              HasSubstr("Join SEMI exact filter [1, 150000] (from inner join) keys=[o_custkey = c_custkey]"));
  // The orders build side is large (estimated 100 K rows or more), so the lineitem scan's direct prober publishes
  // a LIP filter that the scan applies.
  EXPECT_THAT(optimized_["q03"], HasSubstr("Join INNER keys=[l_orderkey = o_orderkey] publishes LIP filter #0\n"
                                           "            TableScan lineitem"));
  EXPECT_THAT(optimized_["q03"], ContainsRegex("TableScan lineitem [^\n]* LIP filters: \\[l_orderkey IN "
                                               "bloom\\(o_orderkey\\)\\]"));
  // Q5: the two-key supplier join publishes a LIP filter over the one key the lineitem scan holds.
  EXPECT_THAT(optimized_["q05"], HasSubstr("Join INNER keys=[l_suppkey = s_suppkey, c_nationkey = s_nationkey] "
                                           "publishes LIP filter #0 on [s_suppkey]"));
  EXPECT_THAT(optimized_["q05"], ContainsRegex("TableScan lineitem [^\n]* LIP filters: \\[l_suppkey IN "
                                               "bloom\\(s_suppkey\\)"));
  // Q7: partial push-down of the OR over n1 and n2 into each nation scan; the full OR stays on the join.
  EXPECT_THAT(optimized_["q07"], HasSubstr("TableScan nation AS n1 [n_nationkey, n_name] filter=((n_name = 'FRANCE') "
                                           "OR (n_name = 'GERMANY'))"));
  EXPECT_THAT(optimized_["q07"], HasSubstr("TableScan nation AS n2 [n_nationkey, n_name] filter=((n_name = "
                                           "'GERMANY') OR (n_name = 'FRANCE'))"));
  EXPECT_THAT(optimized_["q07"], HasSubstr("residual=(((n1.n_name = 'FRANCE') AND (n2.n_name = 'GERMANY')) OR"));
  // Q19: the join key common to all branches is factored out of the OR; the rest is pushed down partially.
  EXPECT_THAT(optimized_["q19"], HasSubstr("Join INNER keys=[l_partkey = p_partkey]"));
  EXPECT_THAT(optimized_["q19"],
              HasSubstr("filter=((l_shipmode IN ('AIR', 'AIR REG')) AND (l_shipinstruct = 'DELIVER IN PERSON') AND "
                        "(((l_quantity >= 1.00) AND (l_quantity <= 11.00)) OR"));
  EXPECT_THAT(optimized_["q19"],
              HasSubstr("TableScan part [p_partkey, p_brand, p_size, p_container] filter=((p_size >= 1) AND"));
  // Q17: the decorrelated aggregate meets the (selective) part filter before the big lineitem join.
  EXPECT_THAT(optimized_["q17"], HasSubstr("residual=(CAST(l_quantity AS DOUBLE) < 0.2 * avg(l_quantity))"));
  // Q17, Q20, Q2: the decorrelated aggregate first keeps only the keys of the selective part scan
  // (AggregateSemiJoinReduction); in Q20 the IN over part has moved down to partsupp (SemiJoinPushDown).
  EXPECT_THAT(optimized_["q17"], ContainsRegex("Aggregate groups=\\[l_partkey\\] aggregates=\\[avg\\(l_quantity\\)\\]\n"
                                               " *Join SEMI[^\n]* keys=\\[l_partkey = p_partkey\\]\n"
                                               " *TableScan lineitem"));
  EXPECT_THAT(optimized_["q20"], ContainsRegex("Aggregate groups=\\[l_partkey, l_suppkey\\].*\n"
                                               " *Join SEMI[^\n]* keys=\\[l_partkey = p_partkey\\]"));
  EXPECT_THAT(optimized_["q20"],
              ContainsRegex("Join SEMI[^\n]* keys=\\[ps_partkey = p_partkey\\]\n *TableScan partsupp"));
  EXPECT_THAT(
      optimized_["q02"],
      ContainsRegex("Aggregate groups=\\[ps_partkey\\].*\n(.*\n)* *Join SEMI[^\n]* keys=\\[ps_partkey = p_partkey\\]"));
  // Q9: the part filter meets partsupp through the implied ps_partkey = p_partkey (ps_partkey = l_partkey AND
  // p_partkey = l_partkey), and lineitem probes the small partsupp-supplier result on both keys.
  EXPECT_THAT(optimized_["q09"],
              ContainsRegex("Join (INNER|SEMI[^\n]*) keys=\\[ps_partkey = p_partkey\\]\n *TableScan partsupp"));
  EXPECT_THAT(optimized_["q09"],
              ContainsRegex("Join INNER keys=\\[l_suppkey = ps_suppkey, l_partkey = ps_partkey\\][^\n]*\n"
                            " *TableScan lineitem"));
  // Q13: orders are counted per customer key before the left join with customer (EagerAggregation); the
  // selective joins of SSB Q1.1 and TPC-H Q11 are not pre-aggregated.
  EXPECT_THAT(optimized_["q13"],
              ContainsRegex("Join LEFT OUTER keys=\\[c_custkey = o_custkey\\]\n *TableScan customer[^\n]*\n"
                            " *Aggregate groups=\\[o_custkey\\] aggregates=\\[count\\(o_orderkey\\)\\]"));
  EXPECT_THAT(optimized_["q11"], Not(HasSubstr("Aggregate groups=[ps_suppkey]")));
  // Q21: the semi/anti joins keep their residuals; filters reach the scans below them.
  EXPECT_THAT(optimized_["q21"], HasSubstr("TableScan nation [n_nationkey, n_name] filter=(n_name = 'SAUDI ARABIA')"));
  EXPECT_THAT(optimized_["q21"], HasSubstr("TableScan lineitem AS l3 [l_orderkey, l_suppkey, l_commitdate, "
                                           "l_receiptdate] filter=(l_receiptdate > l_commitdate)"));
}

TEST_F(BenchmarkPlansTest, SsbStarJoinsProbeTheFactTable) {
  BindAll("ssb");
  for (const auto& [query, plan] : optimized_) {
    EXPECT_THAT(plan, Not(HasSubstr("Join CROSS"))) << query;
    // Every dimension is joined by key: a hash join, or an exact-filter semi join for a dense dimension key
    // that contributes no column.
    EXPECT_EQ(Count(plan, "Join INNER keys=") + Count(plan, "Join SEMI exact filter"),
              Count(bound_[query], "TableScan") - 1)
        << query << "\n"
        << plan;
  }
  // Q4.1: part and supplier contribute no column: exact-filter semi joins right on the lineorder scan, which
  // also applies the LIP Bloom filter of the date join (the customer join probes the scan directly).
  EXPECT_THAT(optimized_["q4.1"],
              HasSubstr("Join SEMI exact filter [1, 200000] (from inner join) keys=[lo_partkey = p_partkey]"));
  EXPECT_THAT(optimized_["q4.1"],
              HasSubstr("Join SEMI exact filter [1, 2000] (from inner join) keys=[lo_suppkey = s_suppkey]"));
  EXPECT_THAT(optimized_["q4.1"], ContainsRegex("TableScan lineorder [^\n]* LIP filters: \\[lo_orderdate IN "
                                                "bloom\\(d_datekey\\)\\]"));
  EXPECT_THAT(optimized_["q4.1"], HasSubstr("Join INNER keys=[lo_orderdate = d_datekey] publishes LIP filter #0"));
  // Q4.3: the supplier and date joins publish filters for the scan below the part join.
  EXPECT_THAT(optimized_["q4.3"], ContainsRegex("TableScan lineorder [^\n]* LIP filters: \\[lo_orderdate IN "
                                                "bloom\\(d_datekey\\), lo_suppkey IN bloom\\(s_suppkey\\)\\]"));
  // d_datekey (yyyymmdd) is not dense: date stays a hash join.
  for (const auto& [query, plan] : optimized_)
    EXPECT_THAT(plan, Not(ContainsRegex("exact filter[^\n]*d_datekey"))) << query;
  // Q4.1: lineorder is probed by every dimension (it is the first scan, at the bottom left).
  const std::string& q41 = optimized_["q4.1"];
  EXPECT_LT(q41.find("TableScan lineorder"), q41.find("TableScan supplier"));
  EXPECT_LT(q41.find("TableScan lineorder"), q41.find("TableScan customer"));
  EXPECT_LT(q41.find("TableScan lineorder"), q41.find("TableScan part"));
  EXPECT_LT(q41.find("TableScan lineorder"), q41.find("TableScan date"));
  EXPECT_THAT(q41, HasSubstr("TableScan part [p_partkey, p_mfgr] filter=((p_mfgr = 'MFGR#1') OR (p_mfgr = 'MFGR#2'))"));
  EXPECT_THAT(optimized_["q1.1"],
              HasSubstr("TableScan lineorder [lo_orderdate, lo_quantity, lo_extendedprice, lo_discount] "
                        "filter=((lo_discount >= 1) AND (lo_discount <= 3) AND (lo_quantity < 25))"));
}

}  // namespace
}  // namespace tessera::optimizer
