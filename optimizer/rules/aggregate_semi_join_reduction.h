#pragma once
// Shrinks the input of a grouped aggregation that is joined on its grouping key with a selective other side
// (the shape decorrelated scalar subqueries take: TPC-H Q2, Q17, Q20). The other side's key values all come from
// some filtered base-table scan S (followed through projections, filters, and the key equalities of inner and
// semi joins); groups whose key is not among S's values can never join, so the aggregate's input is semi-joined
// with a copy of S first:
//
//   Join(other, Aggregate(input) by g)  ->  Join(other, Aggregate(SemiJoin(input, S on g = s)) by g)
//
// For Q17 the aggregation then groups the ~6,000 lineitem rows of 2,000 parts instead of all 6 million. Valid
// for the aggregate on the right of inner, left outer, semi and (not null-aware) anti joins, and on the left of
// inner and semi joins; the groups that remain are computed from exactly the rows they had before. Applied when
// S is estimated to have at most a fifth as many rows as the aggregate has groups (S is scanned once more).
//
// The semi join then sinks into the aggregate's input as far as its key allows (SinkSemiJoin): where the key
// comes from a dimension joined below the aggregate, it filters that dimension, whose join filters then reach
// the fact scan. TPC-DS Q02 / Q59 (weekly sales totals joined with the weeks of one year): the weeks' semi join
// filters date_dim to a year's 371 dates, and store_sales is probed with a fifth of its rows, not all of them.
//
// Run after JoinOrdering (the added semi join is already in build-side-small form) and before ColumnPruning.
#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class AggregateSemiJoinReduction final : public Rule {
 public:
  std::string name() const override { return "AggregateSemiJoinReduction"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
