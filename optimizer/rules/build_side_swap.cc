#include "optimizer/rules/build_side_swap.h"

#include <algorithm>
#include <utility>

#include "optimizer/cardinality_estimator.h"

namespace tessera::optimizer {
namespace {

bool Swappable(const Join& join) {
  const bool type = join.join_type == JoinType::kLeftOuter || join.join_type == JoinType::kSemi ||
                    (join.join_type == JoinType::kAnti && !join.null_aware);
  return type && !join.left_keys.empty() && join.lip_filter_id < 0 && !join.enforce_single_row &&
         !join.exact_filter.has_value();
}

bool ProbeFilterPays(const Join& join, const CardinalityEstimator& estimator) {
  for (const auto& key : join.right_keys) {
    if (key->kind != ExpressionKind::kColumn) return false;
  }
  const double build_keys = std::min(estimator.DistinctValues(*join.left_keys[0], *join.children[0]),
                                     estimator.EstimateRows(*join.children[0]));
  const double probe_keys = estimator.DistinctValues(*join.right_keys[0], *join.children[1]);
  return build_keys <= BuildSideSwap::kSwappedProbeMaxPassFraction * probe_keys;
}

void Decide(LogicalOperator& node, const CardinalityEstimator& estimator) {
  for (auto& child : node.children) Decide(*child, estimator);
  if (node.kind() != LogicalOperatorKind::kJoin) return;
  auto& join = node.As<Join>();
  join.build_left =
      Swappable(join) && estimator.EstimateRows(*join.children[0]) * BuildSideSwap::kBuildPreservedSideRatio <
                             estimator.EstimateRows(*join.children[1]);
  join.filter_probe_by_build_keys = join.build_left && ProbeFilterPays(join, estimator);
}

}  // namespace

LogicalOperatorPtr BuildSideSwap::Apply(LogicalOperatorPtr plan) const {
  CardinalityEstimator estimator;
  Decide(*plan, estimator);
  return plan;
}

}  // namespace tessera::optimizer
