#pragma once
// GROUP BY ROLLUP / CUBE / GROUPING SETS and GROUPING(...): the binder's plan for several grouping sets.
//
// The result has the layout of a plain Aggregate, so that the select list, HAVING and ORDER BY bind above it
// exactly as above one: one column per grouping key (NULL in the rows of a set without that key), one per
// aggregate call, then one BIGINT per GROUPING(...) call (its value for the row's set).
//
// Plan: when every aggregate can be computed from partial results (COUNT, SUM, AVG, MIN, MAX, not DISTINCT
// except MIN/MAX), one Aggregate over the finest grouping (all keys) computes partials, and each grouping set
// re-aggregates the result of the smallest other set that strictly contains it (fewest keys), or else the finest
// Aggregate's: ROLLUP(a, b, c) aggregates (a, b) from (a, b, c)'s groups, (a) from (a, b)'s, so each set reads a
// result smaller than the finest one. The copies of an Aggregate print alike, so the plan builder plans each once
// (VisitSharedAggregate) and it feeds every set. Otherwise each set aggregates the input itself. The sets' results
// are concatenated with UNION ALL (one operator: the plan builder flattens nested UNION ALLs). (ROLLUP of TPC-DS
// Q67's 8 keys at SF1: 2.1-3.3 s of operator CPU instead of 3.5-3.7 s with one aggregation of the input per set;
// docs/decisions/0010-optimizer-rules.md has the measurement.)

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "optimizer/logical_plan.h"
#include "parser/ast.h"

namespace tessera::optimizer {

// GROUPING(a, b, ...): bit i (counting from the last argument, bit 0) is 1 when argument i is not a key of the
// row's grouping set, as in PostgreSQL and DuckDB. `keys` are indexes into the grouping keys.
struct GroupingCall {
  std::vector<int> keys;
};

// Whether `expr` is a GROUPING(...) call.
bool IsGroupingCall(const parser::ParsedExpr& expr);

// Appends the GROUPING(...) calls in `expr` (not inside subqueries) to `calls`.
void CollectGroupingCalls(const parser::ParsedExpr& expr, std::vector<const parser::ParsedExpr*>* calls);

// The value of `call` in the rows of grouping set `set` (indexes into the keys, ascending).
int64_t GroupingValue(const GroupingCall& call, const std::vector<int>& set);

// The plan computing `calls` per group of each of `sets` (indexes into `keys`) over `input`, with the layout
// above. `keys` and the calls' arguments are over `input`'s output.
LogicalOperatorPtr PlanGroupingSets(LogicalOperatorPtr input, const std::vector<ExpressionPtr>& keys,
                                    const std::vector<std::string>& key_names, const std::vector<AggregateCall>& calls,
                                    const std::vector<std::vector<int>>& sets,
                                    const std::vector<GroupingCall>& grouping_calls);

}  // namespace tessera::optimizer
