// LATERAL subqueries in FROM: `FROM t, LATERAL (SELECT ... WHERE x = t.a) s`, `JOIN LATERAL (...) ON ...`,
// `LEFT JOIN LATERAL (...) ON ...`.
//
// The subquery is a dependent join: its rows are computed for each row of the FROM items before it. It is
// unnested as Neumann and Kemper do ("Unnesting Arbitrary Queries", BTW 2015), with the outer side reduced to
// what the subquery reads, as the general subquery decorrelation does (query_binder.h, OuterValueSet):
//   D = the distinct tuples of the earlier items' columns that the subquery reads (over a copy of their plan);
//   Q = the subquery's block with D cross joined to its FROM clause, so that those names read D's columns
//       anywhere in the block (Scope::set_lateral); D's columns lead Q's output, and its GROUP BY keys;
//   left JOIN Q ON left's columns = D's columns, NULL matching NULL (a NULL tuple has its own rows).
// An aggregate block without GROUP BY yields one row per tuple even without input rows, which its aggregation
// does not produce: the join is then a LEFT JOIN and a missing row takes the values over no rows (COUNT 0, the
// tuple's own columns, NULL otherwise; BoundSelectBlock::lateral_empty_values).
//
// Which columns the subquery reads is found by binding it once against all of the earlier items' columns
// (recording the names that resolve to them), then again against D.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/constant_folding.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/join_condition.h"
#include "optimizer/query_binder.h"

namespace tessera::optimizer {
namespace {

// A single SELECT block without WITH, LIMIT or OFFSET: the shape whose references to earlier FROM items are
// unnested. ORDER BY alone does not change which rows a FROM item has, and is ignored.
const parser::SelectCore* LateralBlock(const parser::SelectStatement& query) {
  if (!query.ctes.empty() || query.limit != nullptr || query.offset != nullptr) return nullptr;
  if (query.body->kind != parser::QueryBody::Kind::kSelect) return nullptr;
  return query.body->select.get();
}

// A value of `type` that COALESCE maps NULL to in a null-safe hash key; nullopt for the NULL type.
std::optional<Value> KeyStandIn(const Type& type) {
  switch (type.id()) {
    case TypeId::kNull:
      return std::nullopt;
    case TypeId::kBoolean:
      return Value::Boolean(false);
    case TypeId::kInteger:
      return Value::Integer(0);
    case TypeId::kBigInt:
      return Value::BigInt(0);
    case TypeId::kDouble:
      return Value::Double(0);
    case TypeId::kDecimal:
      return Value::Decimal(0, type);
    case TypeId::kChar:
    case TypeId::kVarchar:
      return Value::String("", type);
    case TypeId::kDate:
      return Value::Date(0);
    case TypeId::kTimestamp:
      return Value::Timestamp(0);
    case TypeId::kInterval:
      return Value::IntervalValue(Interval{});
  }
  return std::nullopt;
}

ExpressionPtr Coalesced(ExpressionPtr value, const Value& stand_in) {
  const Type type = value->result_type;
  std::vector<ExpressionPtr> arguments;
  arguments.push_back(std::move(value));
  arguments.push_back(MakeConstant(stand_in));
  return MakeFunction(FunctionId::kCoalesce, std::move(arguments), type);
}

// Adds `outer` (over the join's left input) = right column `right_index` to `join`, NULL equal to NULL. A
// nullable value takes two hash keys, (value IS NULL) and COALESCE(value, stand-in), so the join stays a hash
// join: two values match exactly when both are NULL or both equal.
void AddNullSafeKey(Join* join, ExpressionPtr outer, int right_index) {
  const std::vector<OutputColumn>& left = join->children[0]->output();
  const std::vector<OutputColumn>& right = join->children[1]->output();
  ExpressionPtr inner = MakeInputColumn(right, right_index);
  if (!IsNullable(*outer, left)) {
    join->left_keys.push_back(std::move(outer));
    join->right_keys.push_back(std::move(inner));
    return;
  }
  join->left_keys.push_back(MakeIsNull(outer->Clone()));
  join->right_keys.push_back(MakeIsNull(inner->Clone()));
  if (std::optional<Value> stand_in = KeyStandIn(outer->result_type); stand_in.has_value()) {
    join->left_keys.push_back(Coalesced(std::move(outer), *stand_in));
    join->right_keys.push_back(Coalesced(std::move(inner), *stand_in));
  }
}

}  // namespace

absl::StatusOr<std::vector<int>> QueryBinder::LateralColumns(const parser::TableRef& ref, const LogicalOperator& left,
                                                             const Scope& left_scope, const Scope* outer) {
  const parser::SelectCore* core = LateralBlock(*ref.subquery);
  if (core == nullptr) {
    // Bound as a derived table; a name of an earlier item is reported as an unsupported LATERAL reference.
    Scope source = left_scope;
    source.set_parent(outer);
    source.set_lateral_source(true);
    TESSERA_RETURN_IF_ERROR(BindStatement(*ref.subquery, &source).status());
    return std::vector<int>();
  }
  Scope all = left_scope;
  all.set_parent(nullptr);
  LateralValues values;
  values.scope = &all;
  values.plan = &left;
  values.finding_columns = true;
  SelectBlockOptions options;
  options.lateral = &values;
  TESSERA_RETURN_IF_ERROR(BindSelectBlock(*core, outer, options).status());
  std::vector<int> columns;
  for (int i = 0; i < static_cast<int>(all.lateral_used().size()); ++i) {
    if (all.lateral_used()[i]) columns.push_back(i);
  }
  return columns;
}

absl::StatusOr<BoundRelation> QueryBinder::BindLateralJoin(const parser::TableRef& ref, const std::vector<int>& columns,
                                                           BoundRelation left, const Scope& left_scope,
                                                           const Scope* outer, parser::JoinType type,
                                                           const parser::ParsedExpr* condition, Scope* scope) {
  const parser::SelectCore& core = *LateralBlock(*ref.subquery);  // LateralColumns found the columns in it
  const std::vector<OutputColumn> left_output = left.plan->output();
  const int key_count = static_cast<int>(columns.size());

  // D: the distinct tuples of the columns read; the block is bound over it.
  Scope values_scope;
  auto distinct = std::make_unique<Aggregate>();
  for (int column : columns) {
    values_scope.AddColumn(left_scope.columns()[column]);
    distinct->group_by.push_back(MakeInputColumn(left_output, column));
    distinct->group_names.push_back(left_output[column].name);
  }
  distinct->children.push_back(left.plan->Clone());
  distinct->RecomputeOutput();
  LateralValues values;
  values.scope = &values_scope;
  values.plan = distinct.get();
  SelectBlockOptions options;
  options.lateral = &values;
  TESSERA_ASSIGN_OR_RETURN(BoundSelectBlock block, BindSelectBlock(core, outer, options));

  LateralSide side;
  side.plan = std::move(block.plan);
  for (int column : columns) side.keys.push_back(MakeInputColumn(left_output, column));
  side.names.assign(block.names.begin() + key_count, block.names.end());
  for (ExpressionPtr& empty : block.lateral_empty_values) {
    RemapColumns(empty.get(), [&](int c) { return columns[c - kOuterColumnBase]; });
    side.empty_values.push_back(std::move(empty));
  }
  return JoinLateral(ref, std::move(left), left_scope, outer, type, condition, std::move(side), scope);
}

absl::StatusOr<BoundRelation> QueryBinder::JoinLateral(const parser::TableRef& ref, BoundRelation left,
                                                       const Scope& left_scope, const Scope* outer,
                                                       parser::JoinType type, const parser::ParsedExpr* condition,
                                                       LateralSide side, Scope* scope) {
  if (type == parser::JoinType::kRight || type == parser::JoinType::kFull) {
    return ErrorAt(absl::StatusCode::kUnimplemented, ref.position,
                   "a LATERAL item that reads an earlier FROM item may only be joined by a comma, "
                   "[INNER] JOIN, CROSS JOIN or LEFT JOIN, not RIGHT or FULL JOIN");
  }
  const std::vector<OutputColumn> left_output = left.plan->output();
  const int left_width = static_cast<int>(left_output.size());
  const int key_count = static_cast<int>(side.keys.size());
  const bool one_row_per_tuple = !side.empty_values.empty();
  const bool left_join = type == parser::JoinType::kLeft;
  const int item_count = static_cast<int>(side.names.size());

  // The item's columns as a FROM item.
  std::vector<std::string> names = std::move(side.names);
  if (ref.column_aliases.size() > names.size()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat("table '", ref.alias, "' has ", names.size(), " columns available but ",
                                ref.column_aliases.size(), " columns specified"));
  }
  for (size_t i = 0; i < ref.column_aliases.size(); ++i) names[i] = ref.column_aliases[i];
  const std::string relation = ref.alias.empty() && ref.kind == parser::TableRefKind::kFunction ? ref.name : ref.alias;
  const std::vector<OutputColumn> side_output = side.plan->output();
  Scope item_scope;
  for (int i = 0; i < item_count; ++i) {
    const OutputColumn& column = side_output[key_count + i];
    item_scope.AddColumn(
        ScopeColumn{relation, names[i], column.type, column.nullable || left_join || one_row_per_tuple});
  }
  *scope = left_scope;
  absl::Status appended = scope->Append(item_scope);
  if (!appended.ok()) return Rewrap(appended, ref.position);
  scope->set_parent(outer);

  // ON, over left ++ the item's columns.
  ExpressionPtr on;
  if (condition != nullptr) {
    ExpressionContext context;
    context.scope = scope;
    context.clause = "JOIN condition";
    TESSERA_ASSIGN_OR_RETURN(on, BindBoolean(*condition, context));
    if (IsBooleanConstant(*on, true)) on = nullptr;
  }
  if (left_join && on != nullptr && one_row_per_tuple) {
    return ErrorAt(absl::StatusCode::kUnimplemented, condition->position,
                   "LEFT JOIN LATERAL over an aggregate without GROUP BY is supported only with ON TRUE");
  }

  // left JOIN the item on the tuple's columns.
  std::unique_ptr<Join> join = MakeJoin(left_join || one_row_per_tuple ? JoinType::kLeftOuter : JoinType::kInner,
                                        std::move(left.plan), std::move(side.plan));
  for (int i = 0; i < key_count; ++i) {
    if (side.null_safe) {
      AddNullSafeKey(join.get(), std::move(side.keys[i]), i);
    } else {
      join->left_keys.push_back(std::move(side.keys[i]));
      join->right_keys.push_back(MakeInputColumn(side_output, i));
    }
  }
  if (left_join && on != nullptr) {
    RemapColumns(on.get(), [&](int i) { return i < left_width ? i : i + key_count; });
    AddJoinCondition(join.get(), std::move(on));
  }
  join->RecomputeOutput();
  const std::vector<OutputColumn> joined = join->output();

  // left's columns, then the item's (a missing row of a one-row-per-tuple block: its values over no rows).
  std::vector<ExpressionPtr> expressions;
  std::vector<std::string> output_names;
  for (int i = 0; i < left_width; ++i) {
    expressions.push_back(MakeInputColumn(joined, i));
    output_names.push_back(left.names.size() == left_output.size() ? left.names[i] : left_output[i].name);
  }
  for (int i = 0; i < item_count; ++i) {
    ExpressionPtr value = MakeInputColumn(joined, left_width + key_count + i);
    if (one_row_per_tuple) {
      ExpressionPtr empty = std::move(side.empty_values[i]);
      if (!(empty->kind == ExpressionKind::kConstant && empty->constant.is_null())) {
        std::vector<ExpressionPtr> when_then;
        when_then.push_back(
            MakeIsNull(MakeInputColumn(joined, left_width + key_count + item_count), /*negated=*/false));
        if (!(empty->result_type == value->result_type)) empty = MakeCast(std::move(empty), value->result_type);
        when_then.push_back(std::move(empty));
        const Type result_type = value->result_type;
        value = MakeCase(std::move(when_then), std::move(value), result_type);
      }
    }
    expressions.push_back(std::move(value));
    output_names.push_back(names[i]);
  }
  auto project = MakeProject(std::move(join), std::move(expressions), output_names);
  std::vector<std::string> relations;
  for (const OutputColumn& column : left_output) relations.push_back(column.relation);
  relations.resize(left_width + item_count, relation);
  project->relations = std::move(relations);
  project->RecomputeOutput();
  BoundRelation result;
  result.plan = std::move(project);
  if (!left_join && on != nullptr) result.plan = MakeFilter(std::move(result.plan), std::move(on));
  result.names = std::move(output_names);
  return result;
}

}  // namespace tessera::optimizer
