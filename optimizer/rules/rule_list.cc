#include "optimizer/rules/rule_list.h"

#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "optimizer/plan_validation.h"
#include "optimizer/rules/aggregate_semi_join_reduction.h"
#include "optimizer/rules/aggregate_sharing.h"
#include "optimizer/rules/build_side_swap.h"
#include "optimizer/rules/column_pruning.h"
#include "optimizer/rules/constant_folding_rule.h"
#include "optimizer/rules/distinct_aggregate_split.h"
#include "optimizer/rules/eager_aggregation.h"
#include "optimizer/rules/exact_filter_semi_join.h"
#include "optimizer/rules/implied_lip_filters.h"
#include "optimizer/rules/inner_to_semi_join.h"
#include "optimizer/rules/join_ordering.h"
#include "optimizer/rules/left_join_match_reduction.h"
#include "optimizer/rules/lip_filters.h"
#include "optimizer/rules/predicate_push_down.h"
#include "optimizer/rules/semi_join_push_down.h"
#include "optimizer/rules/set_operation_lowering.h"
#include "optimizer/rules/window_top_n.h"

namespace tessera::optimizer {

const std::vector<std::unique_ptr<Rule>>& RuleList() {
  static const auto* rules = [] {
    auto* list = new std::vector<std::unique_ptr<Rule>>();
    list->push_back(std::make_unique<PredicatePushDown>());
    list->push_back(std::make_unique<ConstantFolding>());
    list->push_back(std::make_unique<JoinOrdering>());
    list->push_back(std::make_unique<InnerToSemiJoin>());
    list->push_back(std::make_unique<LeftJoinMatchReduction>());
    list->push_back(std::make_unique<SemiJoinPushDown>());
    list->push_back(std::make_unique<AggregateSemiJoinReduction>());
    list->push_back(std::make_unique<DistinctAggregateSplit>());
    list->push_back(std::make_unique<EagerAggregation>());
    list->push_back(std::make_unique<ColumnPruning>());
    list->push_back(std::make_unique<WindowTopN>());
    list->push_back(std::make_unique<ExactFilterSemiJoin>());
    list->push_back(std::make_unique<LipFilters>());
    list->push_back(std::make_unique<ImpliedLipFilters>());
    list->push_back(std::make_unique<SetOperationLowering>());
    list->push_back(std::make_unique<BuildSideSwap>());
    list->push_back(std::make_unique<AggregateSharing>());
    return list;
  }();
  return *rules;
}

absl::StatusOr<LogicalOperatorPtr> RunRules(LogicalOperatorPtr plan, const OptimizerOptions& options,
                                            OptimizerReport* report) {
  // `rule`: the rule that just ran, null for the plan as bound. The message is made only when a check fails.
  auto validate = [&](const std::string* rule) -> absl::Status {
    if (!options.validate_plans) return absl::OkStatus();
    absl::Status valid = ValidatePlan(*plan);
    if (valid.ok()) return valid;
    return absl::InternalError(absl::StrCat("the plan is invalid ",
                                            rule == nullptr ? "as bound" : absl::StrCat("after rule ", *rule), ": ",
                                            valid.message()));
  };
  TESSERA_RETURN_IF_ERROR(validate(nullptr));
  for (const auto& rule : RuleList()) {
    RuleRun run{RuleSettingName(rule->name())};
    run.disabled = options.disabled_rules.contains(run.name);
    if (!run.disabled) {
      const int64_t start = MonotonicNanos();
      plan = rule->Apply(std::move(plan));
      run.elapsed_ns = MonotonicNanos() - start;
      TESSERA_RETURN_IF_ERROR(validate(&run.name));
    }
    if (report != nullptr) report->rules.push_back(std::move(run));
  }
  return plan;
}

}  // namespace tessera::optimizer
