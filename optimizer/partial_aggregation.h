#pragma once
// Aggregation from partial results: an Aggregate computed over parts of its input (finer groups of GROUP BY
// ROLLUP / CUBE, optimizer/grouping_sets.h; every rank's part of a partitioned table, distributed/README.md)
// and the partials merged. COUNT and SUM merge by SUM, MIN and MAX by themselves, AVG travels as SUM and COUNT;
// DISTINCT calls (except MIN / MAX) and the holistic aggregates do not decompose.

#include <vector>

#include "optimizer/logical_plan.h"

namespace tessera::optimizer {

// Whether `call` can be computed from partial results over parts of its input.
bool Decomposable(const AggregateCall& call);

// Appends the partial aggregates of `call` (AVG: SUM and COUNT; one call otherwise) to `partials`.
void AddPartials(const AggregateCall& call, std::vector<AggregateCall>* partials);

// The aggregate that combines partial column `column` (of type `type`) made by `function`.
AggregateCall MergeCall(AggregateKind function, int column, Type type);

// The final value of `call` from its merged partials (columns `first`, `first` + 1 of the merge's output
// `merged`), of the call's result type.
ExpressionPtr FinalValue(const AggregateCall& call, const std::vector<OutputColumn>& merged, int first);

// `aggregate` (every call Decomposable) split in two: the partial Aggregate over a copy of its input (the same
// group keys, then the partials of every call), and the merge of the rows of any number of such partial results
// (`partials`, with the partial Aggregate's output) into `aggregate`'s output columns (types and names).
LogicalOperatorPtr MakePartialAggregate(const Aggregate& aggregate);
LogicalOperatorPtr MergePartialAggregates(const Aggregate& aggregate, LogicalOperatorPtr partials);

}  // namespace tessera::optimizer
