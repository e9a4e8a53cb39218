#pragma once
// SQL-like rendering of bound expressions for EXPLAIN and plan-shape tests, e.g.
//   sum((l_extendedprice * (1 - l_discount)))   (l_shipdate <= DATE '1998-09-02')   p_type LIKE '%BRASS'
// Column references print as the input column's name, qualified by its relation ("n1.n_name") when the name
// is not unique in the input, and as "#i" when the index is outside the input. Implicit casts print as CAST(x
// AS TYPE). The format is owned here (not by BoundExpression::ToString) so that EXPLAIN output is stable.
// Pure functions; thread-safe.

#include <string>
#include <vector>

#include "expressions/bound_expression.h"
#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

// Display names for the columns of `input`: the name, or relation.name when two columns share a name.
std::vector<std::string> DisplayNames(const std::vector<OutputColumn>& input);

std::string FormatExpression(const BoundExpression& expression, const std::vector<std::string>& column_names);

// A constant as SQL text: 'text', DATE '1995-03-15', 42, 0.05, NULL, INTERVAL '3 mons'.
std::string FormatConstant(const Value& value);

}  // namespace tessera::optimizer
