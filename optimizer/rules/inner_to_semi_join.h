#pragma once
// Inner joins whose repeats nobody counts become semi joins. Below the right (build) side of a semi or anti join
// only which rows occur matters, not how often. An inner join there whose columns read above it (the semi
// join's keys and residual, through Projects and Filters) all come from one input L is rewritten to
//
//   L SEMI JOIN other   (the same keys and residual; L on the left)
//
// which outputs each row of L once instead of once per match. Both inputs of a rewritten join are again read
// only for their existence, so the rewrite recurses into them. TPC-DS Q95's `ws_order_number IN (SELECT
// ws1.ws_order_number FROM web_sales ws1, web_sales ws2 WHERE ws1.ws_order_number = ws2.ws_order_number AND
// ws1.ws_warehouse_sk <> ws2.ws_warehouse_sk)`: at SF1 the self-join made 6.6 M rows of 720 K web sales, and the
// second IN (web_returns joined with the same CTE) 8.7 M; as semi joins at most 720 K and 72 K.
//
// Fires only where the inner join is estimated to output more rows than L has (there are repeats to save): an
// inner join that only filters L (facts of one year of dates) keeps its plan, which chained probes and exact
// filters handle already. Not for joins without keys or a scalar subquery's single-row join.
//
// Runs after JoinOrdering (which decides the join trees) and before SemiJoinPushDown.

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class InnerToSemiJoin final : public Rule {
 public:
  std::string name() const override { return "InnerToSemiJoin"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
