// The rules that lower and decide what the plan builder used to do itself: SetOperationLowering, BuildSideSwap,
// AggregateSharing, on queries over the TPC-H schema with SF1 statistics.

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimizer/plan_validation.h"
#include "optimizer/rules/aggregate_sharing.h"
#include "optimizer/rules/build_side_swap.h"
#include "optimizer/rules/rule_list.h"
#include "optimizer/rules/set_operation_lowering.h"
#include "tests/optimizer/optimizer_catalog_for_test.h"

namespace tessera::optimizer {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ExecutionChoiceRulesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { catalog_ = new testing::TestCatalog("tpch", /*statistics=*/true); }
  static void TearDownTestSuite() {
    delete catalog_;
    catalog_ = nullptr;
  }

  // `sql` through every rule of the list but those named (settings names), validated.
  static LogicalOperatorPtr Planned(const std::string& sql, std::set<std::string> disabled = {}) {
    absl::StatusOr<LogicalOperatorPtr> bound = testing::Plan(catalog_->catalog(), sql);
    EXPECT_TRUE(bound.ok()) << bound.status().message();
    if (!bound.ok()) return nullptr;
    OptimizerOptions options;
    options.disabled_rules = std::move(disabled);
    options.validate_plans = true;
    absl::StatusOr<LogicalOperatorPtr> plan = RunRules(*std::move(bound), options);
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    return plan.ok() ? *std::move(plan) : nullptr;
  }

  static void CollectJoins(const LogicalOperator& node, std::vector<const Join*>* joins) {
    if (node.kind() == LogicalOperatorKind::kJoin) joins->push_back(&node.As<Join>());
    for (const auto& child : node.children) CollectJoins(*child, joins);
  }
  static void CollectAggregates(const LogicalOperator& node, std::vector<const Aggregate*>* aggregates) {
    if (node.kind() == LogicalOperatorKind::kAggregate) aggregates->push_back(&node.As<Aggregate>());
    for (const auto& child : node.children) CollectAggregates(*child, aggregates);
  }
  // Aggregate::shared_result of each aggregate in `plan`, in preorder.
  static std::vector<int> SharedResults(const LogicalOperator& plan) {
    std::vector<const Aggregate*> aggregates;
    CollectAggregates(plan, &aggregates);
    std::vector<int> shared;
    for (const Aggregate* aggregate : aggregates) shared.push_back(aggregate->shared_result);
    return shared;
  }

  static testing::TestCatalog* catalog_;
};

testing::TestCatalog* ExecutionChoiceRulesTest::catalog_ = nullptr;

TEST_F(ExecutionChoiceRulesTest, IntersectAndExceptBecomeAnAggregationOverUnionAll) {
  for (const char* operation : {"INTERSECT", "EXCEPT"}) {
    LogicalOperatorPtr plan = Planned(absl::StrCat("SELECT n_regionkey FROM nation ", operation,
                                                   " SELECT r_regionkey FROM region WHERE r_name <> 'ASIA'"));
    ASSERT_NE(plan, nullptr);
    const std::string text = plan->ToString();
    EXPECT_THAT(text, Not(HasSubstr(operation))) << text;
    EXPECT_THAT(text, HasSubstr("SetOperation UNION ALL")) << text;
    EXPECT_THAT(text, HasSubstr("aggregates=[max(in_left), max(in_right)]")) << text;
    EXPECT_THAT(text, HasSubstr(std::string("(in_right = ") + (operation[0] == 'I' ? "1" : "0") + ")")) << text;
    EXPECT_EQ(plan->OutputNames(), std::vector<std::string>{"n_regionkey"});
  }
}

TEST_F(ExecutionChoiceRulesTest, SetOperationsThatAreNotLoweredStay) {
  // ALL variants are left to execution (which rejects them), and so is everything with the rule off.
  EXPECT_THAT(Planned("SELECT n_regionkey FROM nation INTERSECT ALL SELECT r_regionkey FROM region")->ToString(),
              HasSubstr("SetOperation INTERSECT ALL"));
  EXPECT_THAT(
      Planned("SELECT n_regionkey FROM nation EXCEPT SELECT r_regionkey FROM region", {"set_operation_lowering"})
          ->ToString(),
      HasSubstr("SetOperation EXCEPT"));
}

TEST_F(ExecutionChoiceRulesTest, SemiAndLeftJoinsBuildOnTheirSmallPreservedSide) {
  // 25 nations semi-joined with 10 K suppliers: the nations are the hash table, suppliers stream through. (The
  // residual keeps the join from becoming an exact filter, which has no hash table to place.)
  const std::string sql =
      "SELECT n_name FROM nation WHERE EXISTS (SELECT * FROM supplier WHERE s_nationkey = n_nationkey AND s_acctbal "
      "> n_regionkey)";
  LogicalOperatorPtr plan = Planned(sql);
  ASSERT_NE(plan, nullptr);
  std::vector<const Join*> joins;
  CollectJoins(*plan, &joins);
  ASSERT_EQ(joins.size(), 1u) << plan->ToString();
  EXPECT_EQ(joins[0]->join_type, JoinType::kSemi);
  EXPECT_TRUE(joins[0]->build_left);
  // Every nation has suppliers: a Bloom filter of the build keys would pass every probe row.
  EXPECT_FALSE(joins[0]->filter_probe_by_build_keys);

  joins.clear();
  plan = Planned(sql, {"build_side_swap"});
  CollectJoins(*plan, &joins);
  ASSERT_EQ(joins.size(), 1u);
  EXPECT_FALSE(joins[0]->build_left);
}

TEST_F(ExecutionChoiceRulesTest, SwappedJoinFiltersItsProbeWhenFewProbeKeysMatch) {
  // 10 orders of one day against 6 M lineitems: at most 10 of the 1.5 M order keys can match.
  LogicalOperatorPtr plan = Planned(
      "SELECT o_orderkey FROM orders WHERE o_orderdate = DATE '1995-03-15' AND o_totalprice > 500000 AND EXISTS "
      "(SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND l_suppkey <> o_custkey)");
  ASSERT_NE(plan, nullptr);
  std::vector<const Join*> joins;
  CollectJoins(*plan, &joins);
  ASSERT_EQ(joins.size(), 1u) << plan->ToString();
  EXPECT_TRUE(joins[0]->build_left) << plan->ToString();
  EXPECT_TRUE(joins[0]->filter_probe_by_build_keys) << plan->ToString();
}

TEST_F(ExecutionChoiceRulesTest, JoinsThatMustBuildOnTheRightStay) {
  // NOT IN is null-aware: the right side's NULLs decide; a scalar subquery's join counts its right rows.
  for (const char* sql : {"SELECT n_name FROM nation WHERE n_nationkey NOT IN (SELECT s_nationkey FROM supplier)",
                          "SELECT n_name, (SELECT r_name FROM region WHERE r_regionkey = 1) FROM nation"}) {
    LogicalOperatorPtr plan = Planned(sql);
    ASSERT_NE(plan, nullptr);
    std::vector<const Join*> joins;
    CollectJoins(*plan, &joins);
    for (const Join* join : joins) EXPECT_FALSE(join->build_left) << sql << "\n" << plan->ToString();
  }
}

TEST_F(ExecutionChoiceRulesTest, ValidationRejectsAWrongBuildSide) {
  LogicalOperatorPtr plan = Planned("SELECT n_name, r_name FROM nation, region WHERE n_regionkey = r_regionkey");
  ASSERT_NE(plan, nullptr);
  std::vector<const Join*> joins;
  CollectJoins(*plan, &joins);
  ASSERT_FALSE(joins.empty());
  const_cast<Join*>(joins[0])->build_left = true;  // an inner join has no left-built form
  EXPECT_THAT(ValidatePlan(*plan).message(), HasSubstr("built on its left side"));
}

TEST_F(ExecutionChoiceRulesTest, IdenticalAggregatesShareAResult) {
  // TPC-H Q15's shape: the CTE is bound at each use, so its aggregate appears twice.
  const std::string sql =
      "WITH revenue AS (SELECT l_suppkey AS supplier_no, sum(l_extendedprice) AS total FROM lineitem WHERE "
      "l_shipdate >= DATE '1996-01-01' GROUP BY l_suppkey) SELECT s_suppkey, total FROM supplier, revenue WHERE "
      "s_suppkey = supplier_no AND total = (SELECT max(total) FROM revenue)";
  LogicalOperatorPtr plan = Planned(sql);
  ASSERT_NE(plan, nullptr);
  std::vector<const Aggregate*> aggregates;
  CollectAggregates(*plan, &aggregates);
  std::vector<int> shared;
  for (const Aggregate* aggregate : aggregates) {
    if (aggregate->shared_result >= 0) shared.push_back(aggregate->shared_result);
  }
  ASSERT_EQ(shared.size(), 2u) << plan->ToString();
  EXPECT_EQ(shared[0], shared[1]);
  // max(total) is an aggregate of its own, computed once.
  EXPECT_EQ(aggregates.size(), 3u);

  aggregates.clear();
  plan = Planned(sql, {"aggregate_sharing"});
  CollectAggregates(*plan, &aggregates);
  for (const Aggregate* aggregate : aggregates) EXPECT_EQ(aggregate->shared_result, -1);
}

TEST_F(ExecutionChoiceRulesTest, AggregatesThatDifferAreNotShared) {
  LogicalOperatorPtr plan = Planned(
      "SELECT * FROM (SELECT l_suppkey, sum(l_quantity) AS q FROM lineitem GROUP BY l_suppkey) a JOIN (SELECT "
      "l_suppkey AS k, sum(l_quantity) AS q FROM lineitem WHERE l_quantity > 10 GROUP BY l_suppkey) b ON "
      "a.l_suppkey = b.k");
  ASSERT_NE(plan, nullptr);
  std::vector<const Aggregate*> aggregates;
  CollectAggregates(*plan, &aggregates);
  ASSERT_EQ(aggregates.size(), 2u);
  for (const Aggregate* aggregate : aggregates) EXPECT_EQ(aggregate->shared_result, -1) << plan->ToString();
}

TEST_F(ExecutionChoiceRulesTest, CopiesThatDifferInAGroupKeyFilterShareOneAggregate) {
  // TPC-DS Q04's shape over lineitem: the CTE read once per return flag, the flags pushed down to the scan.
  const std::string sql =
      "WITH t AS (SELECT l_returnflag AS flag, l_suppkey, sum(l_quantity) AS q FROM lineitem GROUP BY "
      "l_returnflag, l_suppkey) SELECT a.l_suppkey, a.q, b.q FROM t a, t b WHERE a.l_suppkey = b.l_suppkey AND "
      "a.flag = 'A' AND b.flag = 'R' AND a.q > 5";
  LogicalOperatorPtr plan = Planned(sql);
  ASSERT_NE(plan, nullptr);
  const std::string text = plan->ToString();
  const std::vector<int> shared = SharedResults(*plan);
  ASSERT_EQ(shared.size(), 2u);
  EXPECT_GE(shared[0], 0) << text;
  EXPECT_EQ(shared[0], shared[1]);
  EXPECT_THAT(text, HasSubstr("filter=(l_returnflag IN ('A', 'R'))")) << text;
  EXPECT_THAT(text, HasSubstr("Filter ((l_returnflag = 'A') AND (sum(l_quantity) > 5.00))\n")) << text;
  EXPECT_THAT(text, HasSubstr("Filter (l_returnflag = 'R')\n")) << text;

  // The ranks of a cluster run the rule again on their fragment: nothing more changes.
  plan = AggregateSharing().Apply(std::move(plan));
  EXPECT_EQ(plan->ToString(), text);
  EXPECT_TRUE(ValidatePlan(*plan).ok());

  // Switched off: two aggregations, each with its own flag.
  plan = Planned(sql, {"aggregate_sharing"});
  EXPECT_THAT(plan->ToString(), HasSubstr("filter=(l_returnflag = 'A')"));
  EXPECT_THAT(plan->ToString(), Not(HasSubstr(" IN (")));
}

TEST_F(ExecutionChoiceRulesTest, KeyFiltersThatDoNotCoverEveryInputStayApart) {
  // One UNION branch filtered on the key, the other not: the branch's conjunct is no filter on the groups.
  LogicalOperatorPtr plan = Planned(
      "WITH u AS (SELECT l_returnflag AS flag, l_quantity AS q FROM lineitem WHERE l_returnflag = 'A' UNION ALL "
      "SELECT l_linestatus, l_quantity FROM lineitem), t AS (SELECT flag, sum(q) AS q FROM u GROUP BY flag) "
      "SELECT a.q, b.q FROM t a, t b WHERE a.flag = 'N' AND b.flag = 'O'");
  ASSERT_NE(plan, nullptr);
  EXPECT_EQ(SharedResults(*plan), (std::vector<int>{-1, -1})) << plan->ToString();
}

}  // namespace
}  // namespace tessera::optimizer
