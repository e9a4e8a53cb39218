#include "optimizer/rules/semi_join_push_down.h"

#include <vector>

#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"

namespace tessera::optimizer {
namespace {

constexpr double kMaxKeptFraction = 0.5;

bool IsMovable(const Join& join) {
  if (join.residual != nullptr || join.left_keys.empty()) return false;
  if (join.join_type == JoinType::kSemi) return true;
  return join.join_type == JoinType::kAnti && !join.null_aware;
}

// Whether every left key of `join` reads only columns in [begin, end) of the left input.
bool KeysWithin(const Join& join, int begin, int end) {
  for (const auto& key : join.left_keys) {
    if (!ReferencesOnlyRange(*key, begin, end)) return false;
  }
  return true;
}

LogicalOperatorPtr Sink(std::unique_ptr<Join> semi) {
  LogicalOperator& input = *semi->children[0];
  switch (input.kind()) {
    case LogicalOperatorKind::kFilter:
      break;
    case LogicalOperatorKind::kProject: {
      const auto& project = input.As<Project>();
      std::vector<int> columns;
      for (const auto& key : semi->left_keys) CollectColumns(*key, &columns);
      for (int column : columns) {
        if (!IsColumn(*project.expressions[column])) return semi;
      }
      for (auto& key : semi->left_keys) {
        RemapColumns(key.get(), [&](int column) { return project.expressions[column]->column_index; });
      }
      break;
    }
    case LogicalOperatorKind::kAggregate: {
      // On group keys only: a group passes the semi join exactly when each of its rows does.
      const auto& aggregate = input.As<Aggregate>();
      std::vector<int> columns;
      for (const auto& key : semi->left_keys) CollectColumns(*key, &columns);
      for (int column : columns) {
        if (column >= static_cast<int>(aggregate.group_by.size()) || !IsColumn(*aggregate.group_by[column])) {
          return semi;
        }
      }
      for (auto& key : semi->left_keys) {
        RemapColumns(key.get(), [&](int column) { return aggregate.group_by[column]->column_index; });
      }
      break;
    }
    case LogicalOperatorKind::kJoin: {
      const auto& join = input.As<Join>();
      const int left_width = input.children[0]->output_width();
      int side;
      if (KeysWithin(*semi, 0, left_width)) {
        side = 0;
      } else if (KeysWithin(*semi, left_width, input.output_width())) {
        side = 1;
      } else {
        return semi;
      }
      const bool preserves_side = join.join_type == JoinType::kInner || join.join_type == JoinType::kCross ||
                                  (join.join_type == JoinType::kLeftOuter && side == 0);
      if (!preserves_side) return semi;
      LogicalOperatorPtr below = std::move(semi->children[0]);
      if (side == 1) {
        for (auto& key : semi->left_keys) ShiftColumns(key.get(), -left_width);
      }
      semi->children[0] = std::move(below->children[side]);
      semi->RecomputeOutput();
      below->children[side] = Sink(std::move(semi));
      below->RecomputeOutput();
      return below;
    }
    default:
      return semi;
  }
  // Filter, Project or Aggregate: the semi join's output has its input's columns, so the node fits on top of it
  // unchanged.
  LogicalOperatorPtr below = std::move(semi->children[0]);
  semi->children[0] = std::move(below->children[0]);
  semi->RecomputeOutput();
  below->children[0] = Sink(std::move(semi));
  below->RecomputeOutput();
  return below;
}

LogicalOperatorPtr PushDown(LogicalOperatorPtr node) {
  for (auto& child : node->children) child = PushDown(std::move(child));
  if (node->kind() != LogicalOperatorKind::kJoin || !IsMovable(node->As<Join>())) return node;
  const CardinalityEstimator estimator;
  if (estimator.EstimateRows(*node) > kMaxKeptFraction * estimator.EstimateRows(*node->children[0])) return node;
  std::unique_ptr<Join> semi(&node.release()->As<Join>());
  return Sink(std::move(semi));
}

}  // namespace

LogicalOperatorPtr SinkSemiJoin(std::unique_ptr<Join> semi) {
  if (!IsMovable(*semi)) return semi;
  return Sink(std::move(semi));
}

LogicalOperatorPtr SemiJoinPushDown::Apply(LogicalOperatorPtr plan) const { return PushDown(std::move(plan)); }

}  // namespace tessera::optimizer
