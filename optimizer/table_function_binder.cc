// Table functions in FROM, as DuckDB has them (checked with its Python package, 2.0.1):
//   generate_series(stop) / generate_series(start, stop[, step]): start, start + step, ... up to and including
//     stop (start 0 when only stop is given);
//   range(stop) / range(start, stop[, step]): the same without stop.
// The arguments are constant integers (INTEGER or BIGINT); one BIGINT column named after the function; a NULL
// argument gives no rows; step 0 is an error; a step whose sign points away from stop gives no rows. Bound as a
// Series node (SeriesOperator writes the rows in parallel work orders). Not supported: the TIMESTAMP / INTERVAL
// forms, other table functions (read_csv).

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/constant_folding.h"
#include "optimizer/query_binder.h"

namespace tessera::optimizer {

absl::StatusOr<BoundRelation> QueryBinder::BindTableFunction(const parser::TableRef& ref) {
  const std::string name = absl::AsciiStrToLower(ref.name);
  const bool inclusive = name == "generate_series";
  if (!inclusive && name != "range") {
    return ErrorAt(absl::StatusCode::kNotFound, ref.position,
                   absl::StrCat("table function '", ref.name, "' does not exist (table functions: generate_series, ",
                                "range)"));
  }
  if (ref.arguments.empty() || ref.arguments.size() > 3) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat(name, " takes one to three arguments: (stop), (start, stop) or (start, stop, step)"));
  }
  // The arguments as 64-bit integers; a NULL one gives no rows.
  std::vector<int64_t> values;
  bool any_null = false;
  Scope empty;
  for (const auto& argument : ref.arguments) {
    ExpressionContext context;
    context.scope = &empty;
    context.clause = absl::StrCat("arguments of ", name);
    absl::StatusOr<ExpressionPtr> bound_or = BindExpression(*argument, context);
    if (absl::IsNotFound(bound_or.status()) && argument->kind == parser::ExprKind::kColumnRef) {
      return ErrorAt(absl::StatusCode::kUnimplemented, argument->position,
                     absl::StrCat("the arguments of ", name,
                                  " must be constants: a column needs LATERAL, which is not supported"));
    }
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, std::move(bound_or));
    bound = FoldConstantsDeep(std::move(bound));
    const TypeId type = bound->result_type.id();
    if (type == TypeId::kTimestamp || type == TypeId::kDate || type == TypeId::kInterval) {
      return ErrorAt(absl::StatusCode::kUnimplemented, argument->position,
                     absl::StrCat(name, " over ", bound->result_type.ToString(), " is not supported (integers only)"));
    }
    const bool integer = type == TypeId::kInteger || type == TypeId::kBigInt || type == TypeId::kNull;
    if (bound->kind != ExpressionKind::kConstant || !integer) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, argument->position,
                     absl::StrCat("the arguments of ", name, " must be constant integers, not ",
                                  bound->kind != ExpressionKind::kConstant ? "an expression over columns"
                                                                           : bound->result_type.ToString()));
    }
    any_null |= bound->constant.is_null();
    values.push_back(bound->constant.is_null() ? 0 : bound->constant.AsInt64());
  }
  const int64_t start = values.size() == 1 ? 0 : values[0];
  const int64_t stop = values.size() == 1 ? values[0] : values[1];
  const int64_t step = values.size() == 3 ? values[2] : 1;
  if (step == 0 && !any_null) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.arguments[2]->position,
                   absl::StrCat("the step of ", name, " cannot be 0"));
  }
  // Values from start toward stop, in int128 so that no bound overflows.
  int128 count = 0;
  if (!any_null) {
    const int128 distance = step > 0 ? int128{stop} - start : int128{start} - stop;
    const int128 stride = step > 0 ? int128{step} : -int128{step};
    if (inclusive ? distance >= 0 : distance > 0) count = (distance - (inclusive ? 0 : 1)) / stride + 1;
  }
  if (count > INT64_MAX) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, ref.position,
                   absl::StrCat(name, " would make more than ", INT64_MAX, " rows"));
  }
  auto series = std::make_unique<Series>();
  series->column_name = name;
  series->start = start;
  series->step = step == 0 ? 1 : step;
  series->count = static_cast<int64_t>(count);
  series->RecomputeOutput();
  BoundRelation relation;
  relation.names = series->OutputNames();
  relation.plan = std::move(series);
  return relation;
}

}  // namespace tessera::optimizer
