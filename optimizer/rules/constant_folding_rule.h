#pragma once
// Folds the constant parts of every expression in the plan (optimizer/constant_folding.h) and drops conjuncts
// that became TRUE: a Filter left with none disappears, a scan filter left with none is removed. The binder
// already folds what the query spells out; this rule folds what the rewrites create, e.g. a predicate pushed
// through a projection of constants (`WHERE five > 4` over `SELECT 5 AS five` becomes TRUE), so that zone maps
// and EXPLAIN see the simplest form. Expressions that fail to fold (overflow, division by zero) stay as they are
// and report their error at run time, as they would have unfolded.
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
