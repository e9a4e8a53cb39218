#include "optimizer/rules/constant_folding_rule.h"

#include <vector>

#include "optimizer/constant_folding.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/logical_window.h"

namespace tessera::optimizer {
namespace {

void Fold(ExpressionPtr& expression) {
  if (expression != nullptr) expression = FoldConstantsDeep(std::move(expression));
}

// Folds a predicate and removes its TRUE conjuncts; null when nothing is left.
ExpressionPtr FoldPredicate(ExpressionPtr predicate) {
  if (predicate == nullptr) return nullptr;
  std::vector<ExpressionPtr> kept;
  for (ExpressionPtr& term : SplitConjuncts(FoldConstantsDeep(std::move(predicate)))) {
    if (!IsBooleanConstant(*term, true)) kept.push_back(std::move(term));
  }
  return kept.empty() ? nullptr : CombineConjuncts(std::move(kept));
}

LogicalOperatorPtr Visit(LogicalOperatorPtr node) {
  for (auto& child : node->children) child = Visit(std::move(child));
  switch (node->kind()) {
    case LogicalOperatorKind::kTableScan: {
      auto& scan = node->As<TableScan>();
      scan.filter = FoldPredicate(std::move(scan.filter));
      break;
    }
    case LogicalOperatorKind::kFilter: {
      auto& filter = node->As<Filter>();
      filter.predicate = FoldPredicate(std::move(filter.predicate));
      if (filter.predicate == nullptr) return std::move(node->children[0]);
      break;
    }
    case LogicalOperatorKind::kProject:
      for (auto& expression : node->As<Project>().expressions) Fold(expression);
      break;
    case LogicalOperatorKind::kJoin: {
      auto& join = node->As<Join>();
      for (auto& key : join.left_keys) Fold(key);
      for (auto& key : join.right_keys) Fold(key);
      join.residual = FoldPredicate(std::move(join.residual));
      break;
    }
    case LogicalOperatorKind::kAggregate: {
      auto& aggregate = node->As<Aggregate>();
      for (auto& key : aggregate.group_by) Fold(key);
      for (auto& call : aggregate.aggregates) Fold(call.argument);
      break;
    }
    case LogicalOperatorKind::kSort:
      for (auto& key : node->As<Sort>().keys) Fold(key.expression);
      break;
    case LogicalOperatorKind::kWindow:
      VisitWindowExpressions(node->As<Window>(), [](ExpressionPtr& expression) { Fold(expression); });
      break;
    case LogicalOperatorKind::kLimit:
    case LogicalOperatorKind::kSetOperation:
    case LogicalOperatorKind::kValues:
    case LogicalOperatorKind::kSeries:
    case LogicalOperatorKind::kDistinct:
      break;
  }
  return node;
}

}  // namespace

LogicalOperatorPtr ConstantFolding::Apply(LogicalOperatorPtr plan) const { return Visit(std::move(plan)); }

}  // namespace tessera::optimizer
