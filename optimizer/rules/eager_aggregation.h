#pragma once
// Eager aggregation (Yan and Larson's "group by before join"): an Aggregate over an inner or left outer join
// whose group keys all come from the left input and whose aggregates (COUNT, COUNT(*), SUM, MIN, MAX, not
// DISTINCT) read only the right input is computed in two steps:
//
//   Project [g..., f := final(partial_f) ...]             (the original names and types)
//     Aggregate groups=[g...] aggregates=[combine(partial_f) ...]
//       Join keys=[left_k = right_k]                      (same type, keys and left input as before)
//         left
//         Aggregate groups=[right_k...] aggregates=[f(x) ...]   (partial_f: f over the right rows of one key)
//           right
//
// Each left row now joins at most one pre-aggregated row (the right rows of its key, folded), so the join
// handles as many rows as the right side has distinct keys. Combining: COUNT and COUNT(*) sum their partial
// counts, SUM sums partial sums, MIN / MAX take the extreme. A left row without a match (left outer join) has
// NULL partials: COUNT(x) adds nothing (COALESCE(sum, 0) when a group has no match at all), COUNT(*) adds 1
// (the partial is replaced by 1), SUM / MIN / MAX ignore it, as the original aggregates ignored the NULL
// arguments of the padded row. Left rows with equal keys each join the same partial row, so duplicates on the
// left count as often as they did.
//
// The mirror image, group keys from the right side and arguments from the left, pre-aggregates the left side
// of an inner join the same way.
//
// Fires when the aggregated side's join keys are estimated to have at most kMaxGroupFraction as many distinct
// values as the side has rows, and the join is estimated to keep at least kMinJoinedFraction of its rows
// (aggregating rows that a selective join would drop costs more than it saves: SSB Q1.1's year of dates, TPC-H
// Q11's suppliers of one nation). TPC-H Q13: 1.5 M orders by 100 K customers, so the join with customer probes
// 100 K pre-counted rows instead of 1.5 M orders (CPU per query about 228 -> 133 ms). The join must have plain
// column keys and no residual (also not NOT IN); a Project of plain columns between the Aggregate and the join
// is looked through.
//
// Runs after DistinctAggregateSplit and before ColumnPruning.

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class EagerAggregation final : public Rule {
 public:
  static constexpr double kMaxGroupFraction = 0.25;
  static constexpr double kMinJoinedFraction = 0.5;

  std::string name() const override { return "EagerAggregation"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
