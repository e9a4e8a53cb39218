#include "optimizer/rules/eager_aggregation.h"

#include <algorithm>
#include <utility>

#include "optimizer/cardinality_estimator.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/type_rules.h"

namespace tessera::optimizer {
namespace {

// The join below `aggregate` (directly or under a Project of plain columns), and for each input column of the
// aggregate the join output column it is; null when there is none.
Join* FindJoin(Aggregate& aggregate, std::vector<int>* to_join) {
  LogicalOperator* child = aggregate.children[0].get();
  to_join->clear();
  if (child->kind() == LogicalOperatorKind::kProject) {
    for (const auto& expression : child->As<Project>().expressions) {
      if (!IsColumn(*expression)) return nullptr;
      to_join->push_back(expression->column_index);
    }
    child = child->children[0].get();
  } else {
    for (int c = 0; c < child->output_width(); ++c) to_join->push_back(c);
  }
  return child->kind() == LogicalOperatorKind::kJoin ? &child->As<Join>() : nullptr;
}

// The join side (0: left, 1: right) whose rows the aggregates read while the group keys come from the other
// side, or -1. Only the right side of a left outer join: its left side keeps unmatched rows.
int AggregatedSide(const Aggregate& aggregate, const Join& join, const std::vector<int>& to_join) {
  if (join.join_type != JoinType::kInner && join.join_type != JoinType::kLeftOuter) return -1;
  if (join.residual != nullptr || join.null_aware || join.enforce_single_row || join.exact_filter.has_value() ||
      join.lip_filter_id >= 0 || join.left_keys.empty() || aggregate.aggregates.empty()) {
    return -1;
  }
  for (size_t k = 0; k < join.left_keys.size(); ++k) {
    if (!IsColumn(*join.left_keys[k]) || !IsColumn(*join.right_keys[k])) return -1;
  }
  const int left_width = join.children[0]->output_width();
  auto side_of = [&](int column) { return to_join[column] < left_width ? 0 : 1; };
  std::vector<int> argument_columns;
  for (const AggregateCall& call : aggregate.aggregates) {
    if (call.distinct || (call.function != AggregateKind::kCountStar && call.function != AggregateKind::kCount &&
                          call.function != AggregateKind::kSum && call.function != AggregateKind::kMin &&
                          call.function != AggregateKind::kMax)) {
      return -1;
    }
    if (call.argument != nullptr) CollectColumns(*call.argument, &argument_columns);
  }
  for (const int side : {1, 0}) {
    if (side == 0 && join.join_type != JoinType::kInner) continue;
    bool fits = true;
    for (const auto& group : aggregate.group_by) fits &= IsColumn(*group) && side_of(group->column_index) != side;
    for (int column : argument_columns) fits &= side_of(column) == side;
    if (fits) return side;
  }
  return -1;
}

bool Pays(const Join& join, int side) {
  const CardinalityEstimator estimator;
  const LogicalOperator& input = *join.children[side];
  const double rows = estimator.EstimateRows(input);
  double groups = 1;
  for (const auto& key : side == 1 ? join.right_keys : join.left_keys) groups *= estimator.DistinctValues(*key, input);
  // The join must keep most rows of the side anyway: aggregating rows that the join would have dropped (a
  // selective dimension, as SSB Q1.1's one year of dates) costs more than it saves.
  return std::min(groups, rows) <= EagerAggregation::kMaxGroupFraction * rows &&
         estimator.EstimateRows(join) >= EagerAggregation::kMinJoinedFraction * rows;
}

ExpressionPtr Coalesce(ExpressionPtr value, Value otherwise) {
  const Type type = value->result_type;
  std::vector<ExpressionPtr> arguments;
  arguments.push_back(std::move(value));
  arguments.push_back(MakeConstant(std::move(otherwise)));
  return MakeFunction(FunctionId::kCoalesce, std::move(arguments), type);
}

LogicalOperatorPtr Split(std::unique_ptr<Aggregate> aggregate, std::vector<int> to_join, int side) {
  LogicalOperatorPtr join_plan = std::move(aggregate->children[0]);
  if (join_plan->kind() == LogicalOperatorKind::kProject) join_plan = std::move(join_plan->children[0]);
  Join& join = join_plan->As<Join>();
  const int left_width = join.children[0]->output_width();
  std::vector<ExpressionPtr>& side_keys = side == 1 ? join.right_keys : join.left_keys;
  const int keys = static_cast<int>(side_keys.size());
  const int groups = static_cast<int>(aggregate->group_by.size());
  const int side_offset = side == 1 ? left_width : 0;  // where the aggregated side's columns start

  // The aggregated side, grouped by its join keys: one partial per call, of the call's own type.
  auto partial = std::make_unique<Aggregate>();
  const std::vector<OutputColumn>& side_output = join.children[side]->output();
  for (const auto& key : side_keys) {
    partial->group_by.push_back(key->Clone());
    partial->group_names.push_back(side_output[key->column_index].name);
  }
  for (const AggregateCall& call : aggregate->aggregates) {
    AggregateCall part = call.Clone();
    if (part.argument != nullptr) {
      RemapColumns(part.argument.get(), [&](int column) { return to_join[column] - side_offset; });
    }
    partial->aggregates.push_back(std::move(part));
  }
  partial->children.push_back(std::move(join.children[side]));
  partial->RecomputeOutput();
  const int partial_width = partial->output_width();
  for (int k = 0; k < keys; ++k) side_keys[k] = MakeInputColumn(partial->output(), k);
  join.children[side] = std::move(partial);
  join.RecomputeOutput();
  // Join output columns: the other side's keep their place when the right side was aggregated, and move by
  // the width change when the left side was.
  auto group_column = [&](int column) { return side == 1 ? column : column - left_width + partial_width; };
  const int first_partial = (side == 1 ? left_width : 0) + keys;

  // The partials combined per group of the original keys.
  auto combined = std::make_unique<Aggregate>();
  for (const auto& group : aggregate->group_by) {
    combined->group_by.push_back(MakeInputColumn(join.output(), group_column(to_join[group->column_index])));
  }
  combined->group_names = aggregate->group_names;
  for (size_t c = 0; c < aggregate->aggregates.size(); ++c) {
    const AggregateCall& call = aggregate->aggregates[c];
    ExpressionPtr argument = MakeInputColumn(join.output(), first_partial + static_cast<int>(c));
    AggregateCall combine;
    combine.name = call.name;
    combine.function = call.function == AggregateKind::kMin || call.function == AggregateKind::kMax
                           ? call.function
                           : AggregateKind::kSum;
    if (call.function == AggregateKind::kCountStar && join.join_type == JoinType::kLeftOuter) {
      argument = Coalesce(std::move(argument), Value::BigInt(1));  // an unmatched left row counts once
    }
    Type argument_type;
    combine.result_type = *AggregateResultType(combine.function, argument->result_type, &argument_type);
    combine.argument = std::move(argument);
    combined->aggregates.push_back(std::move(combine));
  }
  combined->children.push_back(std::move(join_plan));
  combined->RecomputeOutput();

  // The original output: names, and types (a sum of counts is DECIMAL(38,0); a group without any match has none).
  std::vector<ExpressionPtr> expressions;
  std::vector<std::string> names = aggregate->group_names;
  for (int g = 0; g < groups; ++g) expressions.push_back(MakeInputColumn(combined->output(), g));
  for (size_t c = 0; c < aggregate->aggregates.size(); ++c) {
    const AggregateCall& call = aggregate->aggregates[c];
    ExpressionPtr value = MakeInputColumn(combined->output(), groups + static_cast<int>(c));
    if (value->result_type != call.result_type) value = MakeCast(std::move(value), call.result_type);
    if (call.function == AggregateKind::kCount || call.function == AggregateKind::kCountStar) {
      value = Coalesce(std::move(value), Value::BigInt(0));
    }
    expressions.push_back(std::move(value));
    names.push_back(call.name);
  }
  return MakeProject(std::move(combined), std::move(expressions), std::move(names));
}

LogicalOperatorPtr Rewrite(LogicalOperatorPtr node) {
  for (auto& child : node->children) child = Rewrite(std::move(child));
  if (node->kind() != LogicalOperatorKind::kAggregate) return node;
  auto& aggregate = node->As<Aggregate>();
  std::vector<int> to_join;
  Join* join = FindJoin(aggregate, &to_join);
  if (join == nullptr) return node;
  const int side = AggregatedSide(aggregate, *join, to_join);
  if (side < 0 || !Pays(*join, side)) return node;
  return Split(std::unique_ptr<Aggregate>(&node.release()->As<Aggregate>()), std::move(to_join), side);
}

}  // namespace

LogicalOperatorPtr EagerAggregation::Apply(LogicalOperatorPtr plan) const { return Rewrite(std::move(plan)); }

}  // namespace tessera::optimizer
