// FROM clauses: base tables, CTE references, views, derived tables, and joins with ON / USING / NATURAL.
// Invariant: the scope built for a FROM item lists exactly the item's plan output columns, in order.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/join_condition.h"
#include "optimizer/query_binder.h"
#include "parser/parser.h"

namespace tessera::optimizer {
namespace {

constexpr int kMaxViewDepth = 32;

// The unique non-merged column `name` of `scope`, or -1 (none) / -2 (several).
int FindUsingColumn(const Scope& scope, const std::string& name) {
  int found = -1;
  for (int i = 0; i < scope.size(); ++i) {
    const ScopeColumn& column = scope.columns()[i];
    if (column.merged || column.name != name) continue;
    if (found >= 0) return -2;
    found = i;
  }
  return found;
}

}  // namespace

absl::StatusOr<BoundRelation> QueryBinder::BindFrom(const std::vector<std::unique_ptr<parser::TableRef>>& from,
                                                    const Scope* outer, Scope* scope) {
  BoundRelation result;
  if (from.empty()) {
    // SELECT without FROM reads one row with no columns.
    auto values = std::make_unique<Values>();
    values->rows.emplace_back();
    values->RecomputeOutput();
    result.plan = std::move(values);
    scope->set_parent(outer);
    return result;
  }
  for (const auto& ref : from) {
    if (ref->lateral && ref->kind == parser::TableRefKind::kSubquery && result.plan != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(std::vector<int> columns, LateralColumns(*ref, *result.plan, *scope, outer));
      if (!columns.empty()) {
        Scope joined;
        TESSERA_ASSIGN_OR_RETURN(result, BindLateralJoin(*ref, columns, std::move(result), *scope, outer,
                                                         parser::JoinType::kCross, nullptr, &joined));
        *scope = std::move(joined);
        continue;
      }
    }
    if (ref->kind == parser::TableRefKind::kFunction && result.plan != nullptr) {
      Scope joined;
      TESSERA_ASSIGN_OR_RETURN(
          std::optional<BoundRelation> series,
          BindLateralSeries(*ref, &result, *scope, outer, parser::JoinType::kCross, nullptr, &joined));
      if (series.has_value()) {
        result = std::move(*series);
        *scope = std::move(joined);
        continue;
      }
    }
    Scope item_scope;
    TESSERA_ASSIGN_OR_RETURN(BoundRelation item, BindTableRef(*ref, outer, &item_scope));
    if (result.plan == nullptr) {
      result.plan = std::move(item.plan);
      *scope = std::move(item_scope);
      continue;
    }
    absl::Status appended = scope->Append(item_scope);
    if (!appended.ok()) return Rewrap(appended, ref->position);
    result.plan = MakeJoin(JoinType::kCross, std::move(result.plan), std::move(item.plan));
  }
  scope->set_parent(outer);
  result.names = result.plan->OutputNames();
  return result;
}

absl::StatusOr<BoundRelation> QueryBinder::BindTableRef(const parser::TableRef& ref, const Scope* outer, Scope* scope) {
  switch (ref.kind) {
    case parser::TableRefKind::kBaseTable:
      return BindNamedRelation(ref, outer, scope);
    case parser::TableRefKind::kSubquery: {
      TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, BindStatement(*ref.subquery, outer));
      TESSERA_RETURN_IF_ERROR(ScopeForRelation(ref, ref.alias, ref.column_aliases, &relation, scope));
      return relation;
    }
    case parser::TableRefKind::kFunction: {
      TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, BindTableFunction(ref));
      TESSERA_RETURN_IF_ERROR(ScopeForRelation(ref, ref.alias, ref.column_aliases, &relation, scope));
      return relation;
    }
    case parser::TableRefKind::kJoin: {
      TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, BindJoin(ref, outer, scope));
      if (!ref.alias.empty()) {
        Scope renamed;
        TESSERA_RETURN_IF_ERROR(ScopeForRelation(ref, ref.alias, ref.column_aliases, &relation, &renamed));
        *scope = std::move(renamed);
      }
      return relation;
    }
  }
  return ErrorAt(absl::StatusCode::kInternal, ref.position, "unknown FROM item");
}

absl::Status QueryBinder::ScopeForRelation(const parser::TableRef& ref, const std::string& alias,
                                           const std::vector<std::string>& column_aliases, BoundRelation* relation,
                                           Scope* scope) {
  const std::vector<OutputColumn> output = relation->plan->output();
  if (column_aliases.size() > output.size()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat("table '", alias.empty() ? ref.name : alias, "' has ", output.size(),
                                " columns available but ", column_aliases.size(), " columns specified"));
  }
  std::vector<std::string> names =
      relation->names.size() == output.size() ? relation->names : relation->plan->OutputNames();
  for (size_t i = 0; i < column_aliases.size(); ++i) names[i] = column_aliases[i];
  bool rename = false;
  for (size_t i = 0; i < output.size(); ++i) {
    rename |= output[i].name != names[i];
  }
  if (rename) {
    std::vector<int> all;
    for (size_t i = 0; i < output.size(); ++i) all.push_back(static_cast<int>(i));
    auto project = MakeColumnSelection(std::move(relation->plan), all);
    project->names = names;
    project->relations.assign(output.size(), alias);
    project->RecomputeOutput();
    relation->plan = std::move(project);
  }
  *scope = Scope();
  for (size_t i = 0; i < output.size(); ++i) {
    // The row-id column of DELETE / UPDATE (PlanQueryWithRowIds) is reachable only qualified, like a merged one.
    const bool hidden = names[i] == kRowIdColumnName;
    scope->AddColumn(ScopeColumn{alias, names[i], output[i].type, output[i].nullable, hidden});
  }
  relation->names = std::move(names);
  return absl::OkStatus();
}

absl::StatusOr<BoundRelation> QueryBinder::BindNamedRelation(const parser::TableRef& ref, const Scope* outer,
                                                             Scope* scope) {
  const std::string alias = ref.alias.empty() ? ref.name : ref.alias;
  if (const CteEntry* found = FindCte(ref.name); found != nullptr) {
    const CteEntry entry = *found;
    if (entry.working_table != nullptr) {  // the recursive term of a WITH RECURSIVE query reads its own name
      ++working_table_references_;
      BoundRelation relation;
      relation.plan = entry.working_table->Clone();
      relation.names = relation.plan->OutputNames();
      TESSERA_RETURN_IF_ERROR(ScopeForRelation(ref, alias, ref.column_aliases, &relation, scope));
      return relation;
    }
    TESSERA_RETURN_IF_ERROR(CountExpansion(ref));
    std::optional<BoundRelation> recursive;
    if (entry.cte->recursive) {
      TESSERA_ASSIGN_OR_RETURN(recursive, BindRecursiveCte(entry));
    }
    if (recursive.has_value()) {
      TESSERA_RETURN_IF_ERROR(ScopeForRelation(ref, alias, ref.column_aliases, &*recursive, scope));
      return std::move(*recursive);
    }
    std::vector<CteEntry> saved = ctes_;
    ctes_.resize(entry.visible);  // a WITH query sees only the ones defined before it
    absl::StatusOr<BoundRelation> bound = BindStatement(*entry.cte->query, nullptr);
    ctes_ = std::move(saved);
    if (!bound.ok()) return bound.status();
    BoundRelation relation = *std::move(bound);
    if (entry.cte->column_names.size() > relation.names.size()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, entry.cte->position,
                     absl::StrCat("WITH query '", entry.cte->name, "' has ", relation.names.size(),
                                  " columns available but ", entry.cte->column_names.size(), " columns specified"));
    }
    for (size_t i = 0; i < entry.cte->column_names.size(); ++i) relation.names[i] = entry.cte->column_names[i];
    TESSERA_RETURN_IF_ERROR(ScopeForRelation(ref, alias, ref.column_aliases, &relation, scope));
    return relation;
  }
  const bool target = target_table_ != nullptr && ref.name == target_table_->name;
  if (target || catalog_.HasTable(ref.name)) {
    absl::StatusOr<std::shared_ptr<const TableDescriptor>> table = target ? target_table_ : catalog_.GetTable(ref.name);
    if (!table.ok()) return Rewrap(table.status(), ref.position);  // dropped concurrently
    auto scan = std::make_unique<TableScan>();
    scan->table = *table;
    scan->alias = alias;
    for (size_t i = 0; i < (*table)->columns.size(); ++i) scan->columns.push_back(static_cast<int>(i));
    scan->RecomputeOutput();
    BoundRelation relation;
    relation.names = scan->OutputNames();
    relation.plan = std::move(scan);
    TESSERA_RETURN_IF_ERROR(ScopeForRelation(ref, alias, ref.column_aliases, &relation, scope));
    return relation;
  }
  if (catalog_.HasView(ref.name)) {
    absl::StatusOr<std::shared_ptr<const ViewDescriptor>> view = catalog_.GetView(ref.name);
    if (!view.ok()) return Rewrap(view.status(), ref.position);
    TESSERA_RETURN_IF_ERROR(CountExpansion(ref));
    TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, BindView(ref, **view));
    TESSERA_RETURN_IF_ERROR(ScopeForRelation(ref, alias, ref.column_aliases, &relation, scope));
    return relation;
  }
  std::vector<std::string> candidates;
  for (const auto& table : catalog_.ListTables()) candidates.push_back(table->name);
  for (const auto& view : catalog_.ListViews()) candidates.push_back(view->name);
  for (const CteEntry& entry : ctes_) candidates.push_back(entry.cte->name);
  const std::string hint = ClosestName(ref.name, candidates);
  return ErrorAt(absl::StatusCode::kNotFound, ref.position,
                 absl::StrCat("table '", ref.name, "' does not exist",
                              hint.empty() ? "" : absl::StrCat("; did you mean '", hint, "'?")));
}

absl::Status QueryBinder::CountExpansion(const parser::TableRef& ref) {
  if (++*expanded_references_ <= kMaxExpandedReferences) return absl::OkStatus();
  return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                 absl::StrCat("query too large: more than ", kMaxExpandedReferences,
                              " references to WITH queries and views after expansion"));
}

absl::StatusOr<BoundRelation> QueryBinder::BindView(const parser::TableRef& ref, const ViewDescriptor& view) {
  if (std::find(expanding_views_.begin(), expanding_views_.end(), view.name) != expanding_views_.end() ||
      view_depth_ >= kMaxViewDepth) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat("view '", view.name, "' references itself"));
  }
  absl::StatusOr<std::unique_ptr<parser::Statement>> parsed = parser::ParseStatement(view.query_text);
  if (!parsed.ok()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat("view '", view.name, "' cannot be parsed: ", std::string(parsed.status().message())));
  }
  if ((*parsed)->kind != parser::StatementKind::kSelect) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat("view '", view.name, "' is not a SELECT statement"));
  }
  const auto& select = static_cast<const parser::SelectQueryStatement&>(**parsed);
  std::vector<std::string> expanding = expanding_views_;
  expanding.push_back(view.name);
  QueryBinder view_binder(catalog_, view.query_text, view.name, view_depth_ + 1, std::move(expanding));
  view_binder.expanded_references_ = expanded_references_;
  view_binder.options_ = options_;
  TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, view_binder.BindStatement(*select.query, nullptr));
  for (size_t i = 0; i < view.column_names.size() && i < relation.names.size(); ++i) {
    relation.names[i] = view.column_names[i];
  }
  return relation;
}

absl::StatusOr<std::vector<QueryBinder::UsingPair>> QueryBinder::FindUsingPairs(const parser::TableRef& ref,
                                                                                const Scope& left_scope,
                                                                                const Scope& right_scope) {
  std::vector<std::string> using_columns = ref.using_columns;
  if (ref.natural) {
    for (const ScopeColumn& column : left_scope.columns()) {
      if (!column.merged && FindUsingColumn(right_scope, column.name) >= 0 &&
          std::find(using_columns.begin(), using_columns.end(), column.name) == using_columns.end()) {
        using_columns.push_back(column.name);
      }
    }
  }
  std::vector<UsingPair> using_pairs;
  for (const std::string& name : using_columns) {
    const int l = FindUsingColumn(left_scope, name);
    const int r = FindUsingColumn(right_scope, name);
    if (l == -2 || r == -2) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, ref.right->position,
                     absl::StrCat("common column name '", name, "' appears more than once in ",
                                  l == -2 ? "left" : "right", " table"));
    }
    if (l < 0 || r < 0) {
      return ErrorAt(absl::StatusCode::kNotFound, ref.right->position,
                     absl::StrCat("column '", name, "' specified in USING clause does not exist in ",
                                  l < 0 ? "left" : "right", " table"));
    }
    using_pairs.emplace_back(l, r);
  }
  return using_pairs;
}

absl::Status QueryBinder::MergeUsingColumns(const parser::TableRef& ref, const std::vector<UsingPair>& using_pairs,
                                            const Scope& left_scope, int left_width, int right_width,
                                            BoundRelation* result, Scope* scope) {
  const bool right_join = ref.join_type == parser::JoinType::kRight;
  std::vector<int> star;
  std::vector<bool> in_using(left_width + right_width, false);
  if (ref.join_type == parser::JoinType::kFull) {
    // The merged column is COALESCE(left, right), appended after all columns.
    const std::vector<OutputColumn> output = result->plan->output();
    std::vector<ExpressionPtr> expressions;
    std::vector<std::string> names;
    for (int i = 0; i < static_cast<int>(output.size()); ++i) {
      expressions.push_back(MakeInputColumn(output, i));
      names.push_back(output[i].name);
    }
    std::vector<std::string> relations;
    for (const OutputColumn& column : output) relations.push_back(column.relation);
    for (const auto& [l, r] : using_pairs) {
      ExpressionPtr a = MakeInputColumn(output, l);
      ExpressionPtr b = MakeInputColumn(output, left_width + r);
      parser::ParsedExpr where;
      where.position = ref.right->position;
      TESSERA_RETURN_IF_ERROR(CoerceComparison(&a, &b, where, "JOIN USING"));
      auto coalesce = std::make_unique<BoundExpression>();
      coalesce->kind = ExpressionKind::kFunction;
      coalesce->function = FunctionId::kCoalesce;
      coalesce->result_type = a->result_type;
      coalesce->children.push_back(std::move(a));
      coalesce->children.push_back(std::move(b));
      const int index = static_cast<int>(expressions.size());
      scope->AddColumn(ScopeColumn{"", left_scope.columns()[l].name, coalesce->result_type, true, false});
      expressions.push_back(std::move(coalesce));
      names.push_back(left_scope.columns()[l].name);
      relations.push_back("");
      scope->column(l).merged = true;
      scope->column(left_width + r).merged = true;
      in_using[l] = in_using[left_width + r] = true;
      star.push_back(index);
    }
    auto project = MakeProject(std::move(result->plan), std::move(expressions), std::move(names));
    project->relations = std::move(relations);
    project->RecomputeOutput();
    result->plan = std::move(project);
  } else {
    for (const auto& [l, r] : using_pairs) {
      const int kept = right_join ? left_width + r : l;
      const int hidden = right_join ? l : left_width + r;
      scope->column(hidden).merged = true;
      in_using[l] = in_using[left_width + r] = true;
      star.push_back(kept);
    }
  }
  for (int i = 0; i < left_width + right_width; ++i) {
    if (!in_using[i] && !scope->columns()[i].merged) star.push_back(i);
  }
  scope->set_star_columns(std::move(star));
  return absl::OkStatus();
}

absl::StatusOr<BoundRelation> QueryBinder::BindJoin(const parser::TableRef& ref, const Scope* outer, Scope* scope) {
  Scope left_scope;
  Scope right_scope;
  TESSERA_ASSIGN_OR_RETURN(BoundRelation left, BindTableRef(*ref.left, outer, &left_scope));
  if (ref.right->lateral && ref.right->kind == parser::TableRefKind::kSubquery) {
    TESSERA_ASSIGN_OR_RETURN(std::vector<int> columns, LateralColumns(*ref.right, *left.plan, left_scope, outer));
    if (!columns.empty()) {
      if (ref.natural || !ref.using_columns.empty()) {
        return ErrorAt(absl::StatusCode::kUnimplemented, ref.right->position,
                       "NATURAL or USING joins with a LATERAL subquery that reads an earlier FROM item are not "
                       "supported; use ON");
      }
      return BindLateralJoin(*ref.right, columns, std::move(left), left_scope, outer, ref.join_type,
                             ref.join_condition.get(), scope);
    }
  }
  if (ref.right->kind == parser::TableRefKind::kFunction && !ref.natural && ref.using_columns.empty()) {
    TESSERA_ASSIGN_OR_RETURN(
        std::optional<BoundRelation> series,
        BindLateralSeries(*ref.right, &left, left_scope, outer, ref.join_type, ref.join_condition.get(), scope));
    if (series.has_value()) return std::move(*series);
  }
  TESSERA_ASSIGN_OR_RETURN(BoundRelation right, BindTableRef(*ref.right, outer, &right_scope));
  const int left_width = left_scope.size();
  const int right_width = right_scope.size();

  TESSERA_ASSIGN_OR_RETURN(const std::vector<UsingPair> using_pairs, FindUsingPairs(ref, left_scope, right_scope));

  *scope = left_scope;
  absl::Status appended = scope->Append(right_scope);
  if (!appended.ok()) return Rewrap(appended, ref.right->position);
  scope->set_parent(outer);

  // The condition, over left ++ right.
  ExpressionPtr condition;
  if (ref.join_condition != nullptr) {
    ExpressionContext context;
    context.scope = scope;
    context.clause = "JOIN condition";
    TESSERA_ASSIGN_OR_RETURN(condition, BindBoolean(*ref.join_condition, context));
  } else if (!using_pairs.empty()) {
    std::vector<ExpressionPtr> equalities;
    for (const auto& [l, r] : using_pairs) {
      ExpressionPtr a = MakeColumn(l, left_scope.columns()[l].type);
      ExpressionPtr b = MakeColumn(left_width + r, right_scope.columns()[r].type);
      parser::ParsedExpr where;
      where.position = ref.right->position;
      TESSERA_RETURN_IF_ERROR(CoerceComparison(&a, &b, where, "JOIN USING"));
      equalities.push_back(MakeComparison(ComparisonOp::kEqual, std::move(a), std::move(b)));
    }
    condition = CombineConjuncts(std::move(equalities));
  }

  JoinType type = JoinType::kInner;
  switch (ref.join_type) {
    case parser::JoinType::kInner:
      type = JoinType::kInner;
      break;
    case parser::JoinType::kCross:
      type = JoinType::kCross;
      break;
    case parser::JoinType::kLeft:
    case parser::JoinType::kRight:
      type = JoinType::kLeftOuter;
      break;
    case parser::JoinType::kFull:
      type = JoinType::kFullOuter;
      break;
  }
  const bool right_join = ref.join_type == parser::JoinType::kRight;
  std::unique_ptr<Join> join = right_join ? MakeJoin(type, std::move(right.plan), std::move(left.plan))
                                          : MakeJoin(type, std::move(left.plan), std::move(right.plan));
  if (condition != nullptr) {
    if (right_join) {
      RemapColumns(condition.get(), [&](int i) { return i < left_width ? i + right_width : i - left_width; });
    }
    AddJoinCondition(join.get(), std::move(condition));
  }
  join->RecomputeOutput();
  BoundRelation result;
  result.plan = std::move(join);
  if (right_join) {  // back to left ++ right column order
    std::vector<int> order;
    for (int i = 0; i < left_width; ++i) order.push_back(right_width + i);
    for (int i = 0; i < right_width; ++i) order.push_back(i);
    result.plan = MakeColumnSelection(std::move(result.plan), order);
  }

  if (!using_pairs.empty()) {
    TESSERA_RETURN_IF_ERROR(MergeUsingColumns(ref, using_pairs, left_scope, left_width, right_width, &result, scope));
  }
  result.names = result.plan->OutputNames();
  for (int i = 0; i < scope->size() && i < static_cast<int>(result.names.size()); ++i) {
    result.names[i] = scope->columns()[i].name;
  }
  return result;
}

}  // namespace tessera::optimizer
