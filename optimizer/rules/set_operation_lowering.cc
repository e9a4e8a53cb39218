#include "optimizer/rules/set_operation_lowering.h"

#include <utility>
#include <vector>

#include "optimizer/cardinality_estimator.h"

namespace tessera::optimizer {
namespace {

// `child`'s columns followed by the two side tags (BIGINT constants).
LogicalOperatorPtr Tagged(LogicalOperatorPtr child, bool left) {
  std::vector<ExpressionPtr> expressions;
  std::vector<std::string> names;
  for (int c = 0; c < child->output_width(); ++c) {
    expressions.push_back(MakeColumn(c, child->output()[c].type));
    names.push_back(child->output()[c].name);
  }
  expressions.push_back(MakeConstant(Value::BigInt(left ? 1 : 0)));
  names.push_back("in_left");
  expressions.push_back(MakeConstant(Value::BigInt(left ? 0 : 1)));
  names.push_back("in_right");
  return MakeProject(std::move(child), std::move(expressions), std::move(names));
}

LogicalOperatorPtr Lower(SetOperation& set) {
  const double rows = CardinalityEstimator().EstimateRows(set);
  const int width = set.output_width();
  const std::vector<OutputColumn> output = set.output();
  const bool intersect = set.operation == SetOperationType::kIntersect;
  std::unique_ptr<SetOperation> both = MakeUnionAll(Tagged(std::move(set.children[0]), /*left=*/true),
                                                    Tagged(std::move(set.children[1]), /*left=*/false));
  auto aggregate = std::make_unique<Aggregate>();
  for (int c = 0; c < width; ++c) {
    aggregate->group_by.push_back(MakeColumn(c, both->output()[c].type));
    aggregate->group_names.push_back(output[c].name);
  }
  for (int side = 0; side < 2; ++side) {
    AggregateCall call;
    call.function = AggregateKind::kMax;
    call.argument = MakeColumn(width + side, Type::BigInt());
    call.result_type = Type::BigInt();
    call.name = side == 0 ? "in_left" : "in_right";
    aggregate->aggregates.push_back(std::move(call));
  }
  aggregate->children.push_back(std::move(both));
  aggregate->RecomputeOutput();
  std::vector<ExpressionPtr> terms;
  terms.push_back(
      MakeComparison(ComparisonOp::kEqual, MakeColumn(width, Type::BigInt()), MakeConstant(Value::BigInt(1))));
  terms.push_back(MakeComparison(ComparisonOp::kEqual, MakeColumn(width + 1, Type::BigInt()),
                                 MakeConstant(Value::BigInt(intersect ? 1 : 0))));
  auto filter = MakeFilter(std::move(aggregate), MakeConjunction(ExpressionKind::kAnd, std::move(terms)));
  filter->estimated_rows = rows;
  std::vector<int> columns;
  for (int c = 0; c < width; ++c) columns.push_back(c);
  return MakeColumnSelection(std::move(filter), columns);
}

LogicalOperatorPtr Rewrite(LogicalOperatorPtr node) {
  for (auto& child : node->children) child = Rewrite(std::move(child));
  if (node->kind() != LogicalOperatorKind::kSetOperation) return node;
  auto& set = node->As<SetOperation>();
  if (set.operation == SetOperationType::kUnion || set.all) return node;
  return Lower(set);
}

}  // namespace

LogicalOperatorPtr SetOperationLowering::Apply(LogicalOperatorPtr plan) const { return Rewrite(std::move(plan)); }

}  // namespace tessera::optimizer
