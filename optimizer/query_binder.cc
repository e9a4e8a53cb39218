// Statements: WITH, set operations, ORDER BY and LIMIT; the binder's entry points.

#include "optimizer/query_binder.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/clock.h"
#include "common/status_macros.h"
#include "optimizer/binder.h"
#include "optimizer/constant_folding.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/rules/rule_list.h"
#include "optimizer/type_rules.h"
#include "parser/parser.h"

namespace tessera::optimizer {
namespace {

using parser::ExprKind;
using parser::LiteralKind;
using parser::ParsedExpr;

const parser::SourcePosition& FirstPosition(const parser::QueryBody& body) {
  switch (body.kind) {
    case parser::QueryBody::Kind::kSelect:
      return body.select->position;
    case parser::QueryBody::Kind::kSetOperation:
      return FirstPosition(*body.left);
    case parser::QueryBody::Kind::kNested:
      return body.nested->position;
  }
  return body.select->position;
}

const char* SetOperationName(parser::SetOperation operation) {
  switch (operation) {
    case parser::SetOperation::kUnion:
      return "UNION";
    case parser::SetOperation::kIntersect:
      return "INTERSECT";
    case parser::SetOperation::kExcept:
      return "EXCEPT";
  }
  return "UNION";
}

}  // namespace

absl::StatusOr<std::unique_ptr<LogicalOperator>> BindQuery(const parser::SelectStatement& query, const Catalog& catalog,
                                                           std::string_view sql_text) {
  QueryBinder binder(catalog, sql_text, "", 0, {});
  TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, binder.BindStatement(query, nullptr));
  return std::move(relation.plan);
}

absl::StatusOr<std::unique_ptr<LogicalOperator>> PlanQuery(const parser::SelectStatement& query, const Catalog& catalog,
                                                           std::string_view sql_text, const OptimizerOptions& options,
                                                           OptimizerReport* report) {
  const int64_t start = MonotonicNanos();
  QueryBinder binder(catalog, sql_text, "", 0, {});
  binder.set_options(&options);
  TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, binder.BindStatement(query, nullptr));
  if (report != nullptr) report->bind_ns = MonotonicNanos() - start;
  return RunRules(std::move(relation.plan), options, report);
}

absl::StatusOr<std::unique_ptr<LogicalOperator>> PlanQueryWithRowIds(const parser::SelectStatement& query,
                                                                     const Catalog& catalog, std::string_view sql_text,
                                                                     std::shared_ptr<const TableDescriptor> target,
                                                                     const OptimizerOptions& options) {
  QueryBinder binder(catalog, sql_text, "", 0, {});
  binder.set_target_table(std::move(target));
  binder.set_options(&options);
  TESSERA_ASSIGN_OR_RETURN(BoundRelation relation, binder.BindStatement(query, nullptr));
  return RunRules(std::move(relation.plan), options, nullptr);
}

QueryBinder::QueryBinder(const Catalog& catalog, std::string_view sql, std::string view_name, int view_depth,
                         std::vector<std::string> expanding_views)
    : catalog_(catalog),
      sql_(sql),
      view_name_(std::move(view_name)),
      view_depth_(view_depth),
      expanding_views_(std::move(expanding_views)) {}

absl::Status QueryBinder::ErrorAt(absl::StatusCode code, const parser::SourcePosition& position,
                                  std::string_view message) const {
  std::string text = parser::FormatErrorWithCaret(sql_, position, message);
  if (!view_name_.empty()) text = absl::StrCat("in view '", view_name_, "': ", text);
  return absl::Status(code, text);
}

absl::Status QueryBinder::Rewrap(const absl::Status& status, const parser::SourcePosition& position) const {
  return ErrorAt(status.code(), position, std::string(status.message()));
}

const QueryBinder::CteEntry* QueryBinder::FindCte(const std::string& name) const {
  for (auto it = ctes_.rbegin(); it != ctes_.rend(); ++it) {
    if (it->cte->name == name) return &*it;
  }
  return nullptr;
}

absl::StatusOr<BoundRelation> QueryBinder::BindStatement(const parser::SelectStatement& statement, const Scope* outer) {
  const size_t saved_ctes = ctes_.size();
  for (size_t i = 0; i < statement.ctes.size(); ++i) {
    const parser::CommonTableExpr& cte = statement.ctes[i];
    for (size_t j = 0; j < i; ++j) {
      if (statement.ctes[j].name == cte.name) {
        ctes_.resize(saved_ctes);
        return ErrorAt(absl::StatusCode::kInvalidArgument, cte.position,
                       absl::StrCat("WITH query name '", cte.name, "' specified more than once"));
      }
    }
    ctes_.push_back(CteEntry{&cte, ctes_.size()});
  }
  std::vector<SortKey> sort_keys;
  int visible = 0;
  absl::StatusOr<BoundRelation> body = BindBody(*statement.body, outer, &statement.order_by, &sort_keys, &visible);
  ctes_.resize(saved_ctes);
  if (!body.ok()) return body.status();
  BoundRelation relation = *std::move(body);

  if (!sort_keys.empty()) {
    auto sort = std::make_unique<Sort>();
    sort->keys = std::move(sort_keys);
    sort->children.push_back(std::move(relation.plan));
    sort->RecomputeOutput();
    relation.plan = std::move(sort);
  }
  if (statement.limit != nullptr || statement.offset != nullptr) {
    auto limit = std::make_unique<Limit>();
    if (statement.limit != nullptr &&
        !(statement.limit->kind == ExprKind::kLiteral && statement.limit->literal_kind == LiteralKind::kNull)) {
      TESSERA_ASSIGN_OR_RETURN(limit->limit, BindCount(*statement.limit, "LIMIT"));
    }
    if (statement.offset != nullptr) {
      TESSERA_ASSIGN_OR_RETURN(limit->offset, BindCount(*statement.offset, "OFFSET"));
    }
    limit->children.push_back(std::move(relation.plan));
    limit->RecomputeOutput();
    relation.plan = std::move(limit);
  }
  if (visible < relation.plan->output_width()) {
    std::vector<int> columns;
    for (int i = 0; i < visible; ++i) columns.push_back(i);
    relation.plan = MakeColumnSelection(std::move(relation.plan), columns);
  }
  return relation;
}

absl::StatusOr<int64_t> QueryBinder::BindCount(const ParsedExpr& expr, std::string_view clause) {
  Scope empty;
  ExpressionContext context;
  context.scope = &empty;
  context.clause = std::string(clause);
  absl::StatusOr<ExpressionPtr> bound_or = BindExpression(expr, context);
  // LIMIT sees no columns: say what is expected rather than that the column does not exist.
  if (!bound_or.ok() && bound_or.status().code() == absl::StatusCode::kNotFound &&
      expr.kind == parser::ExprKind::kColumnRef) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat(std::string(clause), " must be a non-negative integer constant, not a column"));
  }
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, std::move(bound_or));
  bound = FoldConstantsDeep(std::move(bound));
  const bool integer = bound->result_type.id() == TypeId::kInteger || bound->result_type.id() == TypeId::kBigInt;
  if (bound->kind != ExpressionKind::kConstant || !integer || bound->constant.is_null() ||
      bound->constant.AsInt64() < 0) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat(std::string(clause), " must be a non-negative integer constant"));
  }
  return bound->constant.AsInt64();
}

absl::StatusOr<BoundRelation> QueryBinder::BindBody(const parser::QueryBody& body, const Scope* outer,
                                                    const std::vector<parser::OrderByItem>* order_by,
                                                    std::vector<SortKey>* sort_keys, int* visible) {
  BoundRelation relation;
  switch (body.kind) {
    case parser::QueryBody::Kind::kSelect: {
      SelectBlockOptions options;
      options.order_by = order_by;
      TESSERA_ASSIGN_OR_RETURN(BoundSelectBlock block, BindSelectBlock(*body.select, outer, options));
      relation.plan = std::move(block.plan);
      relation.names = std::move(block.names);
      *sort_keys = std::move(block.sort_keys);
      *visible = static_cast<int>(relation.names.size());
      return relation;
    }
    case parser::QueryBody::Kind::kSetOperation: {
      TESSERA_ASSIGN_OR_RETURN(relation, BindSetOperation(body, outer));
      break;
    }
    case parser::QueryBody::Kind::kNested: {
      TESSERA_ASSIGN_OR_RETURN(relation, BindStatement(*body.nested, outer));
      break;
    }
  }
  *visible = static_cast<int>(relation.names.size());
  if (order_by != nullptr && !order_by->empty()) {
    TESSERA_ASSIGN_OR_RETURN(*sort_keys, BindOutputOrderBy(*order_by, relation));
  }
  return relation;
}

absl::StatusOr<std::vector<SortKey>> QueryBinder::BindOutputOrderBy(const std::vector<parser::OrderByItem>& order_by,
                                                                    const BoundRelation& relation) {
  std::vector<SortKey> keys;
  const std::vector<OutputColumn>& output = relation.plan->output();
  for (const parser::OrderByItem& item : order_by) {
    const ParsedExpr& expr = *item.expr;
    int index = -1;
    if (expr.kind == ExprKind::kLiteral && expr.literal_kind == LiteralKind::kInteger) {
      int64_t ordinal = 0;
      if (!absl::SimpleAtoi(expr.literal_text, &ordinal) || ordinal < 1 ||
          ordinal > static_cast<int64_t>(relation.names.size())) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                       absl::StrCat("ORDER BY position ", expr.literal_text, " is not in select list"));
      }
      index = static_cast<int>(ordinal - 1);
    } else if (expr.kind == ExprKind::kColumnRef && expr.qualifier.empty()) {
      for (size_t i = 0; i < relation.names.size(); ++i) {
        if (relation.names[i] != expr.name) continue;
        if (index >= 0) {
          return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                         absl::StrCat("ORDER BY '", expr.name, "' is ambiguous"));
        }
        index = static_cast<int>(i);
      }
      if (index < 0) {
        return ErrorAt(absl::StatusCode::kNotFound, expr.position,
                       absl::StrCat("column '", expr.name, "' does not exist in the result of the set operation"));
      }
    } else {
      return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                     "ORDER BY on a UNION/INTERSECT/EXCEPT result must name an output column or its position");
    }
    SortKey key;
    key.expression = MakeColumn(index, output[index].type);
    key.ascending = item.ascending;
    key.nulls_first = item.nulls_first.value_or(!item.ascending);
    keys.push_back(std::move(key));
  }
  return keys;
}

absl::StatusOr<BoundRelation> QueryBinder::BindSetOperation(const parser::QueryBody& body, const Scope* outer) {
  std::vector<SortKey> unused_keys;
  int unused_visible = 0;
  TESSERA_ASSIGN_OR_RETURN(BoundRelation left, BindBody(*body.left, outer, nullptr, &unused_keys, &unused_visible));
  TESSERA_ASSIGN_OR_RETURN(BoundRelation right, BindBody(*body.right, outer, nullptr, &unused_keys, &unused_visible));
  const char* name = SetOperationName(body.set_operation);
  const parser::SourcePosition& position = FirstPosition(*body.right);
  if (left.plan->output_width() != right.plan->output_width()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, position,
                   absl::StrCat("each ", name, " query must have the same number of columns (",
                                left.plan->output_width(), " vs ", right.plan->output_width(), ")"));
  }
  std::vector<Type> types;
  for (int i = 0; i < left.plan->output_width(); ++i) {
    const Type a = left.plan->output()[i].type;
    const Type b = right.plan->output()[i].type;
    std::optional<Type> common = CommonType(a, b);
    if (!common.has_value()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, position,
                     absl::StrCat(name, " types ", a.ToString(), " and ", b.ToString(), " cannot be matched (column ",
                                  i + 1, ")"));
    }
    types.push_back(*common);
  }
  // Casts each side to the unified types where needed.
  for (BoundRelation* side : {&left, &right}) {
    bool needs_cast = false;
    for (size_t i = 0; i < types.size(); ++i) needs_cast |= !(side->plan->output()[i].type == types[i]);
    if (!needs_cast) continue;
    std::vector<ExpressionPtr> expressions;
    for (size_t i = 0; i < types.size(); ++i) {
      ExpressionPtr column = MakeInputColumn(side->plan->output(), static_cast<int>(i));
      TESSERA_ASSIGN_OR_RETURN(column, Coerce(std::move(column), types[i], position));
      expressions.push_back(std::move(column));
    }
    std::vector<std::string> names = side->plan->OutputNames();
    side->plan = MakeProject(std::move(side->plan), std::move(expressions), std::move(names));
  }
  auto operation = std::make_unique<SetOperation>();
  operation->operation = body.set_operation == parser::SetOperation::kUnion       ? SetOperationType::kUnion
                         : body.set_operation == parser::SetOperation::kIntersect ? SetOperationType::kIntersect
                                                                                  : SetOperationType::kExcept;
  operation->all = body.all;
  operation->children.push_back(std::move(left.plan));
  operation->children.push_back(std::move(right.plan));
  operation->RecomputeOutput();
  BoundRelation result;
  result.names = std::move(left.names);
  result.plan = std::move(operation);
  return result;
}

}  // namespace tessera::optimizer
