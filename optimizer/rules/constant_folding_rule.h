#pragma once
// Folds the constant parts of every expression in the plan (optimizer/constant_folding.h) and drops conjuncts
// that became TRUE: a Filter left with none disappears, a scan filter left with none is removed. The binder
// already folds what the query spells out; this rule folds what the rewrites create, e.g. a predicate pushed
// through a projection of constants (`WHERE five > 4` over `SELECT 5 AS five` becomes TRUE), so that zone maps
// and EXPLAIN see the simplest form. Expressions that fail to fold (overflow, division by zero) stay as they are
// and report their error at run time, as they would have unfolded.
//
// A subtree that can yield no row becomes an empty Values of its columns: a scan or Filter whose predicate
// folded to FALSE or NULL, and above it a Project, Sort, Limit, Distinct, Window or grouped Aggregate of no rows,
// an inner / cross / semi join with an empty input (not a scalar subquery's single-row join), a left / anti
// join or EXCEPT with an empty left input, INTERSECT with an empty input, UNION and FULL join with both empty.
// TPC-DS Q04 / Q11 / Q74: a CTE of per-channel UNION ALL branches tagged `'s' sale_type`, referenced with
// `sale_type = 'w'`, had every other channel's branch scan its sales table to join an empty customer scan.
//
// Runs right after PredicatePushDown.
#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class ConstantFolding final : public Rule {
 public:
  std::string name() const override { return "ConstantFolding"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
