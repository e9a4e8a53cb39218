#pragma once
// Placing predicates on joins, shared by the binder and the rules. Pure functions over plan nodes;
// single-threaded.

#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

// Adds `condition` (over left ++ right columns) to `join`: each conjunct that is an equality between a
// left-only and a right-only expression becomes a key pair (right side re-indexed to the right child), all
// other conjuncts are ANDed into the residual. A cross join that receives a condition becomes an inner join.
// Does not recompute the output (the join type only changes between kCross and kInner, which keeps it).
void AddJoinCondition(Join* join, ExpressionPtr condition);

// True when `conjunct` (over left ++ right, left_width columns on the left) is an equality between an
// expression over the left columns only and one over the right columns only, each referencing at least one
// column.
bool IsEquiJoinConjunct(const BoundExpression& conjunct, int left_width, int total_width);

}  // namespace tessera::optimizer
