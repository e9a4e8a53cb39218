#pragma once
// Lowers INTERSECT and EXCEPT (set semantics) into operators that exist: L INTERSECT R / L EXCEPT R becomes
//
//   Project [the columns]
//     Filter [in_left = 1 AND in_right = 1 (INTERSECT) or 0 (EXCEPT)]
//       Aggregate groups=[the columns] aggregates=[max(in_left), max(in_right)]
//         SetOperation UNION ALL
//           Project [L's columns, in_left := 1, in_right := 0] (L)
//           Project [R's columns, in_left := 0, in_right := 1] (R)
//
// Grouping compares whole rows with NULLs equal, as set operations must. The Filter keeps the set operation's
// row estimate (Filter::estimated_rows): the tags' selectivity is not something the estimator can see.
// INTERSECT ALL and EXCEPT ALL stay as they are (execution rejects them, naming the construct); so does
// everything when the rule is disabled.
//
// Runs after every rule that moves or prunes anything (last but the build-side and sharing decisions), so the
// plans of the rules before it see the set operation as written and the lowered subplan is planned as it was
// when the plan builder lowered it.

#include "optimizer/rules/rule.h"

namespace tessera::optimizer {

class SetOperationLowering final : public Rule {
 public:
  std::string name() const override { return "SetOperationLowering"; }
  LogicalOperatorPtr Apply(LogicalOperatorPtr plan) const override;
};

}  // namespace tessera::optimizer
