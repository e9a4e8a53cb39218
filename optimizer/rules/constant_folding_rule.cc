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

// Folds the expressions of `node` (its children are done).
LogicalOperatorPtr FoldNode(LogicalOperatorPtr node) {
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

bool IsFalseOrNull(const ExpressionPtr& predicate) {
  return predicate != nullptr && predicate->kind == ExpressionKind::kConstant &&
         (predicate->constant.is_null() || IsBooleanConstant(*predicate, false));
}

bool IsEmptyValues(const LogicalOperator& node) {
  return node.kind() == LogicalOperatorKind::kValues && node.As<Values>().rows.empty();
}

// Whether `node` yields no row, given which of its children do (already replaced by empty Values).
bool YieldsNoRow(const LogicalOperator& node) {
  auto empty = [&](int child) { return IsEmptyValues(*node.children[child]); };
  switch (node.kind()) {
    case LogicalOperatorKind::kTableScan:
      return IsFalseOrNull(node.As<TableScan>().filter);
    case LogicalOperatorKind::kFilter:
      return IsFalseOrNull(node.As<Filter>().predicate) || empty(0);
    case LogicalOperatorKind::kProject:
    case LogicalOperatorKind::kSort:
    case LogicalOperatorKind::kLimit:
    case LogicalOperatorKind::kDistinct:
    case LogicalOperatorKind::kWindow:
      return empty(0);
    case LogicalOperatorKind::kAggregate:  // without groups, one row even of no input
      return !node.As<Aggregate>().group_by.empty() && empty(0);
    case LogicalOperatorKind::kJoin: {
      const auto& join = node.As<Join>();
      switch (join.join_type) {
        case JoinType::kInner:
        case JoinType::kCross:
        case JoinType::kSemi:
          // A scalar subquery's single-row join reports its right side's row count: leave it to execution.
          return empty(0) || (empty(1) && !join.enforce_single_row);
        case JoinType::kLeftOuter:
        case JoinType::kAnti:
          return empty(0);
        case JoinType::kFullOuter:
          return empty(0) && empty(1);
      }
      return false;
    }
    case LogicalOperatorKind::kSetOperation:
      switch (node.As<SetOperation>().operation) {
        case SetOperationType::kUnion:
          return empty(0) && empty(1);
        case SetOperationType::kIntersect:
          return empty(0) || empty(1);
        case SetOperationType::kExcept:
          return empty(0);
      }
      return false;
    case LogicalOperatorKind::kValues:
    case LogicalOperatorKind::kSeries:
      return false;  // an empty Values is the replacement already; a Series is left as it is
  }
  return false;
}

LogicalOperatorPtr Visit(LogicalOperatorPtr node) {
  for (auto& child : node->children) child = Visit(std::move(child));
  LogicalOperatorPtr folded = FoldNode(std::move(node));
  if (!YieldsNoRow(*folded)) return folded;
  auto values = std::make_unique<Values>();
  values->columns = folded->output();
  values->RecomputeOutput();
  return values;
}

}  // namespace

LogicalOperatorPtr ConstantFolding::Apply(LogicalOperatorPtr plan) const { return Visit(std::move(plan)); }

}  // namespace tessera::optimizer
