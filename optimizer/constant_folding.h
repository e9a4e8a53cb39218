#pragma once
// Bind-time constant folding, so that plans carry literal bounds (zone maps, statistics and EXPLAIN see
// `l_shipdate <= DATE '1998-09-02'`, not an expression). Pure functions; thread-safe.

#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

// Folds the top node of `expression` when all its children are constants and the operation can be computed
// exactly here: casts (Value::CastTo), unary minus, + - * on INTEGER/BIGINT/DECIMAL/DOUBLE, / and % on
// INTEGER/BIGINT/DOUBLE with a non-zero divisor, DATE/TIMESTAMP +- INTERVAL, NOT, IS [NOT] NULL, comparisons
// and AND/OR over boolean constants, and COALESCE whose first argument that is not a NULL constant is a constant
// (no such argument: NULL). Anything else, and every case that would overflow or fail,
// is returned unchanged so that the evaluator reports it at run time. Children must already be folded.
ExpressionPtr FoldConstant(ExpressionPtr expression);
// Folds constants bottom-up over a whole tree.
ExpressionPtr FoldConstantsDeep(ExpressionPtr expression);

}  // namespace tessera::optimizer
