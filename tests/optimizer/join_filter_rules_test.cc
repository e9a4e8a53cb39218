// The ExactFilterSemiJoin and LipFilters rules (optimizer/rules/): when joins get exact filters (dense unique
// keys from statistics, build side not read), where the exact-filter joins end up, which scans get LIP
// filters, and that nothing changes without statistics.

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

class JoinFilterRulesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tpch_ = new testing::TestCatalog("tpch", /*statistics=*/true);
    ssb_ = new testing::TestCatalog("ssb", /*statistics=*/true);
    ssb_without_statistics_ = new testing::TestCatalog("ssb", /*statistics=*/false);
  }
  static void TearDownTestSuite() {
    delete tpch_;
    delete ssb_;
    delete ssb_without_statistics_;
  }

  // The optimized plan's EXPLAIN text; the plan must validate.
  static std::string Optimized(testing::TestCatalog* catalog, const std::string& sql) {
    auto plan = testing::Plan(catalog->catalog(), sql, /*optimize=*/true);
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    if (!plan.ok()) return "";
    absl::Status valid = ValidatePlan(**plan);
    EXPECT_TRUE(valid.ok()) << valid.message() << "\n" << (*plan)->ToString();
    return (*plan)->ToString();
  }

  static testing::TestCatalog* tpch_;
  static testing::TestCatalog* ssb_;
  static testing::TestCatalog* ssb_without_statistics_;
};

testing::TestCatalog* JoinFilterRulesTest::tpch_ = nullptr;
testing::TestCatalog* JoinFilterRulesTest::ssb_ = nullptr;
testing::TestCatalog* JoinFilterRulesTest::ssb_without_statistics_ = nullptr;

TEST_F(JoinFilterRulesTest, InnerJoinOnADenseUniqueKeyWhoseBuildSideIsNotReadBecomesASemiJoin) {
  const std::string plan = Optimized(ssb_,
                                     "SELECT sum(lo_revenue) FROM lineorder, part WHERE lo_partkey = p_partkey "
                                     "AND p_mfgr = 'MFGR#1'");
  EXPECT_THAT(plan, HasSubstr("Join SEMI exact filter [1, 200000] (from inner join) keys=[lo_partkey = p_partkey]"));
  EXPECT_THAT(plan, Not(HasSubstr("Join INNER")));
  // The build columns are gone again (ColumnPruning after the rewrite): no NULL placeholders are left.
  EXPECT_THAT(plan, Not(HasSubstr("NULL")));
}

TEST_F(JoinFilterRulesTest, BuildSideReadAboveTheJoinKeepsTheHashJoin) {
  const std::string plan = Optimized(ssb_,
                                     "SELECT p_brand1, sum(lo_revenue) FROM lineorder, part "
                                     "WHERE lo_partkey = p_partkey GROUP BY p_brand1");
  EXPECT_THAT(plan, HasSubstr("Join INNER keys=[lo_partkey = p_partkey]"));
  EXPECT_THAT(plan, Not(HasSubstr("exact filter")));
}

TEST_F(JoinFilterRulesTest, SparseKeysKeepTheHashJoin) {
  // d_datekey runs from 19920101 to 19981230 over 2,556 rows.
  const std::string plan = Optimized(ssb_,
                                     "SELECT sum(lo_revenue) FROM lineorder, date WHERE lo_orderdate = "
                                     "d_datekey AND d_year = 1993");
  EXPECT_THAT(plan, HasSubstr("Join INNER keys=[lo_orderdate = d_datekey]"));
  EXPECT_THAT(plan, Not(HasSubstr("exact filter")));
}

TEST_F(JoinFilterRulesTest, KeysThatAreNotUniqueKeepTheInnerJoin) {
  // The filtered lineitem is the smaller input, so it is the build side; l_orderkey has 1.5M distinct values
  // over 6M rows: an inner join on it repeats orders rows, a semi join would not.
  const std::string plan = Optimized(tpch_,
                                     "SELECT count(*) FROM orders, lineitem WHERE o_orderkey = l_orderkey "
                                     "AND l_shipdate = DATE '1995-01-01'");
  EXPECT_THAT(plan, HasSubstr("Join INNER keys=[o_orderkey = l_orderkey]"));
  EXPECT_THAT(plan, Not(HasSubstr("exact filter")));
  // The other way round o_orderkey is unique: the join becomes a semi join; count(*) keeps the probe key.
  const std::string semi = Optimized(tpch_,
                                     "SELECT count(*) FROM orders, lineitem WHERE o_orderkey = l_orderkey "
                                     "AND o_orderdate = DATE '1995-01-01'");
  EXPECT_THAT(semi, HasSubstr("Join SEMI exact filter [1, 6000000] (from inner join) keys=[l_orderkey = o_orderkey]"));
  EXPECT_THAT(semi, Not(HasSubstr("NULL")));
}

TEST_F(JoinFilterRulesTest, SemiAndAntiJoinsNeedNoUniqueKey) {
  const std::string semi = Optimized(tpch_,
                                     "SELECT count(*) FROM orders WHERE EXISTS (SELECT * FROM lineitem WHERE "
                                     "l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)");
  EXPECT_THAT(semi, HasSubstr("Join SEMI exact filter [1, 6000000] keys=[o_orderkey = l_orderkey]"));
  const std::string anti = Optimized(tpch_,
                                     "SELECT count(*) FROM customer WHERE NOT EXISTS (SELECT * FROM orders WHERE "
                                     "o_custkey = c_custkey)");
  EXPECT_THAT(anti, HasSubstr("Join ANTI exact filter [1, 149999] keys=[c_custkey = o_custkey]"));
}

TEST_F(JoinFilterRulesTest, ResidualsAndCompositeKeysKeepTheHashJoin) {
  const std::string plan =
      Optimized(tpch_,
                "SELECT count(*) FROM orders WHERE EXISTS (SELECT * FROM lineitem WHERE l_orderkey = "
                "o_orderkey AND l_suppkey <> o_custkey)");
  EXPECT_THAT(plan, Not(HasSubstr("exact filter")));
}

TEST_F(JoinFilterRulesTest, ExactFilterJoinsMoveDownOntoTheScanTheyFilter) {
  const std::string plan = Optimized(ssb_,
                                     "SELECT d_year, sum(lo_revenue) FROM lineorder, date, supplier "
                                     "WHERE lo_orderdate = d_datekey AND lo_suppkey = s_suppkey AND "
                                     "s_region = 'ASIA' GROUP BY d_year");
  EXPECT_THAT(plan,
              ContainsRegex("Join SEMI exact filter [^\n]*keys=\\[lo_suppkey = s_suppkey\\]\n *TableScan lineorder"));
}

TEST_F(JoinFilterRulesTest, WithoutStatisticsNoJoinGetsAnExactFilter) {
  const std::string plan =
      Optimized(ssb_without_statistics_,
                "SELECT d_year, c_nation, sum(lo_revenue - lo_supplycost) AS profit FROM date, customer, supplier, "
                "part, lineorder WHERE lo_custkey = c_custkey AND lo_suppkey = s_suppkey AND lo_partkey = p_partkey "
                "AND lo_orderdate = d_datekey AND c_region = 'AMERICA' AND s_region = 'AMERICA' AND (p_mfgr = "
                "'MFGR#1' OR p_mfgr = 'MFGR#2') GROUP BY d_year, c_nation ORDER BY d_year, c_nation");
  EXPECT_THAT(plan, HasSubstr("Join INNER keys=[p_partkey = lo_partkey]"));
  EXPECT_THAT(plan, Not(HasSubstr("exact filter")));
}

TEST_F(JoinFilterRulesTest, JoinsAboveTheScansDirectProberPublishLipFilters) {
  const std::string star =
      Optimized(ssb_,
                "SELECT d_year, p_brand1, s_city, sum(lo_revenue) FROM lineorder, date, part, supplier "
                "WHERE lo_orderdate = d_datekey AND lo_partkey = p_partkey AND lo_suppkey = s_suppkey AND "
                "p_category = 'MFGR#12' AND s_nation = 'PERU' GROUP BY d_year, p_brand1, s_city");
  // Three hash joins probe with lineorder rows: the lowest one probes the scan itself and publishes nothing,
  // the two above it publish Bloom filters that the scan applies.
  EXPECT_THAT(star, ContainsRegex("TableScan lineorder [^\n]*LIP filters: \\[lo_[a-z]+ IN bloom\\([dps]_[a-z]+\\), "
                                  "lo_[a-z]+ IN bloom\\([dps]_[a-z]+\\)\\]"));
  EXPECT_THAT(star, HasSubstr("publishes LIP filter #0"));
  EXPECT_THAT(star, HasSubstr("publishes LIP filter #1"));
  EXPECT_THAT(star, Not(HasSubstr("publishes LIP filter #2")));
  EXPECT_THAT(star, ContainsRegex("Join INNER keys=\\[[a-z_]+ = [a-z_]+\\]\n *TableScan lineorder"));

  // One hash join and one exact filter: the exact filter is applied at the scan anyway, and the hash join is
  // the direct prober.
  const std::string two = Optimized(ssb_,
                                    "SELECT d_year, sum(lo_revenue) FROM lineorder, date, supplier WHERE "
                                    "lo_orderdate = d_datekey AND lo_suppkey = s_suppkey AND s_region = "
                                    "'ASIA' GROUP BY d_year");
  EXPECT_THAT(two, HasSubstr("exact filter"));
  EXPECT_THAT(two, Not(HasSubstr("LIP")));

  const std::string single = Optimized(ssb_,
                                       "SELECT d_year, sum(lo_revenue) FROM lineorder, date WHERE "
                                       "lo_orderdate = d_datekey GROUP BY d_year");
  EXPECT_THAT(single, Not(HasSubstr("LIP")));
}

TEST_F(JoinFilterRulesTest, ASelectiveOnlyJoinOfAScanPublishesALipFilter) {
  // TPC-H Q17's outer join: lineitem probes the parts of one brand and container (about 1 in 1000). It is the
  // only join on the lineitem scan and keeps a tiny fraction of its rows, so it publishes a Bloom filter.
  const std::string selective =
      Optimized(tpch_,
                "SELECT sum(l_extendedprice) FROM lineitem, part WHERE p_partkey = l_partkey AND "
                "p_brand = 'Brand#23' AND p_container = 'MED BOX' AND l_quantity < p_size");
  EXPECT_THAT(selective, ContainsRegex("Join INNER keys=\\[l_partkey = p_partkey\\] residual=[^\n]* publishes LIP "
                                       "filter #0\n *TableScan lineitem [^\n]*LIP filters: "
                                       "\\[l_partkey IN bloom\\(p_partkey\\)\\]"));

  // Most lineitem rows find their order: no filter.
  const std::string unselective = Optimized(tpch_,
                                            "SELECT sum(l_extendedprice) FROM lineitem, orders WHERE "
                                            "l_orderkey = o_orderkey AND o_orderdate < DATE '1998-01-01'");
  EXPECT_THAT(unselective, Not(HasSubstr("LIP")));

  // A second join on the scan (here an exact filter) makes it no longer the only one.
  const std::string second =
      Optimized(tpch_,
                "SELECT sum(l_extendedprice) FROM lineitem, part WHERE p_partkey = l_partkey AND p_brand = "
                "'Brand#23' AND p_container = 'MED BOX' AND l_quantity < p_size AND l_suppkey IN (SELECT s_suppkey "
                "FROM supplier WHERE s_nationkey = 3)");
  EXPECT_THAT(second, HasSubstr("exact filter"));
  EXPECT_THAT(second, Not(HasSubstr("LIP")));
}

TEST_F(JoinFilterRulesTest, ASelectiveDirectProberOnTwoKeysPublishesALipFilterBesideOtherJoins) {
  // lineitem probes the partsupp rows of one brand and container's parts on (partkey, suppkey), and another join
  // (the suppliers of one nation, an exact filter) probes the scan too. The two-key join cannot be a direct
  // look-up and keeps few rows, so it publishes a Bloom filter over both keys.
  const std::string selective =
      Optimized(tpch_,
                "SELECT sum(l_extendedprice) FROM lineitem, partsupp, part WHERE l_partkey = ps_partkey AND "
                "l_suppkey = ps_suppkey AND ps_partkey = p_partkey AND p_brand = 'Brand#23' AND p_container = "
                "'MED BOX' AND l_quantity < ps_availqty AND l_suppkey IN (SELECT s_suppkey FROM supplier WHERE "
                "s_nationkey = 3)");
  EXPECT_THAT(selective, HasSubstr("exact filter"));
  EXPECT_THAT(selective, ContainsRegex("Join INNER keys=\\[l_partkey = ps_partkey, l_suppkey = ps_suppkey\\] "
                                       "[^\n]* publishes LIP filter #0\n"));
  EXPECT_THAT(selective, HasSubstr("TableScan lineitem [l_partkey, l_suppkey, l_quantity, l_extendedprice] LIP "
                                   "filters: [l_partkey, l_suppkey IN bloom(ps_partkey, ps_suppkey)]"));

  // Half a year of lines against a tenth of partsupp: about a fifth of the lines find their keys, too many for a
  // filter (the residual, which keeps fewer, is not what the filter tests).
  const std::string unselective =
      Optimized(tpch_,
                "SELECT sum(l_extendedprice) FROM lineitem, partsupp WHERE l_partkey = ps_partkey AND l_suppkey = "
                "ps_suppkey AND ps_availqty < 1000 AND l_shipdate >= DATE '1998-06-01' AND l_quantity < ps_availqty "
                "AND l_suppkey IN (SELECT s_suppkey FROM supplier WHERE s_nationkey = 3)");
  EXPECT_THAT(unselective, ContainsRegex("Join INNER keys=\\[l_partkey = ps_partkey, l_suppkey = ps_suppkey\\]"));
  EXPECT_THAT(unselective, Not(HasSubstr("LIP")));
}

TEST_F(JoinFilterRulesTest, OuterAndAntiJoinsPublishNoLipFilter) {
  const std::string plan = Optimized(ssb_,
                                     "SELECT count(*) FROM lineorder LEFT JOIN date ON lo_orderdate = "
                                     "d_datekey LEFT JOIN customer ON lo_custkey = c_custkey");
  EXPECT_THAT(plan, Not(HasSubstr("LIP")));
}

TEST_F(JoinFilterRulesTest, ExactFilterJoinsGoIntoEveryBranchOfAUnion) {
  // TPC-DS Q05's shape: the union's rows are filtered in each branch, each branch with its own copy of the
  // build side, instead of being written to the union's blocks first.
  const std::string plan =
      Optimized(ssb_,
                "SELECT sum(x) FROM (SELECT lo_partkey AS k, lo_revenue AS x FROM lineorder UNION ALL "
                "SELECT lo_partkey, lo_supplycost FROM lineorder) u, part WHERE k = p_partkey AND p_mfgr = "
                "'MFGR#1'");
  EXPECT_THAT(plan, ContainsRegex("SetOperation UNION ALL\n(.*\n)*.*Join SEMI exact filter \\[1, 200000\\] \\(from "
                                  "inner join\\) keys=\\[lo_partkey = p_partkey\\]\n *TableScan lineorder (.*\n)*.*"
                                  "Join SEMI exact filter \\[1, 200000\\] \\(from inner join\\) keys=\\[lo_partkey = "
                                  "p_partkey\\]\n *TableScan lineorder"));
  EXPECT_THAT(plan, Not(ContainsRegex("Join [^\n]*\n *SetOperation")));

  // A build side that scans more rows than the union yields stays above the union.
  const std::string large_build =
      Optimized(ssb_,
                "SELECT count(*) FROM (SELECT p_partkey AS k FROM part WHERE p_size = 1 UNION ALL SELECT "
                "p_partkey FROM part WHERE p_size = 2) u WHERE k IN (SELECT lo_partkey FROM lineorder)");
  EXPECT_THAT(large_build, ContainsRegex("Join SEMI[^\n]*\n *SetOperation"));
}

TEST_F(JoinFilterRulesTest, AJoinProbingThroughAUnionPublishesALipFilterForEveryBranch) {
  // d_datekey is sparse (no exact filter); one year of dates keeps about a seventh of the rows.
  const std::string union_all =
      "(SELECT lo_orderdate AS d, lo_revenue AS x FROM lineorder UNION ALL SELECT "
      "lo_orderdate, lo_supplycost FROM lineorder WHERE lo_quantity < 10) u, date ";
  const std::string plan = Optimized(ssb_, "SELECT d_year, sum(x) FROM " + union_all +
                                               "WHERE d = d_datekey AND d_year = 1993 GROUP BY "
                                               "d_year");
  EXPECT_THAT(plan, HasSubstr("publishes LIP filter #0"));
  EXPECT_THAT(plan, ContainsRegex("TableScan lineorder [^\n]*LIP filters: \\[lo_orderdate IN bloom\\(d_datekey\\)\\]"
                                  "\n(.*\n)*.*TableScan lineorder [^\n]*LIP filters: \\[lo_orderdate IN "
                                  "bloom\\(d_datekey\\)\\]"));

  // Every row finds its date: no filter.
  const std::string unselective =
      Optimized(ssb_, "SELECT d_year, sum(x) FROM " + union_all + "WHERE d = d_datekey GROUP BY d_year");
  EXPECT_THAT(unselective, Not(HasSubstr("LIP")));
}

TEST_F(JoinFilterRulesTest, ASelectiveJoinAboveAnotherHashJoinPublishesALipFilter) {
  // TPC-DS Q78's anti-join idiom: lineitem rows without a partsupp row, of the orders of one day. The orders
  // join probes after the left join's hash probe, so its filter spares that probe for rows of other days.
  const std::string plan =
      Optimized(tpch_,
                "SELECT o_orderpriority, count(*) FROM lineitem LEFT JOIN partsupp ON l_partkey = ps_partkey AND "
                "l_suppkey = ps_suppkey, orders WHERE ps_partkey IS NULL AND l_orderkey = o_orderkey AND o_orderdate "
                "= DATE '1995-01-01' GROUP BY o_orderpriority");
  EXPECT_THAT(plan, ContainsRegex("Join LEFT OUTER [^\n]*\n *TableScan lineitem [^\n]*LIP filters: \\[l_orderkey "
                                  "IN bloom\\(o_orderkey\\)\\]"));

  // All orders: no filter on lineitem.
  const std::string unselective =
      Optimized(tpch_,
                "SELECT o_orderpriority, count(*) FROM lineitem LEFT JOIN partsupp ON l_partkey = ps_partkey AND "
                "l_suppkey = ps_suppkey, orders WHERE ps_partkey IS NULL AND l_orderkey = o_orderkey GROUP BY "
                "o_orderpriority");
  EXPECT_THAT(unselective, Not(ContainsRegex("TableScan lineitem [^\n]*LIP")));
}

}  // namespace
}  // namespace tessera::optimizer
