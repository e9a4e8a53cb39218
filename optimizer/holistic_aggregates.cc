// MEDIAN, QUANTILE_CONT / QUANTILE_DISC (QUANTILE is QUANTILE_DISC), PERCENTILE_CONT / PERCENTILE_DISC (f) WITHIN
// GROUP (ORDER BY x [DESC]), STRING_AGG / LISTAGG / GROUP_CONCAT (x [, separator] [ORDER BY x [DESC]]) and
// APPROX_COUNT_DISTINCT (x): aggregate calls whose state is not a fixed-size summary of the group's values.
// Types and edge cases follow DuckDB (checked with its Python package, 2.0.1):
//   quantile_cont of INTEGER / BIGINT / DOUBLE is DOUBLE, of DECIMAL(p,s) DECIMAL(p,s) (rounded); other types
//     are rejected. MEDIAN(x) is quantile_cont(x, 0.5) for numbers, quantile_disc(x, 0.5) for strings; of a
//     DATE / TIMESTAMP it is rejected (DuckDB interpolates to a TIMESTAMP).
//   quantile_disc keeps the argument's type (numbers, strings, dates, ...).
//   The fraction is a constant in [0, 1]. Positions: cont interpolates between the values at floor and ceil
//     of f * (n - 1); disc takes the value at ceil(f * n) - 1 (at least 0), computed exactly for a DECIMAL
//     fraction (0.3 * 10 is 3, not 3.0000000000000004). DESC orders the values descending first.
//   string_agg casts its argument to VARCHAR, skips NULLs, is NULL for a group without values; the separator
//     is a constant (default ','); ORDER BY may only name the aggregated value (ORDER BY another expression
//     is rejected).
//   approx_count_distinct is a BIGINT, 0 for a group without values.
// DISTINCT is rejected on all but approx_count_distinct (where it changes nothing).

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/query_binder.h"
#include "optimizer/type_rules.h"

namespace tessera::optimizer {

bool QueryBinder::IsHolisticAggregateName(const std::string& name) {
  return name == "MEDIAN" || name == "QUANTILE" || name == "QUANTILE_CONT" || name == "QUANTILE_DISC" ||
         name == "PERCENTILE_CONT" || name == "PERCENTILE_DISC" || name == "STRING_AGG" || name == "LISTAGG" ||
         name == "GROUP_CONCAT" || name == "APPROX_COUNT_DISTINCT";
}

absl::StatusOr<AggregateCall> QueryBinder::BindHolisticAggregateCall(const parser::ParsedExpr& call,
                                                                     ExpressionContext& context) {
  const std::string& name = call.name;
  const std::string lower = absl::AsciiStrToLower(name);
  auto invalid = [&](std::string_view message) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, call.position, message);
  };
  auto unsupported = [&](std::string_view message) {
    return ErrorAt(absl::StatusCode::kUnimplemented, call.position, message);
  };
  const bool percentile = name == "PERCENTILE_CONT" || name == "PERCENTILE_DISC";
  const bool string_agg = name == "STRING_AGG" || name == "LISTAGG" || name == "GROUP_CONCAT";
  const bool approx = name == "APPROX_COUNT_DISTINCT";
  if (percentile && !call.within_group) {
    return invalid(absl::StrCat(lower, "(fraction) needs WITHIN GROUP (ORDER BY ...)"));
  }
  if (!percentile && call.within_group) {
    return invalid(
        absl::StrCat("WITHIN GROUP is not allowed with ", lower, ": only with percentile_cont and percentile_disc"));
  }
  if (!call.aggregate_order_by.empty() && !percentile && !string_agg) {
    return invalid(absl::StrCat("ORDER BY is not allowed in ", lower));
  }
  if (call.aggregate_order_by.size() > 1) {
    return unsupported(absl::StrCat(lower, " with more than one ORDER BY key is not supported"));
  }
  if (call.distinct && !approx) return unsupported(absl::StrCat("DISTINCT is not supported in ", lower));

  AggregateCall result;
  result.name = parser::ToString(call);
  const parser::ParsedExpr* value = nullptr;
  const parser::ParsedExpr* fraction = nullptr;
  const parser::ParsedExpr* separator = nullptr;
  size_t arguments = 1;
  if (percentile) {
    result.function = name == "PERCENTILE_CONT" ? AggregateKind::kQuantileCont : AggregateKind::kQuantileDisc;
    if (call.children.size() == 1) fraction = call.children[0].get();
    value = call.aggregate_order_by[0].expr.get();
    result.descending = !call.aggregate_order_by[0].ascending;
  } else if (name == "MEDIAN") {
    result.function = AggregateKind::kQuantileCont;
    result.fraction = Value::Decimal(5, Type::Decimal(2, 1));
  } else if (string_agg) {
    result.function = AggregateKind::kStringAgg;
    result.separator = ",";
    if (call.children.size() == 2) {
      separator = call.children[1].get();
      arguments = 2;
    }
  } else if (approx) {
    result.function = AggregateKind::kApproxCountDistinct;
  } else {
    result.function = name == "QUANTILE_CONT" ? AggregateKind::kQuantileCont : AggregateKind::kQuantileDisc;
    arguments = 2;
    if (call.children.size() == 2) fraction = call.children[1].get();
  }
  if (call.children.size() != arguments || (percentile && fraction == nullptr)) {
    return invalid(absl::StrCat("function ", lower, " takes ",
                                percentile       ? "one fraction argument"
                                : string_agg     ? "one or two arguments"
                                : arguments == 2 ? "exactly two arguments"
                                                 : "exactly one argument"));
  }
  if (!percentile) value = call.children[0].get();

  ExpressionContext argument_context = context;
  argument_context.aggregates = nullptr;
  argument_context.conjunct_root = false;
  argument_context.clause = "aggregate function arguments";
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr argument, BindExpression(*value, argument_context));
  if (argument->result_type.id() == TypeId::kNull && string_agg) {
    argument = MakeConstant(Value::Null(Type::Varchar()));
  }
  if (name == "MEDIAN" &&
      (argument->result_type.id() == TypeId::kDate || argument->result_type.id() == TypeId::kTimestamp)) {
    return unsupported(absl::StrCat("median of ", argument->result_type.ToString(),
                                    " is not supported (DuckDB interpolates a TIMESTAMP); use quantile_disc"));
  }
  if (name == "MEDIAN" && argument->result_type.id() != TypeId::kInteger &&
      argument->result_type.id() != TypeId::kBigInt && argument->result_type.id() != TypeId::kDouble &&
      argument->result_type.id() != TypeId::kDecimal) {
    result.function = AggregateKind::kQuantileDisc;
  }
  if (string_agg && !call.aggregate_order_by.empty()) {
    const parser::OrderByItem& order = call.aggregate_order_by[0];
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr key, BindExpression(*order.expr, argument_context));
    // With FILTER the argument is CASE WHEN condition THEN value END (parser), the key still the value.
    const bool filtered_value = call.aggregate_filter && argument->kind == ExpressionKind::kCase &&
                                ExpressionsEqual(*key, *argument->children[1]);
    if (!ExpressionsEqual(*key, *argument) && !filtered_value) {
      return unsupported(absl::StrCat(lower, " ordered by anything but the aggregated value is not supported"));
    }
    result.ordered = true;
    result.descending = !order.ascending;
  }
  Type argument_type;
  std::optional<Type> type = AggregateResultType(result.function, argument->result_type, &argument_type);
  if (!type.has_value()) {
    return invalid(absl::StrCat("function ", lower, "(", argument->result_type.ToString(), ") does not exist"));
  }
  TESSERA_ASSIGN_OR_RETURN(result.argument, Coerce(std::move(argument), argument_type, value->position));
  result.result_type = *type;

  ExpressionContext constant_context;
  constant_context.scope = context.scope;
  constant_context.clause = "aggregate function arguments";
  if (fraction != nullptr) {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(*fraction, constant_context));
    bound = FoldConstantsDeep(std::move(bound));
    const TypeId id = bound->result_type.id();
    const bool numeric =
        id == TypeId::kInteger || id == TypeId::kBigInt || id == TypeId::kDecimal || id == TypeId::kDouble;
    if (bound->kind != ExpressionKind::kConstant || !numeric || bound->constant.is_null() ||
        bound->constant.AsDouble() < 0 || bound->constant.AsDouble() > 1) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, fraction->position,
                     absl::StrCat("the fraction of ", lower, " must be a constant between 0 and 1"));
    }
    result.fraction = bound->constant;
  }
  if (separator != nullptr) {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(*separator, constant_context));
    bound = FoldConstantsDeep(std::move(bound));
    if (bound->kind != ExpressionKind::kConstant || bound->constant.is_null() || !bound->result_type.IsString()) {
      return ErrorAt(absl::StatusCode::kUnimplemented, separator->position,
                     absl::StrCat("the separator of ", lower, " must be a constant string"));
    }
    result.separator = bound->constant.AsString();
  }
  return result;
}

}  // namespace tessera::optimizer
