// Subqueries in expressions and their decorrelation into joins.
//
// A subquery block that may be correlated is bound with a Correlation: its WHERE conjuncts that mention the
// enclosing block are set aside (outer columns encoded as kOuterColumnBase + index, see query_binder.h)
// instead of filtering, and are turned into join conditions here:
//   [NOT] EXISTS / [NOT] IN as a WHERE conjunct  -> semi / anti join of the enclosing plan with the
//   subquery's
//       FROM + WHERE; equalities become keys, other correlated predicates the residual (TPC-H Q21's
//       l2.l_suppkey <> l1.l_suppkey). Blocks with GROUP BY, aggregates, LIMIT, WITH or set operations are
//       bound whole and must be uncorrelated.
//   scalar subquery computing an aggregate       -> Aggregate grouped by the inner sides of the correlation
//       equalities, joined back on the outer sides. Groups missing on the right mean "the aggregate over no
//       rows": NULL, except COUNT's 0, for which the block adds a marker column and the value becomes
//       CASE WHEN marker IS NULL THEN <value over no rows> ELSE value END.
//   EXISTS / IN elsewhere (under OR, in CASE, ...) -> a left join that yields a match marker (see
//   BindSubqueryMark).

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/constant_folding.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/join_condition.h"
#include "optimizer/query_binder.h"

namespace tessera::optimizer {
namespace {

using parser::ExprKind;
using parser::ParsedExpr;

// A single SELECT block without WITH, set operations, GROUP BY, HAVING, aggregates, LIMIT or OFFSET: its rows
// are exactly its filtered FROM clause, so a semi join can use FROM + WHERE directly.
const parser::SelectCore* SimpleBlock(const parser::SelectStatement& query) {
  if (!query.ctes.empty() || query.limit != nullptr || query.offset != nullptr) return nullptr;
  if (query.body->kind != parser::QueryBody::Kind::kSelect) return nullptr;
  const parser::SelectCore& core = *query.body->select;
  if (!core.group_by.empty() || core.having != nullptr) return nullptr;
  for (const parser::SelectItem& item : core.items) {
    if (QueryBinder::ContainsAggregate(*item.expr)) return nullptr;
  }
  return &core;
}

// A single SELECT block computing one aggregate value: no WITH, GROUP BY, HAVING, LIMIT or set operation.
const parser::SelectCore* AggregateValueBlock(const parser::SelectStatement& query) {
  if (!query.ctes.empty() || query.limit != nullptr || query.offset != nullptr) return nullptr;
  if (query.body->kind != parser::QueryBody::Kind::kSelect) return nullptr;
  const parser::SelectCore& core = *query.body->select;
  if (!core.group_by.empty() || core.having != nullptr || core.items.size() != 1) return nullptr;
  if (core.items[0].expr->kind == ExprKind::kStar || !QueryBinder::ContainsAggregate(*core.items[0].expr)) {
    return nullptr;
  }
  return &core;
}

// True when the plan yields exactly one row: an aggregate without grouping, under row-preserving nodes.
bool YieldsExactlyOneRow(const LogicalOperator& plan) {
  switch (plan.kind()) {
    case LogicalOperatorKind::kAggregate:
      return plan.As<Aggregate>().group_by.empty();
    case LogicalOperatorKind::kProject:
    case LogicalOperatorKind::kSort:
    case LogicalOperatorKind::kDistinct:
      return YieldsExactlyOneRow(*plan.children[0]);
    case LogicalOperatorKind::kValues:
      return plan.As<Values>().rows.size() == 1;
    case LogicalOperatorKind::kSeries:
      return plan.As<Series>().count == 1;
    default:
      return false;
  }
}

// Splits correlated conjuncts (outer encoded) into outer-side and inner-side equality keys; all of them must
// satisfy IsCorrelationEquality.
void SplitCorrelationKeys(std::vector<ExpressionPtr>* conjuncts, std::vector<ExpressionPtr>* outer_keys,
                          std::vector<ExpressionPtr>* inner_keys) {
  for (ExpressionPtr& conjunct : *conjuncts) {
    const int outer_side = ReferencesOnlyRange(*conjunct->children[0], kOuterColumnBase, 2 * kOuterColumnBase) ? 0 : 1;
    ExpressionPtr outer = std::move(conjunct->children[outer_side]);
    ShiftColumns(outer.get(), -kOuterColumnBase);
    outer_keys->push_back(std::move(outer));
    inner_keys->push_back(std::move(conjunct->children[1 - outer_side]));
  }
}

bool AllCorrelationEqualities(const std::vector<ExpressionPtr>& conjuncts) {
  for (const ExpressionPtr& conjunct : conjuncts) {
    if (!IsCorrelationEquality(*conjunct)) return false;
  }
  return true;
}

ExpressionPtr IsNullTest(ExpressionPtr operand, bool negated) {
  auto node = std::make_unique<BoundExpression>();
  node->kind = ExpressionKind::kIsNull;
  node->result_type = Type::Boolean();
  node->negated = negated;
  node->children.push_back(std::move(operand));
  return node;
}

// The columns of `input` followed by a TRUE marker column (NULL where a left join found no match).
LogicalOperatorPtr WithMarker(LogicalOperatorPtr input) {
  std::vector<ExpressionPtr> columns;
  std::vector<std::string> names;
  for (int i = 0; i < input->output_width(); ++i) {
    columns.push_back(MakeInputColumn(input->output(), i));
    names.push_back(input->output()[i].name);
  }
  columns.push_back(MakeConstant(Value::Boolean(true)));
  names.push_back("__matched");
  return MakeProject(std::move(input), std::move(columns), std::move(names));
}

// Distinct `keys` of `input` followed by a TRUE marker column.
LogicalOperatorPtr DistinctKeysWithMarker(LogicalOperatorPtr input, std::vector<ExpressionPtr> keys) {
  auto aggregate = std::make_unique<Aggregate>();
  for (size_t i = 0; i < keys.size(); ++i) aggregate->group_names.push_back(absl::StrCat("key", i));
  aggregate->group_by = std::move(keys);
  aggregate->children.push_back(std::move(input));
  aggregate->RecomputeOutput();
  return WithMarker(std::move(aggregate));
}

}  // namespace

bool IsCorrelationEquality(const BoundExpression& conjunct) {
  if (conjunct.kind != ExpressionKind::kComparison || conjunct.comparison != ComparisonOp::kEqual) return false;
  for (int side = 0; side < 2; ++side) {
    const BoundExpression& candidate = *conjunct.children[side];
    const BoundExpression& other = *conjunct.children[1 - side];
    if (MaxColumnIndex(candidate) >= 0 && ReferencesOnlyRange(candidate, kOuterColumnBase, 2 * kOuterColumnBase) &&
        MaxColumnIndex(other) >= 0 && !ReferencesRange(other, kOuterColumnBase, 2 * kOuterColumnBase)) {
      return true;
    }
  }
  return false;
}

void RemapCorrelation(BoundExpression* conjunct, const std::vector<int>& outer_columns, int outer_offset,
                      int inner_offset) {
  RemapColumns(conjunct, [&](int i) {
    if (i < kOuterColumnBase) return inner_offset + i;
    const auto it = std::lower_bound(outer_columns.begin(), outer_columns.end(), i - kOuterColumnBase);
    return outer_offset + static_cast<int>(it - outer_columns.begin());
  });
}

void AddJoinBackKey(Join* join, ExpressionPtr outer, int right_index, bool null_safe) {
  const std::vector<OutputColumn>& right = join->children[1]->output();
  if (!null_safe) {
    join->left_keys.push_back(std::move(outer));
    join->right_keys.push_back(MakeInputColumn(right, right_index));
    return;
  }
  const int left_width = join->children[0]->output_width();
  const Type type = right[right_index].type;
  std::vector<ExpressionPtr> both_null;
  both_null.push_back(IsNullTest(outer->Clone(), false));
  both_null.push_back(IsNullTest(MakeColumn(left_width + right_index, type), false));
  std::vector<ExpressionPtr> match;
  match.push_back(MakeComparison(ComparisonOp::kEqual, std::move(outer), MakeColumn(left_width + right_index, type)));
  match.push_back(CombineConjuncts(std::move(both_null)));
  AddJoinCondition(join, CombineDisjuncts(std::move(match)));
}

OuterValueSet QueryBinder::DistinctOuterValues(const std::vector<ExpressionPtr>& conjuncts,
                                               const LogicalOperator& outer_plan) {
  OuterValueSet values;
  std::vector<int> columns;
  for (const ExpressionPtr& conjunct : conjuncts) CollectColumns(*conjunct, &columns);
  for (int column : columns) {
    if (column >= kOuterColumnBase) values.outer_columns.push_back(column - kOuterColumnBase);
  }
  std::sort(values.outer_columns.begin(), values.outer_columns.end());
  values.outer_columns.erase(std::unique(values.outer_columns.begin(), values.outer_columns.end()),
                             values.outer_columns.end());
  const std::vector<OutputColumn>& output = outer_plan.output();
  auto aggregate = std::make_unique<Aggregate>();
  for (int column : values.outer_columns) {
    ExpressionPtr value = MakeInputColumn(output, column);
    bool rejects_null = !IsNullable(*value, output);
    for (const ExpressionPtr& conjunct : conjuncts) {
      if (rejects_null) break;
      rejects_null = RejectsNulls(*conjunct, kOuterColumnBase + column, kOuterColumnBase + column + 1);
    }
    values.null_safe.push_back(!rejects_null);
    aggregate->group_by.push_back(std::move(value));
    aggregate->group_names.push_back(output[column].name);
  }
  aggregate->children.push_back(outer_plan.Clone());
  aggregate->RecomputeOutput();
  values.plan = std::move(aggregate);
  return values;
}

bool QueryBinder::IsSemiJoinPredicate(const ParsedExpr& expr) {
  if (expr.kind == ExprKind::kExists || expr.kind == ExprKind::kInSubquery) return true;
  if (expr.kind == ExprKind::kUnary && expr.name == "NOT") {
    const ParsedExpr& operand = *expr.children[0];
    return operand.kind == ExprKind::kExists || operand.kind == ExprKind::kInSubquery;
  }
  return false;
}

absl::StatusOr<JoinableSubquery> QueryBinder::BindJoinableSubquery(const ParsedExpr& expr, const Scope& outer,
                                                                   bool want_value) {
  const parser::SelectStatement& query = *expr.subquery;
  JoinableSubquery result;
  if (const parser::SelectCore* core = SimpleBlock(query); core != nullptr) {
    Correlation correlation;
    correlation.outer = &outer;
    Scope scope;
    TESSERA_ASSIGN_OR_RETURN(result.plan, BindFromWhere(*core, &outer, &correlation, &scope));
    result.correlated = std::move(correlation.conjuncts);
    if (!want_value) return result;
    const ParsedExpr& item = *core->items[0].expr;
    if (core->items.size() == 1 && item.kind == ExprKind::kStar) {
      absl::StatusOr<std::vector<int>> columns = scope.ExpandStar(item.qualifier);
      if (!columns.ok()) return Rewrap(columns.status(), item.position);
      if (columns->size() == 1) {
        result.value = MakeColumn((*columns)[0], scope.columns()[(*columns)[0]].type);
        return result;
      }
    }
    if (core->items.size() != 1 || item.kind == ExprKind::kStar) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, item.position, "subquery has too many columns");
    }
    ExpressionContext context;
    context.scope = &scope;
    context.plan = &result.plan;
    context.clause = "SELECT";
    TESSERA_ASSIGN_OR_RETURN(result.value, BindExpression(item, context));
    return result;
  }
  TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, BindStatement(query, &outer));
  if (want_value) {
    if (relation.plan->output_width() != 1) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, query.position, "subquery has too many columns");
    }
    result.value = MakeInputColumn(relation.plan->output(), 0);
  }
  result.plan = std::move(relation.plan);
  return result;
}

absl::Status QueryBinder::AttachSemiJoin(const ParsedExpr& predicate, const Scope& scope, LogicalOperatorPtr* plan) {
  const ParsedExpr* expr = &predicate;
  bool negated = false;
  if (expr->kind == ExprKind::kUnary) {
    negated = true;
    expr = expr->children[0].get();
  }
  negated = negated != expr->negated;
  const bool is_in = expr->kind == ExprKind::kInSubquery;
  ExpressionPtr outer_value;
  if (is_in) {
    ExpressionContext context;
    context.scope = &scope;
    context.plan = plan;
    context.clause = "WHERE";
    TESSERA_ASSIGN_OR_RETURN(outer_value, BindExpression(*expr->children[0], context));
  }
  TESSERA_ASSIGN_OR_RETURN(JoinableSubquery subquery, BindJoinableSubquery(*expr, scope, is_in));
  if (is_in) TESSERA_RETURN_IF_ERROR(CoerceComparison(&outer_value, &subquery.value, *expr, "IN"));
  const int left_width = (*plan)->output_width();
  std::unique_ptr<Join> join =
      MakeJoin(negated ? JoinType::kAnti : JoinType::kSemi, std::move(*plan), std::move(subquery.plan));
  if (is_in) {
    join->null_aware = negated && (IsNullable(*outer_value, join->children[0]->output()) ||
                                   IsNullable(*subquery.value, join->children[1]->output()));
    join->left_keys.push_back(std::move(outer_value));
    join->right_keys.push_back(std::move(subquery.value));
  }
  for (ExpressionPtr& conjunct : subquery.correlated) {
    RemapColumns(conjunct.get(),
                 [left_width](int i) { return i >= kOuterColumnBase ? i - kOuterColumnBase : i + left_width; });
    AddJoinCondition(join.get(), std::move(conjunct));
  }
  join->RecomputeOutput();
  *plan = std::move(join);
  return absl::OkStatus();
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindScalarSubquery(const ParsedExpr& expr, ExpressionContext& context,
                                                              bool null_rejecting) {
  if (context.plan == nullptr) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("subqueries are not allowed in ", context.clause));
  }
  const parser::SelectStatement& query = *expr.subquery;
  LogicalOperatorPtr& plan = *context.plan;
  const parser::SelectCore* core = AggregateValueBlock(query);
  if (core != nullptr && context.aggregates == nullptr) {
    Correlation correlation;
    correlation.outer = context.scope;
    SelectBlockOptions options;
    options.correlation = &correlation;
    options.group_by_correlation = true;
    options.outer_plan = plan.get();
    TESSERA_ASSIGN_OR_RETURN(BoundSelectBlock block, BindSelectBlock(*core, context.scope, options));
    const int left_width = plan->output_width();
    if (block.outer_keys.empty()) {  // uncorrelated: exactly one row
      const Type type = block.plan->output()[0].type;
      plan = MakeJoin(JoinType::kCross, std::move(plan), std::move(block.plan));
      return MakeColumn(left_width, type);
    }
    const int key_count = static_cast<int>(block.outer_keys.size());
    const bool marker = block.has_empty_group_marker;
    std::unique_ptr<Join> join = MakeJoin(null_rejecting && !marker ? JoinType::kInner : JoinType::kLeftOuter,
                                          std::move(plan), std::move(block.plan));
    for (int i = 0; i < key_count; ++i) {
      AddJoinBackKey(join.get(), std::move(block.outer_keys[i]), i,
                     !block.null_safe_outer_keys.empty() && block.null_safe_outer_keys[i]);
    }
    const Type type = join->children[1]->output()[key_count].type;
    join->RecomputeOutput();
    ExpressionPtr value = MakeColumn(left_width + key_count, type);
    if (marker) {
      auto choice = std::make_unique<BoundExpression>();
      choice->kind = ExpressionKind::kCase;
      choice->result_type = type;
      choice->has_else = true;
      choice->children.push_back(IsNullTest(MakeColumn(left_width + key_count + 1, Type::Boolean()), false));
      choice->children.push_back(std::move(block.empty_group_value));
      choice->children.push_back(std::move(value));
      value = std::move(choice);
    }
    plan = std::move(join);
    return value;
  }
  TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, BindStatement(query, context.scope));
  if (relation.plan->output_width() != 1) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position, "subquery must return only one column");
  }
  const int left_width = plan->output_width();
  const Type type = relation.plan->output()[0].type;
  const bool one_row = YieldsExactlyOneRow(*relation.plan);
  std::unique_ptr<Join> join =
      MakeJoin(one_row ? JoinType::kCross : JoinType::kLeftOuter, std::move(plan), std::move(relation.plan));
  join->enforce_single_row = !one_row;
  plan = std::move(join);
  return MakeColumn(left_width, type);
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindSubqueryMark(const ParsedExpr& expr, ExpressionContext& context) {
  if (context.plan == nullptr) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("subqueries are not allowed in ", context.clause));
  }
  LogicalOperatorPtr& plan = *context.plan;
  const bool is_in = expr.kind == ExprKind::kInSubquery;
  ExpressionPtr outer_value;
  if (is_in) {
    TESSERA_ASSIGN_OR_RETURN(outer_value, BindExpression(*expr.children[0], context));
  }
  TESSERA_ASSIGN_OR_RETURN(JoinableSubquery subquery, BindJoinableSubquery(expr, *context.scope, is_in));
  const bool correlated = !subquery.correlated.empty();
  if (correlated && (is_in || context.aggregates != nullptr)) {
    return ErrorAt(absl::StatusCode::kUnimplemented, expr.position,
                   is_in ? "a correlated IN (subquery) is only supported as a condition ANDed at the top of WHERE"
                         : "a correlated EXISTS is not supported after GROUP BY");
  }
  const int left_width = plan->output_width();
  ExpressionPtr result;
  if (!is_in) {
    if (!correlated) {
      // EXISTS (uncorrelated): count(*) > 0 over the subquery, cross joined.
      auto count = std::make_unique<Aggregate>();
      AggregateCall call;
      call.function = AggregateKind::kCountStar;
      call.result_type = Type::BigInt();
      call.name = "count(*)";
      count->aggregates.push_back(std::move(call));
      count->children.push_back(std::move(subquery.plan));
      count->RecomputeOutput();
      plan = MakeJoin(JoinType::kCross, std::move(plan), std::move(count));
      result = MakeComparison(ComparisonOp::kGreater, MakeColumn(left_width, Type::BigInt()),
                              MakeConstant(Value::BigInt(0)));
    } else {
      std::vector<ExpressionPtr> outer_keys;
      std::vector<bool> null_safe;    // per key (general correlation only)
      LogicalOperatorPtr right_plan;  // distinct keys that have a match, then a TRUE marker
      if (AllCorrelationEqualities(subquery.correlated)) {
        std::vector<ExpressionPtr> inner_keys;
        SplitCorrelationKeys(&subquery.correlated, &outer_keys, &inner_keys);
        right_plan = DistinctKeysWithMarker(std::move(subquery.plan), std::move(inner_keys));
      } else {
        // General correlation: the distinct outer tuples semi-joined with the subquery on its conditions.
        OuterValueSet values = DistinctOuterValues(subquery.correlated, *plan);
        null_safe = std::move(values.null_safe);
        const int outer_count = static_cast<int>(values.outer_columns.size());
        for (int column : values.outer_columns) outer_keys.push_back(MakeInputColumn(plan->output(), column));
        std::unique_ptr<Join> matched = MakeJoin(JoinType::kSemi, std::move(values.plan), std::move(subquery.plan));
        for (ExpressionPtr& conjunct : subquery.correlated) {
          RemapCorrelation(conjunct.get(), values.outer_columns, 0, outer_count);
          AddJoinCondition(matched.get(), std::move(conjunct));
        }
        matched->RecomputeOutput();
        right_plan = WithMarker(std::move(matched));
      }
      const int key_count = static_cast<int>(outer_keys.size());
      std::unique_ptr<Join> join = MakeJoin(JoinType::kLeftOuter, std::move(plan), std::move(right_plan));
      for (int i = 0; i < key_count; ++i) {
        AddJoinBackKey(join.get(), std::move(outer_keys[i]), i, !null_safe.empty() && null_safe[i]);
      }
      join->RecomputeOutput();
      plan = std::move(join);
      result = IsNullTest(MakeColumn(left_width + key_count, Type::Boolean()), /*negated=*/true);
    }
  } else {
    // x IN (S): TRUE if some s = x; else NULL if x is NULL (and S is not empty) or S has a NULL; else FALSE.
    TESSERA_RETURN_IF_ERROR(CoerceComparison(&outer_value, &subquery.value, expr, "IN"));
    LogicalOperatorPtr counted = subquery.plan->Clone();
    ExpressionPtr counted_value = subquery.value->Clone();
    std::vector<ExpressionPtr> keys;
    keys.push_back(std::move(subquery.value));
    std::unique_ptr<Join> matches = MakeJoin(JoinType::kLeftOuter, std::move(plan),
                                             DistinctKeysWithMarker(std::move(subquery.plan), std::move(keys)));
    matches->left_keys.push_back(outer_value->Clone());
    matches->right_keys.push_back(MakeInputColumn(matches->children[1]->output(), 0));
    matches->RecomputeOutput();
    auto counts = std::make_unique<Aggregate>();
    AggregateCall all_rows;
    all_rows.function = AggregateKind::kCountStar;
    all_rows.result_type = Type::BigInt();
    all_rows.name = "count(*)";
    AggregateCall non_null;
    non_null.function = AggregateKind::kCount;
    non_null.argument = std::move(counted_value);
    non_null.result_type = Type::BigInt();
    non_null.name = "count";
    counts->aggregates.push_back(std::move(all_rows));
    counts->aggregates.push_back(std::move(non_null));
    counts->children.push_back(std::move(counted));
    counts->RecomputeOutput();
    plan = MakeJoin(JoinType::kCross, std::move(matches), std::move(counts));
    const int marker = left_width + 1;
    const int total = left_width + 2;
    const int non_null_count = left_width + 3;
    auto choice = std::make_unique<BoundExpression>();
    choice->kind = ExpressionKind::kCase;
    choice->result_type = Type::Boolean();
    choice->has_else = true;
    choice->children.push_back(IsNullTest(MakeColumn(marker, Type::Boolean()), true));
    choice->children.push_back(MakeConstant(Value::Boolean(true)));
    choice->children.push_back(
        MakeComparison(ComparisonOp::kEqual, MakeColumn(total, Type::BigInt()), MakeConstant(Value::BigInt(0))));
    choice->children.push_back(MakeConstant(Value::Boolean(false)));
    std::vector<ExpressionPtr> unknown;
    unknown.push_back(IsNullTest(std::move(outer_value), false));
    unknown.push_back(MakeComparison(ComparisonOp::kLess, MakeColumn(non_null_count, Type::BigInt()),
                                     MakeColumn(total, Type::BigInt())));
    choice->children.push_back(CombineDisjuncts(std::move(unknown)));
    choice->children.push_back(MakeConstant(Value::Null(Type::Boolean())));
    choice->children.push_back(MakeConstant(Value::Boolean(false)));
    result = std::move(choice);
  }
  if (expr.negated) {
    auto negation = std::make_unique<BoundExpression>();
    negation->kind = ExpressionKind::kNot;
    negation->result_type = Type::Boolean();
    negation->children.push_back(std::move(result));
    result = std::move(negation);
  }
  return result;
}

}  // namespace tessera::optimizer
