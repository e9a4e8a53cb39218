#include "optimizer/grouping_sets.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/partial_aggregation.h"
#include "optimizer/query_binder.h"
#include "optimizer/type_rules.h"

namespace tessera::optimizer {
namespace {

using parser::ExprKind;
using parser::ParsedExpr;

bool Contains(const std::vector<int>& set, int key) { return std::binary_search(set.begin(), set.end(), key); }

// keys (NULL where not in `set`) ++ `values` ++ grouping constants, over `aggregate` whose first |set| columns are
// the set's keys in order.
LogicalOperatorPtr ProjectSet(LogicalOperatorPtr aggregate, const std::vector<ExpressionPtr>& keys,
                              const std::vector<std::string>& key_names, const std::vector<AggregateCall>& calls,
                              std::vector<ExpressionPtr> values, const std::vector<int>& set,
                              const std::vector<GroupingCall>& grouping_calls) {
  std::vector<ExpressionPtr> expressions;
  std::vector<std::string> names;
  for (size_t k = 0; k < keys.size(); ++k) {
    auto position = std::lower_bound(set.begin(), set.end(), static_cast<int>(k));
    if (position != set.end() && *position == static_cast<int>(k)) {
      expressions.push_back(MakeColumn(static_cast<int>(position - set.begin()), keys[k]->result_type));
    } else {
      expressions.push_back(MakeConstant(Value::Null(keys[k]->result_type)));
    }
    names.push_back(key_names[k]);
  }
  for (size_t j = 0; j < calls.size(); ++j) {
    expressions.push_back(std::move(values[j]));
    names.push_back(calls[j].name);
  }
  for (const GroupingCall& call : grouping_calls) {
    expressions.push_back(MakeConstant(Value::BigInt(GroupingValue(call, set))));
    names.push_back("grouping");
  }
  return MakeProject(std::move(aggregate), std::move(expressions), std::move(names));
}

}  // namespace

bool IsGroupingCall(const ParsedExpr& expr) { return expr.kind == ExprKind::kFunctionCall && expr.name == "GROUPING"; }

void CollectGroupingCalls(const ParsedExpr& expr, std::vector<const ParsedExpr*>* calls) {
  if (IsGroupingCall(expr)) {
    calls->push_back(&expr);
    return;
  }
  for (const auto& child : expr.children) CollectGroupingCalls(*child, calls);
  if (expr.window != nullptr) {  // `rank() OVER (PARTITION BY GROUPING(a) ...)` (TPC-DS Q70, Q86)
    for (const auto& key : expr.window->partition_by) CollectGroupingCalls(*key, calls);
    for (const parser::OrderByItem& item : expr.window->order_by) CollectGroupingCalls(*item.expr, calls);
  }
}

int64_t GroupingValue(const GroupingCall& call, const std::vector<int>& set) {
  int64_t value = 0;
  for (int key : call.keys) value = (value << 1) | (Contains(set, key) ? 0 : 1);
  return value;
}

LogicalOperatorPtr PlanGroupingSets(LogicalOperatorPtr input, const std::vector<ExpressionPtr>& keys,
                                    const std::vector<std::string>& key_names, const std::vector<AggregateCall>& calls,
                                    const std::vector<std::vector<int>>& sets,
                                    const std::vector<GroupingCall>& grouping_calls) {
  const bool decomposable = std::all_of(calls.begin(), calls.end(), Decomposable);
  // The finest aggregation, whose copies every set re-aggregates (decomposable calls only).
  LogicalOperatorPtr finest;
  std::vector<AggregateKind> partial_functions;  // per partial of the finest aggregation: its function
  std::vector<int> first_partial;                // per call: its first partial's index
  if (decomposable) {
    auto node = std::make_unique<Aggregate>();
    for (const ExpressionPtr& key : keys) node->group_by.push_back(key->Clone());
    node->group_names = key_names;
    for (const AggregateCall& call : calls) {
      first_partial.push_back(static_cast<int>(node->aggregates.size()));
      AddPartials(call, &node->aggregates);
    }
    for (const AggregateCall& partial : node->aggregates) partial_functions.push_back(partial.function);
    node->children.push_back(std::move(input));
    node->RecomputeOutput();
    finest = std::move(node);
  }
  // Decomposable: each set's groups (its keys, then the partials merged) from the smallest strict superset among
  // the sets (fewest keys), else from the finest aggregation, so ROLLUP's sets aggregate one another's results
  // coarser and coarser. Built from the largest set down; `built[i]` is set i's plan, `parent_set[i]` the keys
  // its input groups by (all keys for the finest).
  std::vector<LogicalOperatorPtr> built(sets.size());
  if (decomposable) {
    std::vector<size_t> by_size(sets.size());
    for (size_t i = 0; i < sets.size(); ++i) by_size[i] = i;
    std::stable_sort(by_size.begin(), by_size.end(),
                     [&](size_t a, size_t b) { return sets[a].size() > sets[b].size(); });
    std::vector<int> all_keys(keys.size());
    for (size_t k = 0; k < keys.size(); ++k) all_keys[k] = static_cast<int>(k);
    for (size_t i : by_size) {
      const std::vector<int>& set = sets[i];
      if (set.size() == keys.size()) {
        built[i] = finest->Clone();  // the finest set itself: its partials are final already
        continue;
      }
      int parent = -1;
      for (size_t j : by_size) {
        const bool superset = sets[j].size() > set.size() && built[j] != nullptr &&
                              std::includes(sets[j].begin(), sets[j].end(), set.begin(), set.end());
        if (superset && (parent < 0 || sets[j].size() < sets[parent].size())) parent = static_cast<int>(j);
      }
      const LogicalOperator& source = parent < 0 ? *finest : *built[parent];
      const std::vector<int>& source_keys = parent < 0 ? all_keys : sets[parent];
      const std::vector<OutputColumn> columns = source.output();
      auto aggregate = std::make_unique<Aggregate>();
      for (int k : set) {
        const int column =
            static_cast<int>(std::lower_bound(source_keys.begin(), source_keys.end(), k) - source_keys.begin());
        aggregate->group_by.push_back(MakeColumn(column, keys[k]->result_type));
        aggregate->group_names.push_back(key_names[k]);
      }
      for (size_t p = 0; p < partial_functions.size(); ++p) {
        const int column = static_cast<int>(source_keys.size() + p);
        aggregate->aggregates.push_back(MergeCall(partial_functions[p], column, columns[column].type));
      }
      aggregate->children.push_back(source.Clone());
      aggregate->RecomputeOutput();
      built[i] = std::move(aggregate);
    }
  }

  LogicalOperatorPtr result;
  for (size_t i = 0; i < sets.size(); ++i) {
    const std::vector<int>& set = sets[i];
    // The set's groups: its keys first, then the calls' (partial) values.
    LogicalOperatorPtr source = std::move(built[i]);
    if (!decomposable) {
      auto aggregate = std::make_unique<Aggregate>();
      for (int k : set) {
        aggregate->group_by.push_back(keys[k]->Clone());
        aggregate->group_names.push_back(key_names[k]);
      }
      for (const AggregateCall& call : calls) aggregate->aggregates.push_back(call.Clone());
      aggregate->children.push_back(input->Clone());
      aggregate->RecomputeOutput();
      source = std::move(aggregate);
    }
    const std::vector<OutputColumn> columns = source->output();
    std::vector<ExpressionPtr> values;
    for (size_t j = 0; j < calls.size(); ++j) {
      const int first = static_cast<int>(set.size()) + (decomposable ? first_partial[j] : static_cast<int>(j));
      values.push_back(decomposable ? FinalValue(calls[j], columns, first) : MakeColumn(first, columns[first].type));
    }
    LogicalOperatorPtr branch =
        ProjectSet(std::move(source), keys, key_names, calls, std::move(values), set, grouping_calls);
    if (result == nullptr) {
      result = std::move(branch);
      continue;
    }
    result = MakeUnionAll(std::move(result), std::move(branch));
  }
  return result;
}

absl::StatusOr<LogicalOperatorPtr> QueryBinder::BindAggregation(const parser::SelectCore& core,
                                                                const std::vector<const ParsedExpr*>& grouping_nodes,
                                                                const std::vector<int>& item_keys,
                                                                std::vector<std::string> group_names,
                                                                AggregateBinding* aggregation,
                                                                LogicalOperatorPtr input) {
  const std::vector<ExpressionPtr>& keys = aggregation->group_keys;
  // Keys that no GROUP BY item names (a decorrelated subquery's correlation keys) belong to every set.
  std::vector<int> implicit;
  for (int k = 0; k < static_cast<int>(keys.size()); ++k) {
    if (std::find(item_keys.begin(), item_keys.end(), k) == item_keys.end()) implicit.push_back(k);
  }
  std::vector<std::vector<int>> sets;
  for (const std::vector<int>& items : core.grouping_sets) {
    std::vector<int> set = implicit;
    for (int item : items) set.push_back(item_keys[item]);
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    sets.push_back(std::move(set));
  }
  std::vector<int> all_keys(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) all_keys[k] = static_cast<int>(k);

  std::vector<GroupingCall> grouping_calls;
  for (const ParsedExpr* node : grouping_nodes) {
    if (node->children.empty() || node->distinct) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, node->position,
                     "GROUPING takes one or more grouping expressions");
    }
    if (node->children.size() > 62) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, node->position, "GROUPING takes at most 62 arguments");
    }
    GroupingCall call;
    for (const auto& argument : node->children) {
      ExpressionContext context;
      context.scope = aggregation->scope;
      context.clause = "GROUPING arguments";
      TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(*argument, context));
      int key = -1;
      for (size_t k = 0; k < keys.size() && key < 0; ++k) {
        if (ExpressionsEqual(*keys[k], *bound)) key = static_cast<int>(k);
      }
      if (key < 0) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, argument->position,
                       "arguments of GROUPING must be grouping expressions of the query");
      }
      call.keys.push_back(key);
    }
    grouping_calls.push_back(std::move(call));
  }

  const int value_base = static_cast<int>(keys.size() + aggregation->calls.size());
  LogicalOperatorPtr plan;
  if (sets.empty()) {
    auto node = std::make_unique<Aggregate>();
    for (const ExpressionPtr& key : keys) node->group_by.push_back(key->Clone());
    node->group_names = std::move(group_names);
    for (const AggregateCall& call : aggregation->calls) node->aggregates.push_back(call.Clone());
    node->children.push_back(std::move(input));
    node->RecomputeOutput();
    plan = std::move(node);
  } else {
    plan = PlanGroupingSets(std::move(input), keys, group_names, aggregation->calls, sets, grouping_calls);
  }
  for (size_t i = 0; i < grouping_nodes.size(); ++i) {
    aggregation->computed_values[grouping_nodes[i]] =
        sets.empty() ? MakeConstant(Value::BigInt(GroupingValue(grouping_calls[i], all_keys)))
                     : MakeColumn(value_base + static_cast<int>(i), Type::BigInt());
  }
  return plan;
}

}  // namespace tessera::optimizer
