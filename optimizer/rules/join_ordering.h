#pragma once
// Greedy join ordering by estimated cardinality (optimizer/cardinality_estimator.h).
//
// A maximal tree of inner and cross joins is flattened into its inputs and its conditions (keys and residual
// conjuncts, over the tree's output columns). Starting from the inputs, the two partial results connected by
// an equality whose join has the smallest estimated output are joined next (greedy operator ordering); only
// when no two are connected are the two smallest cross-joined. Each join puts the input with fewer estimated
// rows on the build (right) side, so plans come out as a large probe side joined with ever smaller build
// sides, the shape LIP filters expect. A Project restores the tree's original column order. Inputs are
// reordered recursively first. Equalities implied by transitivity (`a = b AND b = c`: a = c) connect inputs
// too; a join applies one equality per equivalence class (join_ordering.cc, AddImpliedEqualities).
//
// Run after PredicatePushDown (it relies on conditions sitting on the joins).

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class JoinOrdering final : public Rule {
 public:
  std::string name() const override { return "JoinOrdering"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
