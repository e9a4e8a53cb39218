// One SELECT block: FROM and WHERE, GROUP BY, aggregates, HAVING, the select list, ORDER BY items, DISTINCT.
//
// Aggregation is bound in two phases. First the GROUP BY keys and every aggregate call of the select list,
// HAVING and ORDER BY are bound against the FROM clause and become one Aggregate node. Then those clauses are
// bound above it: an aggregate call becomes a reference to its output column, an expression equal to a
// GROUP BY key a reference to the key, and any other column reference is an error.

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/constant_folding.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/expression_format.h"
#include "optimizer/grouping_sets.h"
#include "optimizer/join_condition.h"
#include "optimizer/query_binder.h"
#include "parser/parser.h"

namespace tessera::optimizer {
namespace {

using parser::ExprKind;
using parser::LiteralKind;
using parser::ParsedExpr;

void CollectAggregateCalls(const ParsedExpr& expr, std::vector<const ParsedExpr*>* calls) {
  if (expr.kind == ExprKind::kFunctionCall && QueryBinder::IsAggregateName(expr.name) && expr.window == nullptr) {
    calls->push_back(&expr);
    return;
  }
  for (const auto& child : expr.children) CollectAggregateCalls(*child, calls);
  if (expr.window != nullptr) {  // `rank() OVER (ORDER BY sum(x))`: aggregates inside a window call's window
    for (const auto& key : expr.window->partition_by) CollectAggregateCalls(*key, calls);
    for (const parser::OrderByItem& item : expr.window->order_by) CollectAggregateCalls(*item.expr, calls);
  }
}

bool IsOrdinal(const ParsedExpr& expr) {
  return expr.kind == ExprKind::kLiteral && expr.literal_kind == LiteralKind::kInteger;
}

bool SameCall(const AggregateCall& a, const AggregateCall& b) {
  if (a.function != b.function || a.distinct != b.distinct || a.descending != b.descending || a.ordered != b.ordered ||
      a.separator != b.separator || a.fraction.ToString() != b.fraction.ToString()) {
    return false;
  }
  if ((a.argument == nullptr) != (b.argument == nullptr)) return false;
  return a.argument == nullptr || ExpressionsEqual(*a.argument, *b.argument);
}

// The output columns of an aggregation over no input rows: 0 for COUNT calls, lateral tuple column i for the
// first `lateral_count` keys (encoded kOuterColumnBase + i, see BoundSelectBlock::lateral_empty_values), else NULL.
std::vector<ExpressionPtr> EmptyGroupValues(const std::vector<OutputColumn>& output,
                                            const AggregateBinding& aggregation, int lateral_count) {
  std::vector<ExpressionPtr> values;
  for (int i = 0; i < static_cast<int>(output.size()); ++i) {
    const int call = i - static_cast<int>(aggregation.group_keys.size());
    if (call >= 0 && call < static_cast<int>(aggregation.calls.size()) &&
        (aggregation.calls[call].function == AggregateKind::kCount ||
         aggregation.calls[call].function == AggregateKind::kCountStar ||
         aggregation.calls[call].function == AggregateKind::kApproxCountDistinct)) {
      values.push_back(MakeConstant(Value::BigInt(0)));
    } else if (i < lateral_count) {
      values.push_back(MakeColumn(kOuterColumnBase + i, output[i].type));
    } else {
      values.push_back(MakeConstant(Value::Null(output[i].type)));
    }
  }
  return values;
}

}  // namespace

int AggregateBinding::AddCall(AggregateCall call) {
  for (size_t i = 0; i < calls.size(); ++i) {
    if (SameCall(calls[i], call)) return static_cast<int>(i);
  }
  calls.push_back(std::move(call));
  return static_cast<int>(calls.size()) - 1;
}

void SplitParsedConjuncts(const ParsedExpr& expr, std::vector<const ParsedExpr*>* conjuncts) {
  if (expr.kind == ExprKind::kBinary && expr.name == "AND") {
    SplitParsedConjuncts(*expr.children[0], conjuncts);
    SplitParsedConjuncts(*expr.children[1], conjuncts);
    return;
  }
  conjuncts->push_back(&expr);
}

std::string DerivedColumnName(const ParsedExpr& expr) {
  if (expr.kind == ExprKind::kColumnRef) return expr.name;
  return parser::ToString(expr);
}

absl::StatusOr<LogicalOperatorPtr> QueryBinder::BindFromWhere(const parser::SelectCore& core, const Scope* outer,
                                                              Correlation* correlation, Scope* scope,
                                                              const LateralValues* lateral) {
  TESSERA_ASSIGN_OR_RETURN(BoundRelation from, BindFrom(core.from, outer, scope));
  LogicalOperatorPtr plan = std::move(from.plan);
  if (lateral != nullptr) {
    // Without FROM, the block reads the lateral tuples alone (not crossed with the one row of no columns).
    scope->set_lateral(lateral->scope, core.from.empty() ? 0 : plan->output_width());
    plan = core.from.empty() ? lateral->plan->Clone()
                             : MakeJoin(JoinType::kCross, std::move(plan), lateral->plan->Clone());
  }
  if (core.where != nullptr) TESSERA_RETURN_IF_ERROR(BindWhere(*core.where, *scope, correlation, &plan));
  return plan;
}

absl::Status QueryBinder::BindWhere(const ParsedExpr& where, const Scope& scope, Correlation* correlation,
                                    LogicalOperatorPtr* plan) {
  std::vector<const ParsedExpr*> conjuncts;
  SplitParsedConjuncts(where, &conjuncts);
  std::vector<const ParsedExpr*> semi_joins;
  std::vector<ExpressionPtr> filters;
  for (const ParsedExpr* conjunct : conjuncts) {
    if (IsSemiJoinPredicate(*conjunct)) {
      semi_joins.push_back(conjunct);
      continue;
    }
    ExpressionContext context;
    context.scope = &scope;
    context.plan = plan;
    context.clause = "WHERE";
    context.correlation = correlation;
    context.conjunct_root = true;
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindBoolean(*conjunct, context));
    if (IsBooleanConstant(*bound, true)) continue;
    if (correlation == nullptr || MaxColumnIndex(*bound) < kOuterColumnBase) {
      filters.push_back(std::move(bound));
      continue;
    }
    // A correlation repeated in every branch of an OR is a correlation of its own (TPC-DS Q41:
    // (x = outer.x AND a) OR (x = outer.x AND b) is x = outer.x AND (a OR b)).
    std::vector<ExpressionPtr> factored;
    FactorCommonConjuncts(std::move(bound), &factored);
    for (ExpressionPtr& term : factored) {
      (MaxColumnIndex(*term) >= kOuterColumnBase ? correlation->conjuncts : filters).push_back(std::move(term));
    }
  }
  if (!filters.empty()) *plan = MakeFilter(std::move(*plan), CombineConjuncts(std::move(filters)));
  for (const ParsedExpr* predicate : semi_joins) TESSERA_RETURN_IF_ERROR(AttachSemiJoin(*predicate, scope, plan));
  return absl::OkStatus();
}

// One SELECT block while BindSelectBlock binds its clauses in order. Not movable: select_context points into it.
struct SelectBlockState {
  Scope scope;              // the FROM clause's names
  LogicalOperatorPtr plan;  // the block's plan so far
  BoundSelectBlock block;   // the result
  int lateral_base = 0;     // LATERAL (SelectBlockOptions::lateral): the first of its columns in the input plan
  int lateral_count = 0;
  // Leading GROUP BY keys over the input plan: a scalar subquery's correlation keys, a LATERAL block's columns.
  std::vector<ExpressionPtr> correlation_keys;
  int correlation_key_count = 0;
  bool aggregate = false;  // GROUP BY, HAVING, aggregate or GROUPING calls
  AggregateBinding aggregation;
  ExpressionContext select_context;  // select list and ORDER BY: above the aggregation and the windows
  WindowBinding windows;
  std::vector<ExpressionPtr> items;  // the select list (after the keys), then hidden ORDER BY columns
  std::vector<std::string> names;
  int visible = 0;  // items that are the select list

  SelectBlockState() = default;
  SelectBlockState(const SelectBlockState&) = delete;
  SelectBlockState& operator=(const SelectBlockState&) = delete;
};

namespace {

// Calls `visit` on every expression whose aggregate calls the block's aggregation computes: the select list,
// HAVING, ORDER BY and the WINDOW clause's PARTITION BY / ORDER BY, in that order (the order of the calls).
template <typename Visit>
void ForEachAggregateSource(const parser::SelectCore& core, const std::vector<parser::OrderByItem>* order_by,
                            Visit visit) {
  for (const parser::SelectItem& item : core.items) visit(*item.expr);
  if (core.having != nullptr) visit(*core.having);
  if (order_by != nullptr) {
    for (const parser::OrderByItem& item : *order_by) visit(*item.expr);
  }
  for (const parser::WindowDefinition& window : core.windows) {
    for (const auto& key : window.spec->partition_by) visit(*key);
    for (const parser::OrderByItem& item : window.spec->order_by) visit(*item.expr);
  }
}

}  // namespace

absl::StatusOr<BoundSelectBlock> QueryBinder::BindSelectBlock(const parser::SelectCore& core, const Scope* outer,
                                                              const SelectBlockOptions& options) {
  SelectBlockState state;
  TESSERA_ASSIGN_OR_RETURN(state.plan, BindFromWhere(core, outer, options.correlation, &state.scope, options.lateral));
  // LATERAL: the earlier FROM items' columns follow the FROM clause's in the plan and lead the output.
  state.lateral_base = state.scope.size();
  state.lateral_count = options.lateral == nullptr ? 0 : options.lateral->scope->size();
  const bool lateral_checks = state.lateral_count > 0 && !options.lateral->finding_columns;
  TESSERA_RETURN_IF_ERROR(BindCorrelationKeys(core, options, &state));
  for (int i = 0; i < state.lateral_count; ++i) {
    state.correlation_keys.push_back(MakeInputColumn(state.plan->output(), state.lateral_base + i));
  }

  // Is this an aggregate block?
  std::vector<const ParsedExpr*> call_nodes;
  std::vector<const ParsedExpr*> grouping_nodes;
  ForEachAggregateSource(core, options.order_by, [&](const ParsedExpr& expr) {
    CollectAggregateCalls(expr, &call_nodes);
    CollectGroupingCalls(expr, &grouping_nodes);
  });
  state.aggregate = !core.group_by.empty() || !core.grouping_sets.empty() || core.having != nullptr ||
                    !call_nodes.empty() || !grouping_nodes.empty();
  if (lateral_checks && core.having != nullptr && core.group_by.empty()) {
    return ErrorAt(absl::StatusCode::kUnimplemented, core.having->position,
                   "HAVING without GROUP BY in a LATERAL subquery that reads an earlier FROM item is not supported");
  }
  if (lateral_checks && !core.grouping_sets.empty()) {
    return ErrorAt(absl::StatusCode::kUnimplemented, core.position,
                   "GROUPING SETS, ROLLUP or CUBE in a LATERAL subquery that reads an earlier FROM item are not "
                   "supported");
  }
  if (options.lateral == nullptr && !state.correlation_keys.empty() && !state.aggregate) {
    return ErrorAt(absl::StatusCode::kUnimplemented, core.position,
                   "a correlated scalar subquery must compute an aggregate");
  }

  state.select_context.scope = &state.scope;
  state.select_context.plan = &state.plan;
  state.select_context.clause = "SELECT";
  state.correlation_key_count = static_cast<int>(state.correlation_keys.size());
  if (state.aggregate) {
    std::vector<int> item_keys;  // core.group_by[i] is group key item_keys[i]
    std::vector<std::string> group_names;
    TESSERA_RETURN_IF_ERROR(BindGroupByKeys(core, &state, &item_keys, &group_names));
    TESSERA_RETURN_IF_ERROR(
        BindAggregatesAndHaving(core, call_nodes, grouping_nodes, item_keys, std::move(group_names), &state));
  }

  TESSERA_RETURN_IF_ERROR(BindWindows(core, options.order_by, state.select_context, &state.plan, &state.windows));
  if (!state.windows.columns.empty()) state.select_context.windows = &state.windows;
  if (lateral_checks && !state.windows.columns.empty()) {
    // Their partitions would have to be per lateral tuple.
    return ErrorAt(absl::StatusCode::kUnimplemented, core.position,
                   "window functions in a LATERAL subquery that reads an earlier FROM item are not supported");
  }

  TESSERA_RETURN_IF_ERROR(BindSelectList(core, &state));
  if (options.order_by != nullptr) TESSERA_RETURN_IF_ERROR(BindBlockOrderBy(core, *options.order_by, &state));
  TESSERA_RETURN_IF_ERROR(BindEmptyGroupValues(core, &state));

  std::vector<std::string> all_names = state.names;
  LogicalOperatorPtr plan = MakeProject(std::move(state.plan), std::move(state.items), std::move(all_names));
  if (core.distinct) {
    auto distinct = std::make_unique<Distinct>();
    distinct->children.push_back(std::move(plan));
    distinct->RecomputeOutput();
    plan = std::move(distinct);
  }
  BoundSelectBlock& block = state.block;
  state.names.resize(state.visible);
  block.names = std::move(state.names);
  block.plan = std::move(plan);
  return std::move(block);
}

absl::Status QueryBinder::BindCorrelationKeys(const parser::SelectCore& core, const SelectBlockOptions& options,
                                              SelectBlockState* state) {
  // Scalar-subquery decorrelation: correlation equalities become leading grouping keys.
  if (!options.group_by_correlation || options.correlation == nullptr) return absl::OkStatus();
  std::vector<ExpressionPtr>& conjuncts = options.correlation->conjuncts;
  bool equalities = true;
  for (const ExpressionPtr& conjunct : conjuncts) equalities = equalities && IsCorrelationEquality(*conjunct);
  if (equalities) {
    for (ExpressionPtr& conjunct : conjuncts) {
      const int outer_side =
          ReferencesOnlyRange(*conjunct->children[0], kOuterColumnBase, 2 * kOuterColumnBase) ? 0 : 1;
      ExpressionPtr outer_key = std::move(conjunct->children[outer_side]);
      ShiftColumns(outer_key.get(), -kOuterColumnBase);
      state->correlation_keys.push_back(std::move(conjunct->children[1 - outer_side]));
      state->block.outer_keys.push_back(std::move(outer_key));
    }
  } else if (options.outer_plan == nullptr) {
    return ErrorAt(absl::StatusCode::kUnimplemented, core.where->position,
                   "a correlated scalar subquery may only correlate through equalities between an inner and "
                   "an outer expression");
  } else {
    // General correlation (query_binder.h, OuterValueSet): the block's input is joined with the distinct
    // outer tuples on the correlated conditions, and those tuples become its leading grouping keys.
    OuterValueSet values = DistinctOuterValues(conjuncts, *options.outer_plan);
    state->block.null_safe_outer_keys = values.null_safe;
    const int width = state->plan->output_width();
    std::unique_ptr<Join> join = MakeJoin(JoinType::kCross, std::move(state->plan), std::move(values.plan));
    for (ExpressionPtr& conjunct : conjuncts) {
      RemapCorrelation(conjunct.get(), values.outer_columns, width, 0);
      AddJoinCondition(join.get(), std::move(conjunct));
    }
    join->RecomputeOutput();
    state->plan = std::move(join);
    for (size_t i = 0; i < values.outer_columns.size(); ++i) {
      state->correlation_keys.push_back(MakeInputColumn(state->plan->output(), width + static_cast<int>(i)));
      state->block.outer_keys.push_back(MakeInputColumn(options.outer_plan->output(), values.outer_columns[i]));
    }
  }
  conjuncts.clear();
  return absl::OkStatus();
}

absl::Status QueryBinder::BindGroupByKeys(const parser::SelectCore& core, SelectBlockState* state,
                                          std::vector<int>* item_keys, std::vector<std::string>* group_names) {
  AggregateBinding& aggregation = state->aggregation;
  aggregation.scope = &state->scope;
  for (ExpressionPtr& key : state->correlation_keys) {
    group_names->push_back(FormatExpression(*key, DisplayNames(state->plan->output())));
    aggregation.group_keys.push_back(std::move(key));
  }
  for (const auto& group : core.group_by) {
    const ParsedExpr* source = group.get();
    std::string name = DerivedColumnName(*group);
    if (IsOrdinal(*group)) {
      int64_t ordinal = 0;
      if (!absl::SimpleAtoi(group->literal_text, &ordinal) || ordinal < 1 ||
          ordinal > static_cast<int64_t>(core.items.size())) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, group->position,
                       absl::StrCat("GROUP BY position ", group->literal_text, " is not in select list"));
      }
      const parser::SelectItem& item = core.items[ordinal - 1];
      if (item.expr->kind == ExprKind::kStar) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, group->position, "GROUP BY position refers to '*'");
      }
      source = item.expr.get();
      name = item.alias.empty() ? DerivedColumnName(*item.expr) : item.alias;
    } else if (group->kind == ExprKind::kColumnRef && group->qualifier.empty() &&
               !state->scope.Resolve("", group->name).ok()) {
      // Not an input column: a select-list alias?
      for (const parser::SelectItem& item : core.items) {
        if (item.alias == group->name) {
          source = item.expr.get();
          break;
        }
      }
    }
    if (ContainsAggregate(*source)) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, group->position,
                     "aggregate functions are not allowed in GROUP BY");
    }
    ExpressionContext group_context;
    group_context.scope = &state->scope;
    group_context.clause = "GROUP BY";
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr key, BindExpression(*source, group_context));
    int duplicate = -1;
    for (size_t k = 0; k < aggregation.group_keys.size() && duplicate < 0; ++k) {
      if (ExpressionsEqual(*aggregation.group_keys[k], *key)) duplicate = static_cast<int>(k);
    }
    item_keys->push_back(duplicate >= 0 ? duplicate : static_cast<int>(aggregation.group_keys.size()));
    if (duplicate >= 0) continue;
    aggregation.group_keys.push_back(std::move(key));
    group_names->push_back(std::move(name));
  }
  return absl::OkStatus();
}

absl::Status QueryBinder::BindAggregatesAndHaving(const parser::SelectCore& core,
                                                  const std::vector<const ParsedExpr*>& call_nodes,
                                                  const std::vector<const ParsedExpr*>& grouping_nodes,
                                                  const std::vector<int>& item_keys,
                                                  std::vector<std::string> group_names, SelectBlockState* state) {
  AggregateBinding& aggregation = state->aggregation;
  ExpressionContext call_context;
  call_context.scope = &state->scope;
  call_context.plan = &state->plan;
  call_context.clause = "aggregate function arguments";
  for (const ParsedExpr* node : call_nodes) {
    if (IsStatisticalAggregateName(node->name)) {
      TESSERA_RETURN_IF_ERROR(BindStatisticalAggregate(*node, call_context, &aggregation));
      continue;
    }
    TESSERA_ASSIGN_OR_RETURN(AggregateCall call, BindAggregateCall(*node, call_context));
    aggregation.call_index[node] = aggregation.AddCall(std::move(call));
  }
  TESSERA_ASSIGN_OR_RETURN(state->plan, BindAggregation(core, grouping_nodes, item_keys, std::move(group_names),
                                                        &aggregation, std::move(state->plan)));
  state->select_context.aggregates = &aggregation;

  if (core.having != nullptr) {
    ExpressionContext having_context = state->select_context;
    having_context.clause = "HAVING";
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr predicate, BindBoolean(*core.having, having_context));
    if (!IsBooleanConstant(*predicate, true)) state->plan = MakeFilter(std::move(state->plan), std::move(predicate));
  }
  return absl::OkStatus();
}

absl::Status QueryBinder::BindSelectList(const parser::SelectCore& core, SelectBlockState* state) {
  const std::vector<OutputColumn>& input = state->plan->output();
  for (int i = 0; i < state->correlation_key_count; ++i) {
    // Above an aggregation the keys lead its output; a LATERAL block without one reads them from its input.
    const int column = state->aggregate ? i : state->lateral_base + i;
    state->items.push_back(MakeInputColumn(input, column));
    state->names.push_back(input[column].name);
  }
  for (const parser::SelectItem& item : core.items) {
    if (item.expr->kind != ExprKind::kStar) {
      TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(*item.expr, state->select_context));
      state->items.push_back(std::move(bound));
      state->names.push_back(item.alias.empty() ? DerivedColumnName(*item.expr) : item.alias);
      continue;
    }
    absl::StatusOr<std::vector<int>> columns = state->scope.ExpandStar(item.expr->qualifier);
    if (!columns.ok()) return Rewrap(columns.status(), item.expr->position);
    if (columns->empty()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, item.expr->position,
                     "SELECT * with no tables specified is not valid");
    }
    for (int column : *columns) {
      const ScopeColumn& source = state->scope.columns()[column];
      ExpressionPtr bound = MakeColumn(column, source.type);
      if (state->aggregate) {
        const std::vector<ExpressionPtr>& group_keys = state->aggregation.group_keys;
        int key = -1;
        for (size_t k = 0; k < group_keys.size(); ++k) {
          if (ExpressionsEqual(*group_keys[k], *bound)) key = static_cast<int>(k);
        }
        if (key < 0) {
          return ErrorAt(absl::StatusCode::kInvalidArgument, item.expr->position,
                         absl::StrCat("column '", source.relation.empty() ? "" : source.relation + ".", source.name,
                                      "' must appear in the GROUP BY clause or be used in an aggregate function"));
        }
        bound = MakeInputColumn(state->plan->output(), key);
      }
      state->items.push_back(std::move(bound));
      state->names.push_back(source.name);
    }
  }
  state->visible = static_cast<int>(state->items.size());
  return absl::OkStatus();
}

absl::Status QueryBinder::BindBlockOrderBy(const parser::SelectCore& core,
                                           const std::vector<parser::OrderByItem>& order_by, SelectBlockState* state) {
  // Output ordinals, output names, then expressions (hidden columns if not in the select list).
  std::vector<ExpressionPtr>& items = state->items;
  const int first = state->correlation_key_count;
  for (const parser::OrderByItem& item : order_by) {
    const ParsedExpr& expr = *item.expr;
    int index = -1;
    if (IsOrdinal(expr)) {
      int64_t ordinal = 0;
      if (!absl::SimpleAtoi(expr.literal_text, &ordinal) || ordinal < 1 || ordinal > state->visible - first) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                       absl::StrCat("ORDER BY position ", expr.literal_text, " is not in select list"));
      }
      index = first + static_cast<int>(ordinal) - 1;
    } else if (expr.kind == ExprKind::kColumnRef && expr.qualifier.empty()) {
      for (int i = first; i < state->visible; ++i) {
        if (state->names[i] != expr.name) continue;
        if (index >= 0 && !ExpressionsEqual(*items[index], *items[i])) {
          return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                         absl::StrCat("ORDER BY '", expr.name, "' is ambiguous"));
        }
        if (index < 0) index = i;
      }
    }
    if (index < 0) {
      ExpressionContext order_context = state->select_context;
      order_context.clause = "ORDER BY";
      TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(expr, order_context));
      for (int i = 0; i < static_cast<int>(items.size()) && index < 0; ++i) {
        if (ExpressionsEqual(*items[i], *bound)) index = i;
      }
      if (index < 0) {
        if (core.distinct) {
          return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                         "for SELECT DISTINCT, ORDER BY expressions must appear in select list");
        }
        index = static_cast<int>(items.size());
        items.push_back(std::move(bound));
        state->names.push_back(DerivedColumnName(expr));
      }
    }
    SortKey key;
    key.expression = MakeColumn(index, items[index]->result_type);
    key.ascending = item.ascending;
    key.nulls_first = item.nulls_first.value_or(!item.ascending);
    state->block.sort_keys.push_back(std::move(key));
  }
  return absl::OkStatus();
}

absl::Status QueryBinder::BindEmptyGroupValues(const parser::SelectCore& core, SelectBlockState* state) {
  // The value of a correlated aggregate over no rows (COUNT gives 0, not NULL): see subquery_binder.cc.
  const int first = state->correlation_key_count;
  if (first == 0 || !state->aggregate) return absl::OkStatus();
  if (state->lateral_count > 0) {
    // A grouped LATERAL block yields no rows for a tuple without input rows; one without GROUP BY yields one.
    if (!core.group_by.empty()) return absl::OkStatus();
    const std::vector<ExpressionPtr> replacements =
        EmptyGroupValues(state->plan->output(), state->aggregation, state->lateral_count);
    std::vector<const BoundExpression*> pointers;
    for (const ExpressionPtr& replacement : replacements) pointers.push_back(replacement.get());
    for (int i = first; i < state->visible; ++i) {
      state->block.lateral_empty_values.push_back(FoldConstantsDeep(SubstituteColumns(*state->items[i], pointers)));
    }
  } else {
    const std::vector<ExpressionPtr> replacements = EmptyGroupValues(state->plan->output(), state->aggregation, 0);
    std::vector<const BoundExpression*> pointers;
    for (const ExpressionPtr& replacement : replacements) pointers.push_back(replacement.get());
    ExpressionPtr empty = FoldConstantsDeep(SubstituteColumns(*state->items[first], pointers));
    if (empty->kind != ExpressionKind::kConstant) {
      return ErrorAt(absl::StatusCode::kUnimplemented, core.position,
                     "a correlated scalar subquery whose value over no rows is not a constant is not supported");
    }
    if (empty->constant.is_null()) return absl::OkStatus();
    state->block.has_empty_group_marker = true;
    state->block.empty_group_value = std::move(empty);
  }
  state->items.push_back(MakeConstant(Value::Boolean(true)));
  state->names.push_back("__matched");
  return absl::OkStatus();
}

}  // namespace tessera::optimizer
