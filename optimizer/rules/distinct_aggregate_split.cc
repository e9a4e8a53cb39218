#include "optimizer/rules/distinct_aggregate_split.h"

#include <utility>

#include "optimizer/expression_analysis.h"

namespace tessera::optimizer {
namespace {

bool IgnoresDuplicates(const AggregateCall& call) {
  return call.distinct || call.function == AggregateKind::kMin || call.function == AggregateKind::kMax;
}

// Whether `aggregate` has a DISTINCT call and every call reads the same argument and ignores duplicates.
bool Splittable(const Aggregate& aggregate) {
  if (aggregate.aggregates.empty()) return false;
  bool any_distinct = false;
  const BoundExpression* argument = aggregate.aggregates[0].argument.get();
  for (const AggregateCall& call : aggregate.aggregates) {
    if (call.argument == nullptr || !IgnoresDuplicates(call)) return false;
    if (!ExpressionsEqual(*call.argument, *argument)) return false;
    any_distinct |= call.distinct;
  }
  return any_distinct;
}

LogicalOperatorPtr Split(std::unique_ptr<Aggregate> aggregate) {
  const std::vector<OutputColumn>& input = aggregate->children[0]->output();
  ExpressionPtr argument = aggregate->aggregates[0].argument->Clone();
  const Type argument_type = argument->result_type;
  const std::string argument_name = IsColumn(*argument) ? input[argument->column_index].name : "distinct_argument";

  auto distinct = std::make_unique<Aggregate>();
  distinct->group_by = std::move(aggregate->group_by);
  distinct->group_names = aggregate->group_names;
  distinct->group_by.push_back(std::move(argument));
  distinct->group_names.push_back(argument_name);
  distinct->children = std::move(aggregate->children);
  distinct->RecomputeOutput();

  const int groups = static_cast<int>(aggregate->group_names.size());
  aggregate->group_by.clear();
  for (int g = 0; g < groups; ++g) aggregate->group_by.push_back(MakeInputColumn(distinct->output(), g));
  for (AggregateCall& call : aggregate->aggregates) {
    call.distinct = false;
    call.argument = MakeColumn(groups, argument_type);
  }
  aggregate->children.clear();
  aggregate->children.push_back(std::move(distinct));
  aggregate->RecomputeOutput();
  return aggregate;
}

LogicalOperatorPtr Rewrite(LogicalOperatorPtr node) {
  for (auto& child : node->children) child = Rewrite(std::move(child));
  if (node->kind() != LogicalOperatorKind::kAggregate || !Splittable(node->As<Aggregate>())) return node;
  return Split(std::unique_ptr<Aggregate>(&node.release()->As<Aggregate>()));
}

}  // namespace

LogicalOperatorPtr DistinctAggregateSplit::Apply(LogicalOperatorPtr plan) const { return Rewrite(std::move(plan)); }

}  // namespace tessera::optimizer
