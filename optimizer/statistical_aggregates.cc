// STDDEV_SAMP (STDDEV), STDDEV_POP, VAR_SAMP (VARIANCE), VAR_POP: bound as the DOUBLE expressions over three
// plain aggregates n = COUNT(x), s = SUM(x), q = SUM(x * x) (x as DOUBLE), which every aggregation path runs
// (hash, scalar, partial states merged across threads, grouping sets' re-aggregation):
//   var_pop  = (q - s * s / n) / n          var_samp = (q - s * s / n) / (n - 1)
//   stddev_* = sqrt(var_*)
// NULL for no non-NULL rows (and var_samp / stddev_samp for one), as in DuckDB and PostgreSQL. A difference of
// rounding errors slightly below zero is taken as 0. The one-pass formula loses precision when the mean is
// large against the spread (about mean^2 / variance x 1e-16 relative); DuckDB's Welford updates do not. For
// measurements such as TPC-DS's quantities and prices the results agree with DuckDB's to ~1e-12.

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/query_binder.h"
#include "optimizer/type_rules.h"

namespace tessera::optimizer {
namespace {

ExpressionPtr Function(FunctionId function, std::vector<ExpressionPtr> arguments, Type type) {
  return MakeFunction(function, std::move(arguments), type);
}

ExpressionPtr Arithmetic(ArithmeticOp op, ExpressionPtr left, ExpressionPtr right) {
  return MakeArithmetic(op, std::move(left), std::move(right), Type::Double());
}

// NULLIF(x, 0.0): a zero divisor becomes NULL.
ExpressionPtr NonZero(ExpressionPtr x) {
  std::vector<ExpressionPtr> arguments;
  arguments.push_back(std::move(x));
  arguments.push_back(MakeConstant(Value::Double(0)));
  return Function(FunctionId::kNullIf, std::move(arguments), Type::Double());
}

}  // namespace

bool QueryBinder::IsStatisticalAggregateName(const std::string& name) {
  return name == "STDDEV" || name == "STDDEV_SAMP" || name == "STDDEV_POP" || name == "VARIANCE" ||
         name == "VAR_SAMP" || name == "VAR_POP";
}

absl::Status QueryBinder::BindStatisticalAggregate(const parser::ParsedExpr& call, ExpressionContext& context,
                                                   AggregateBinding* aggregation) {
  const std::string lower = absl::AsciiStrToLower(call.name);
  if (call.children.size() != 1 || call.children[0]->kind == parser::ExprKind::kStar) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, call.position,
                   absl::StrCat("function ", lower, " takes exactly one argument"));
  }
  if (call.distinct) {
    return ErrorAt(absl::StatusCode::kUnimplemented, call.position,
                   absl::StrCat(lower, "(DISTINCT ...) is not supported"));
  }
  ExpressionContext argument_context = context;
  argument_context.aggregates = nullptr;
  argument_context.conjunct_root = false;
  argument_context.clause = "aggregate function arguments";
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr argument, BindExpression(*call.children[0], argument_context));
  if (argument->result_type.id() == TypeId::kNull) argument = MakeConstant(Value::Null(Type::Double()));
  if (!argument->result_type.IsNumeric()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, call.position,
                   absl::StrCat("function ", lower, "(", argument->result_type.ToString(), ") does not exist"));
  }
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr x, Coerce(std::move(argument), Type::Double(), call.children[0]->position));
  const std::string text = parser::ToString(call);
  auto add = [&](AggregateKind function, ExpressionPtr input, const std::string& name) {
    AggregateCall partial;
    partial.function = function;
    Type argument_type;
    partial.result_type = *AggregateResultType(function, input->result_type, &argument_type);
    partial.argument = std::move(input);
    partial.name = name;
    const int index = aggregation->AddCall(std::move(partial));
    const int column = static_cast<int>(aggregation->group_keys.size()) + index;
    return MakeColumn(column, aggregation->calls[index].result_type);
  };
  ExpressionPtr n = MakeCast(add(AggregateKind::kCount, x->Clone(), absl::StrCat("count(", text, ")")), Type::Double());
  ExpressionPtr s = add(AggregateKind::kSum, x->Clone(), absl::StrCat("sum(", text, ")"));
  ExpressionPtr square = Arithmetic(ArithmeticOp::kMultiply, x->Clone(), x->Clone());
  ExpressionPtr q = add(AggregateKind::kSum, std::move(square), absl::StrCat("sum_of_squares(", text, ")"));

  const bool sample = call.name != "STDDEV_POP" && call.name != "VAR_POP";
  // q - s * s / n, at least 0
  ExpressionPtr deviations =
      Arithmetic(ArithmeticOp::kSubtract, std::move(q),
                 Arithmetic(ArithmeticOp::kDivide, Arithmetic(ArithmeticOp::kMultiply, s->Clone(), s->Clone()),
                            NonZero(n->Clone())));
  // CASE WHEN deviations < 0 THEN 0 ELSE deviations END (NULL stays NULL)
  std::vector<ExpressionPtr> when_then;
  when_then.push_back(MakeComparison(ComparisonOp::kLess, deviations->Clone(), MakeConstant(Value::Double(0))));
  when_then.push_back(MakeConstant(Value::Double(0)));
  ExpressionPtr clamped = MakeCase(std::move(when_then), std::move(deviations), Type::Double());
  ExpressionPtr divisor =
      sample ? Arithmetic(ArithmeticOp::kSubtract, std::move(n), MakeConstant(Value::Double(1))) : std::move(n);
  ExpressionPtr value = Arithmetic(ArithmeticOp::kDivide, std::move(clamped), NonZero(std::move(divisor)));
  if (call.name.starts_with("STDDEV")) {
    std::vector<ExpressionPtr> root;
    root.push_back(std::move(value));
    value = Function(FunctionId::kSqrt, std::move(root), Type::Double());
  }
  aggregation->computed_values[&call] = std::move(value);
  return absl::OkStatus();
}

}  // namespace tessera::optimizer
