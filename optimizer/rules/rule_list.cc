#include "optimizer/rules/rule_list.h"

#include "optimizer/rules/column_pruning.h"
#include "optimizer/rules/join_ordering.h"
#include "optimizer/rules/predicate_push_down.h"

namespace tessera::optimizer {

const std::vector<std::unique_ptr<Rule>>& RuleList() {
  static const auto* rules = [] {
    auto* list = new std::vector<std::unique_ptr<Rule>>();
    list->push_back(std::make_unique<PredicatePushDown>());
    list->push_back(std::make_unique<JoinOrdering>());
    list->push_back(std::make_unique<ColumnPruning>());
    return list;
  }();
  return *rules;
}

LogicalOperatorPtr RunRules(LogicalOperatorPtr plan) {
  for (const auto& rule : RuleList()) plan = rule->Apply(std::move(plan));
  return plan;
}

}  // namespace tessera::optimizer
