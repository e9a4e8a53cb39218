#pragma once
// Moves selective semi joins (and anti joins that are not null-aware) below the inner joins, left joins,
// filters, projections and aggregates (when the keys are group keys: a group passes exactly when its rows do)
// under them, to the input that holds their keys, so that they shrink that input
// before it is joined (TPC-H Q20: `ps_partkey IN (SELECT p_partkey ...)` is bound above the join of partsupp
// with the decorrelated lineitem aggregate, and belongs on partsupp). A join with a residual stays where it is,
// and so does one whose keys come from both sides of the join below. Only joins estimated to keep at most half
// of their input move: probing a larger input earlier is no gain otherwise.
//
// Run after JoinOrdering (which treats semi joins as leaves) and before AggregateSemiJoinReduction, which finds
// its sources through the moved semi joins.
#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

// Moves `semi` (a movable semi or anti join: no residual, keys, not null-aware) below its left input as far as
// it can go, whatever it is estimated to keep; returns the subtree that replaces it. For rules that make a semi
// join known to be selective (AggregateSemiJoinReduction).
LogicalOperatorPtr SinkSemiJoin(std::unique_ptr<Join> semi);

class SemiJoinPushDown final : public Rule {
 public:
  std::string name() const override { return "SemiJoinPushDown"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
