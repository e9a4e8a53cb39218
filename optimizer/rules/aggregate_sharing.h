#pragma once
// Finds aggregates that compute the same rows: a CTE or view referenced twice (TPC-H Q15's revenue0, once joined
// with supplier and once under MAX), the copies of the finest aggregation of GROUP BY ROLLUP / CUBE / GROUPING
// SETS (optimizer/grouping_sets.h). Aggregates whose subtrees print the same (EXPLAIN's text: tables, aliases,
// columns, filters, keys, residuals, exact and LIP filters, every expression) get one Aggregate::shared_result;
// the numbers of the LIP filters their joins publish are compared by order of appearance, since the rules number
// each copy's joins apart (Aggregate::shared_lip_filters lists them).
//
// The plan builder computes such an aggregate once and feeds its rows to the consumers of every copy (the
// relation is released when the last of them has finished); a copy's LIP filter numbers then stand for the
// planned one's filters. The plan keeps every copy's subtree, so its output and estimates are unchanged.
//
// Runs last: the decisions of every other rule are part of the text it compares.

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class AggregateSharing final : public Rule {
 public:
  std::string name() const override { return "AggregateSharing"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
