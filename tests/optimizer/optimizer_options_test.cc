// SET disabled_rules parsing, and RunRules honouring disabled rules and reporting per-rule times.

#include "optimizer/optimizer_options.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optimizer/rules/rule_list.h"
#include "tests/optimizer/optimizer_catalog_for_test.h"

namespace tessera::optimizer {
namespace {

using ::testing::HasSubstr;

TEST(OptimizerOptionsTest, RuleSettingNamesAreSnakeCase) {
  EXPECT_EQ(RuleSettingName("PredicatePushDown"), "predicate_push_down");
  EXPECT_EQ(RuleSettingName("JoinOrdering"), "join_ordering");
  for (const auto& rule : RuleList()) EXPECT_TRUE(ParseDisabledRules(RuleSettingName(rule->name())).ok());
}

TEST(OptimizerOptionsTest, ParsesListsCaseInsensitivelyIgnoringSpaces) {
  absl::StatusOr<OptimizerOptions> options = ParseDisabledRules(" Join_Ordering , column_pruning");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->disabled_rules, (std::set<std::string>{"join_ordering", "column_pruning"}));
  options = ParseDisabledRules("");
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->disabled_rules.empty());
}

TEST(OptimizerOptionsTest, UnknownOrEmptyNamesListTheValidOnes) {
  absl::StatusOr<OptimizerOptions> options = ParseDisabledRules("join_ordering,no_such_rule");
  ASSERT_FALSE(options.ok());
  EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(options.status().message(), HasSubstr("unknown optimizer rule 'no_such_rule'"));
  // Every rule of RuleList(), in its order.
  std::string valid;
  for (const auto& rule : RuleList()) valid += (valid.empty() ? "" : ", ") + RuleSettingName(rule->name());
  EXPECT_THAT(options.status().message(), HasSubstr("valid rules: " + valid));
  EXPECT_THAT(valid, HasSubstr("predicate_push_down, constant_folding, join_ordering, "));
  EXPECT_FALSE(ParseDisabledRules("join_ordering,,column_pruning").ok());
}

TEST(OptimizerOptionsTest, RunRulesSkipsDisabledRulesAndReportsEveryRule) {
  testing::TestCatalog catalog("tpch", /*statistics=*/true);
  const std::string sql = "SELECT n_name FROM region, nation WHERE n_regionkey = r_regionkey AND r_name = 'ASIA'";
  absl::StatusOr<std::unique_ptr<LogicalOperator>> bound = testing::Plan(catalog.catalog(), sql, /*optimize=*/false);
  ASSERT_TRUE(bound.ok()) << bound.status();
  const std::string as_bound = (*bound)->ToString();

  OptimizerOptions all_disabled;
  for (const auto& rule : RuleList()) all_disabled.disabled_rules.insert(RuleSettingName(rule->name()));
  OptimizerReport report;
  LogicalOperatorPtr untouched = *RunRules((*bound)->Clone(), all_disabled, &report);
  EXPECT_EQ(untouched->ToString(), as_bound);
  ASSERT_EQ(report.rules.size(), RuleList().size());
  for (const RuleRun& run : report.rules) {
    EXPECT_TRUE(run.disabled);
    EXPECT_EQ(run.elapsed_ns, 0);
  }

  // Without push-down the filter stays above the cross join; with it, the equality becomes a join key.
  OptimizerOptions no_push_down{{"predicate_push_down"}};
  OptimizerReport partial;
  const std::string without = (*RunRules((*bound)->Clone(), no_push_down, &partial))->ToString();
  const std::string with = (*RunRules((*bound)->Clone()))->ToString();
  EXPECT_THAT(without, HasSubstr("Join CROSS"));
  EXPECT_THAT(with, ::testing::Not(HasSubstr("Join CROSS")));
  ASSERT_EQ(partial.rules[0].name, "predicate_push_down");
  EXPECT_TRUE(partial.rules[0].disabled);
  EXPECT_FALSE(partial.rules[1].disabled);
}

// The Filter in `node`'s subtree, or null.
Filter* FindFilter(LogicalOperator* node) {
  if (node->kind() == LogicalOperatorKind::kFilter) return static_cast<Filter*>(node);
  for (auto& child : node->children) {
    if (Filter* found = FindFilter(child.get())) return found;
  }
  return nullptr;
}

TEST(OptimizerOptionsTest, ValidatePlansNamesWhereThePlanBroke) {
  testing::TestCatalog catalog("tpch", /*statistics=*/true);
  absl::StatusOr<std::unique_ptr<LogicalOperator>> bound =
      testing::Plan(catalog.catalog(), "SELECT n_name FROM nation WHERE n_nationkey > 3", /*optimize=*/false);
  ASSERT_TRUE(bound.ok()) << bound.status();
  OptimizerOptions validating;
  validating.validate_plans = true;
  EXPECT_TRUE(RunRules((*bound)->Clone(), validating).ok());

  // A predicate over a column its input does not have: refused as bound, before any rule runs.
  LogicalOperatorPtr broken = (*bound)->Clone();
  Filter* filter = FindFilter(broken.get());
  ASSERT_NE(filter, nullptr) << broken->ToString();
  filter->predicate->children[0]->column_index = 99;
  absl::StatusOr<LogicalOperatorPtr> refused = RunRules(broken->Clone(), validating);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("the plan is invalid as bound"));

  // Without validation the rules run on it (what a Release build does unless SET validate_plans = on).
  OptimizerOptions unchecked;
  unchecked.validate_plans = false;
  EXPECT_TRUE(RunRules(std::move(broken), unchecked).ok());
}

}  // namespace
}  // namespace tessera::optimizer
