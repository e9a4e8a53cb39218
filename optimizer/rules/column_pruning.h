#pragma once
// Removes columns nobody reads: each node computes or passes on only the columns its parent needs (plus what
// its own expressions read), so TableScans read just the referenced columns and joins carry narrow rows.
// Aggregate calls whose result is unused are dropped (grouping keys are kept: they define the groups);
// Distinct and set operations keep all their columns (they compare whole rows). Every node keeps at least one
// column. Adjacent Projects are merged when that duplicates no computation. The root's output is unchanged.
//
// Run last: it re-indexes every expression.

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class ColumnPruning final : public Rule {
 public:
  std::string name() const override { return "ColumnPruning"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
