// Scalar functions with a generic kernel (IsScalarFunction in expressions/bound_expression.h) and the date-part
// shorthands: argument checks, implicit casts and result types, following DuckDB where the dialects differ.
//   concat(x, ...)            VARCHAR; arguments of any type are cast to VARCHAR; NULLs are skipped
//   a || b                    VARCHAR; NULL if either side is (bound from BindBinary)
//   round(x [, d])            DOUBLE -> DOUBLE (d any INTEGER expression); DECIMAL(p,s) -> DECIMAL(p, min(s,
//                             max(d, 0))) and INTEGER/BIGINT -> themselves, d a constant (rounded half away from
//                             zero; d < 0 rounds to tens, hundreds, ...)
//   ceil / ceiling / floor(x) DOUBLE -> DOUBLE, DECIMAL(p,s) -> DECIMAL(p,0), integers unchanged
//   sqrt exp ln log log10     DOUBLE (log is log10, as in PostgreSQL and DuckDB); power / pow(x, y) DOUBLE
//   greatest / least(x, ...)  the arguments' common type; NULL arguments are skipped
//   trim ltrim rtrim (s [, characters]), lpad rpad (s, n [, fill]), replace (s, from, to), split_part (s, d, i)
//                             VARCHAR; strpos / instr (s, sub) INTEGER; starts_with (s, prefix) BOOLEAN
//   year month day quarter dayofweek dayofyear week (d), date_part ('field', d)   as EXTRACT
//   date_trunc ('unit', d)    TIMESTAMP (also for a DATE, as DuckDB); unit year ... second, a constant

#include <algorithm>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "optimizer/query_binder.h"

namespace tessera::optimizer {
namespace {

using parser::ParsedExpr;

struct ScalarFunctionName {
  const char* name;
  FunctionId function;
  int min_arguments;
  int max_arguments;  // -1: any number
};

constexpr ScalarFunctionName kScalarFunctions[] = {
    {"concat", FunctionId::kConcat, 1, -1},
    {"round", FunctionId::kRound, 1, 2},
    {"ceil", FunctionId::kCeil, 1, 1},
    {"ceiling", FunctionId::kCeil, 1, 1},
    {"floor", FunctionId::kFloor, 1, 1},
    {"sqrt", FunctionId::kSqrt, 1, 1},
    {"exp", FunctionId::kExp, 1, 1},
    {"ln", FunctionId::kLn, 1, 1},
    {"log", FunctionId::kLog10, 1, 1},
    {"log10", FunctionId::kLog10, 1, 1},
    {"power", FunctionId::kPower, 2, 2},
    {"pow", FunctionId::kPower, 2, 2},
    {"greatest", FunctionId::kGreatest, 1, -1},
    {"least", FunctionId::kLeast, 1, -1},
    {"trim", FunctionId::kTrim, 1, 2},
    {"ltrim", FunctionId::kLtrim, 1, 2},
    {"rtrim", FunctionId::kRtrim, 1, 2},
    {"lpad", FunctionId::kLpad, 2, 3},
    {"rpad", FunctionId::kRpad, 2, 3},
    {"replace", FunctionId::kReplace, 3, 3},
    {"strpos", FunctionId::kStrpos, 2, 2},
    {"instr", FunctionId::kStrpos, 2, 2},
    {"split_part", FunctionId::kSplitPart, 3, 3},
    {"starts_with", FunctionId::kStartsWith, 2, 2},
    {"year", FunctionId::kExtractYear, 1, 1},
    {"month", FunctionId::kExtractMonth, 1, 1},
    {"day", FunctionId::kExtractDay, 1, 1},
    {"quarter", FunctionId::kExtractQuarter, 1, 1},
    {"dayofweek", FunctionId::kExtractDayOfWeek, 1, 1},
    {"dayofyear", FunctionId::kExtractDayOfYear, 1, 1},
    {"week", FunctionId::kExtractWeek, 1, 1},
    {"date_part", FunctionId::kExtractYear, 2, 2},  // the field is the first argument
    {"date_trunc", FunctionId::kDateTrunc, 2, 2},
};

std::optional<DateTruncUnit> DateTruncUnitNamed(const std::string& lower) {
  static constexpr std::pair<const char*, DateTruncUnit> kUnits[] = {
      {"year", DateTruncUnit::kYear},     {"quarter", DateTruncUnit::kQuarter}, {"month", DateTruncUnit::kMonth},
      {"week", DateTruncUnit::kWeek},     {"day", DateTruncUnit::kDay},         {"hour", DateTruncUnit::kHour},
      {"minute", DateTruncUnit::kMinute}, {"second", DateTruncUnit::kSecond}};
  for (const auto& [name, unit] : kUnits) {
    if (lower == name || lower == absl::StrCat(name, "s")) return unit;
  }
  return std::nullopt;
}

const ScalarFunctionName* FindScalarFunction(const std::string& lower) {
  for (const ScalarFunctionName& entry : kScalarFunctions) {
    if (lower == entry.name) return &entry;
  }
  return nullptr;
}

bool IsInteger(const Type& type) { return type.id() == TypeId::kInteger || type.id() == TypeId::kBigInt; }

bool IsStringOrNull(const BoundExpression& argument) {
  return argument.result_type.id() == TypeId::kNull || argument.result_type.IsString();
}

// The value of a constant integer argument (round's digits); nullopt when it is not one.
std::optional<int64_t> ConstantInteger(const BoundExpression& argument) {
  if (argument.kind != ExpressionKind::kConstant || !IsInteger(argument.result_type) || argument.constant.is_null()) {
    return std::nullopt;
  }
  return argument.constant.AsInt64();
}

// "2", "1 to 3" or "at least 1" when `count` arguments do not fit `entry`; nullopt when they do.
std::optional<std::string> ExpectedArgumentCount(const ScalarFunctionName& entry, int count) {
  if (count >= entry.min_arguments && (entry.max_arguments < 0 || count <= entry.max_arguments)) return std::nullopt;
  if (entry.max_arguments < 0) return absl::StrCat("at least ", entry.min_arguments);
  if (entry.min_arguments == entry.max_arguments) return absl::StrCat(entry.min_arguments);
  return absl::StrCat(entry.min_arguments, " to ", entry.max_arguments);
}

}  // namespace

std::optional<FunctionId> ExtractFieldFunction(const std::string& upper_field) {
  if (upper_field == "YEAR" || upper_field == "YEARS") return FunctionId::kExtractYear;
  if (upper_field == "MONTH" || upper_field == "MONTHS") return FunctionId::kExtractMonth;
  if (upper_field == "DAY" || upper_field == "DAYS") return FunctionId::kExtractDay;
  if (upper_field == "QUARTER") return FunctionId::kExtractQuarter;
  if (upper_field == "DOW" || upper_field == "DAYOFWEEK") return FunctionId::kExtractDayOfWeek;
  if (upper_field == "DOY" || upper_field == "DAYOFYEAR") return FunctionId::kExtractDayOfYear;
  if (upper_field == "WEEK" || upper_field == "WEEKS") return FunctionId::kExtractWeek;
  return std::nullopt;
}

bool QueryBinder::IsScalarFunctionName(const std::string& lower) { return FindScalarFunction(lower) != nullptr; }

std::vector<std::string> QueryBinder::ScalarFunctionNames() {
  std::vector<std::string> names;
  for (const ScalarFunctionName& entry : kScalarFunctions) names.push_back(entry.name);
  return names;
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindExtractField(FunctionId field, ExpressionPtr source,
                                                            const ParsedExpr& where) {
  if (source->kind == ExpressionKind::kConstant && source->result_type.IsString()) {
    TESSERA_ASSIGN_OR_RETURN(source, Coerce(std::move(source), Type::Date(), where.position));
  }
  if (source->result_type.id() == TypeId::kNull) source = MakeConstant(Value::Null(Type::Date()));
  const TypeId id = source->result_type.id();
  if (id != TypeId::kDate && id != TypeId::kTimestamp) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, where.position,
                   absl::StrCat("EXTRACT(", FunctionSqlName(field), " FROM ...) requires a DATE or TIMESTAMP, not ",
                                source->result_type.ToString()));
  }
  std::vector<ExpressionPtr> arguments;
  arguments.push_back(std::move(source));
  return MakeFunction(field, std::move(arguments), Type::Integer());
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindConcatOperator(const ParsedExpr& expr, ExpressionPtr left,
                                                              ExpressionPtr right) {
  std::vector<ExpressionPtr> arguments;
  for (ExpressionPtr* side : {&left, &right}) {
    if ((*side)->result_type.id() == TypeId::kNull) *side = MakeConstant(Value::Null(Type::Varchar()));
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr operand, Coerce(std::move(*side), Type::Varchar(), expr.position));
    arguments.push_back(std::move(operand));
  }
  return MakeFunction(FunctionId::kConcatStrict, std::move(arguments), Type::Varchar());
}

absl::Status QueryBinder::BindArguments(const ParsedExpr& call, ExpressionContext& context,
                                        std::vector<ExpressionPtr>* arguments,
                                        std::vector<const ParsedExpr*>* sources) {
  for (const auto& child : call.children) {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr argument, BindExpression(*child, context));
    arguments->push_back(std::move(argument));
    sources->push_back(child.get());
  }
  return absl::OkStatus();
}

struct QueryBinder::ScalarCall {
  const ParsedExpr& expr;
  std::string lower;  // the function's name, lower case
  FunctionId function;
  std::vector<ExpressionPtr> arguments;
  std::vector<const ParsedExpr*> sources;  // the arguments' parsed expressions (error positions)
};

absl::StatusOr<ExpressionPtr> QueryBinder::BindScalarFunction(const ParsedExpr& expr, ExpressionContext& context) {
  const std::string lower = absl::AsciiStrToLower(expr.name);
  const ScalarFunctionName& entry = *FindScalarFunction(lower);
  const int count = static_cast<int>(expr.children.size());
  if (std::optional<std::string> expected = ExpectedArgumentCount(entry, count); expected.has_value()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("function ", lower, " expects ", *expected, " argument", *expected == "1" ? "" : "s",
                                ", got ", count));
  }
  ScalarCall call{expr, lower, entry.function, {}, {}};
  TESSERA_RETURN_IF_ERROR(BindArguments(expr, context, &call.arguments, &call.sources));
  switch (call.function) {
    case FunctionId::kConcat:
      return BindCallOfOneType(call, Type::Varchar());
    case FunctionId::kRound:
    case FunctionId::kCeil:
    case FunctionId::kFloor:
      return BindRoundingCall(call);
    case FunctionId::kSqrt:
    case FunctionId::kExp:
    case FunctionId::kLn:
    case FunctionId::kLog10:
    case FunctionId::kPower:
      return BindCallOfOneType(call, Type::Double());
    case FunctionId::kGreatest:
    case FunctionId::kLeast: {
      TESSERA_RETURN_IF_ERROR(UnifyTypes(&call.arguments, call.sources, lower == "greatest" ? "GREATEST" : "LEAST"));
      const Type result = call.arguments[0]->result_type;
      if (result.id() == TypeId::kInterval) return ScalarCallTypeError(call);
      return MakeFunction(call.function, std::move(call.arguments), result);
    }
    case FunctionId::kTrim:
    case FunctionId::kLtrim:
    case FunctionId::kRtrim:
    case FunctionId::kReplace:
    case FunctionId::kStrpos:
    case FunctionId::kStartsWith:
    case FunctionId::kLpad:
    case FunctionId::kRpad:
    case FunctionId::kSplitPart:
      return BindStringCall(call);
    case FunctionId::kDateTrunc:
      return BindDateTruncCall(call);
    default:
      return BindDatePartCall(call);
  }
}

absl::Status QueryBinder::ScalarCallTypeError(const ScalarCall& call) const {
  std::string types;
  for (const ExpressionPtr& argument : call.arguments) {
    absl::StrAppend(&types, types.empty() ? "" : ", ", argument->result_type.ToString());
  }
  return ErrorAt(absl::StatusCode::kInvalidArgument, call.expr.position,
                 absl::StrCat("function ", call.lower, "(", types, ") does not exist"));
}

absl::StatusOr<bool> QueryBinder::CastScalarArgument(ScalarCall& call, size_t i, Type type) {
  ExpressionPtr& argument = call.arguments[i];
  if (argument->result_type.id() == TypeId::kNull) {
    argument = MakeConstant(Value::Null(type));
    return true;
  }
  const Type from = argument->result_type;
  const bool convertible = type.IsString() || (type.IsNumeric() && from.IsNumeric()) ||
                           (IsInteger(type) && IsInteger(from)) || from == type ||
                           (type.id() == TypeId::kTimestamp && from.id() == TypeId::kDate);
  if (!convertible) return false;
  TESSERA_ASSIGN_OR_RETURN(argument, Coerce(std::move(argument), type, call.sources[i]->position));
  return true;
}

absl::StatusOr<bool> QueryBinder::CastScalarArguments(ScalarCall& call, size_t first, size_t end, Type type) {
  for (size_t i = first; i < end && i < call.arguments.size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(bool ok, CastScalarArgument(call, i, type));
    if (!ok) return false;
  }
  return true;
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindCallOfOneType(ScalarCall& call, Type type) {
  TESSERA_ASSIGN_OR_RETURN(bool ok, CastScalarArguments(call, 0, call.arguments.size(), type));
  if (!ok) return ScalarCallTypeError(call);
  return MakeFunction(call.function, std::move(call.arguments), type);
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindRoundingCall(ScalarCall& call) {
  std::vector<ExpressionPtr>& arguments = call.arguments;
  Type type = arguments[0]->result_type;
  if (type.id() == TypeId::kNull) {
    type = Type::Double();
    arguments[0] = MakeConstant(Value::Null(type));
  }
  if (!type.IsNumeric()) return ScalarCallTypeError(call);
  if (arguments.size() > 1) {
    TESSERA_ASSIGN_OR_RETURN(bool ok, CastScalarArgument(call, 1, Type::Integer()));
    if (!ok) return ScalarCallTypeError(call);
  }
  if (type.id() == TypeId::kDouble) return MakeFunction(call.function, std::move(arguments), type);
  int64_t digits = 0;
  if (arguments.size() > 1) {
    std::optional<int64_t> constant = ConstantInteger(*arguments[1]);
    if (!constant.has_value()) {
      return ErrorAt(absl::StatusCode::kUnimplemented, call.sources[1]->position,
                     absl::StrCat("round(", type.ToString(),
                                  ", digits) needs constant digits (round a DOUBLE for computed digits)"));
    }
    digits = std::clamp<int64_t>(*constant, -38, 38);
  }
  const int scale = type.id() == TypeId::kDecimal ? type.scale() : 0;
  if (digits >= scale) return std::move(arguments[0]);  // nothing to round
  const Type result = type.id() == TypeId::kDecimal
                          ? Type::Decimal(type.precision(), static_cast<int>(std::max<int64_t>(digits, 0)))
                          : type;
  if (arguments.size() > 1) arguments[1] = MakeConstant(Value::Integer(static_cast<int32_t>(digits)));
  return MakeFunction(call.function, std::move(arguments), result);
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindStringCall(ScalarCall& call) {
  const std::vector<ExpressionPtr>& arguments = call.arguments;
  // lpad / rpad's count and split_part's index are INTEGER; every other argument is a string.
  std::optional<size_t> number;
  if (call.function == FunctionId::kLpad || call.function == FunctionId::kRpad) number = 1;
  if (call.function == FunctionId::kSplitPart) number = 2;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i != number && !IsStringOrNull(*arguments[i])) return ScalarCallTypeError(call);
  }
  Type result = Type::Varchar();
  if (!number.has_value()) {
    TESSERA_ASSIGN_OR_RETURN(bool ok, CastScalarArguments(call, 0, arguments.size(), Type::Varchar()));
    if (!ok) return ScalarCallTypeError(call);
    if (call.function == FunctionId::kStrpos) result = Type::Integer();
    if (call.function == FunctionId::kStartsWith) result = Type::Boolean();
  } else {
    TESSERA_ASSIGN_OR_RETURN(bool ok, CastScalarArguments(call, 0, *number, Type::Varchar()));
    if (!ok) return ScalarCallTypeError(call);
    TESSERA_ASSIGN_OR_RETURN(ok, CastScalarArgument(call, *number, Type::Integer()));
    if (!ok) return ScalarCallTypeError(call);
    TESSERA_ASSIGN_OR_RETURN(ok, CastScalarArguments(call, *number + 1, arguments.size(), Type::Varchar()));
    if (!ok) return ScalarCallTypeError(call);
  }
  return MakeFunction(call.function, std::move(call.arguments), result);
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindDateTruncCall(ScalarCall& call) {
  std::vector<ExpressionPtr>& arguments = call.arguments;
  const BoundExpression& unit = *arguments[0];
  std::optional<DateTruncUnit> parsed;
  if (unit.kind == ExpressionKind::kConstant && unit.result_type.IsString() && !unit.constant.is_null()) {
    parsed = DateTruncUnitNamed(absl::AsciiStrToLower(unit.constant.AsString()));
  }
  if (!parsed.has_value()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, call.sources[0]->position,
                   "the first argument of date_trunc must be a constant string naming the unit: year, "
                   "quarter, month, week, day, hour, minute or second");
  }
  arguments[0] = MakeConstant(Value::Integer(static_cast<int32_t>(*parsed)));
  if (arguments[1]->kind == ExpressionKind::kConstant && arguments[1]->result_type.IsString()) {
    TESSERA_ASSIGN_OR_RETURN(arguments[1],
                             Coerce(std::move(arguments[1]), Type::Timestamp(), call.sources[1]->position));
  }
  const TypeId id = arguments[1]->result_type.id();
  if (id != TypeId::kDate && id != TypeId::kTimestamp && id != TypeId::kNull) return ScalarCallTypeError(call);
  TESSERA_ASSIGN_OR_RETURN(bool ok, CastScalarArgument(call, 1, Type::Timestamp()));
  if (!ok) return ScalarCallTypeError(call);
  return MakeFunction(call.function, std::move(arguments), Type::Timestamp());
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindDatePartCall(ScalarCall& call) {
  if (call.lower != "date_part") {
    return BindExtractField(call.function, std::move(call.arguments[0]), *call.sources[0]);
  }
  const BoundExpression& field = *call.arguments[0];
  if (field.kind != ExpressionKind::kConstant || !field.result_type.IsString() || field.constant.is_null()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, call.sources[0]->position,
                   "the first argument of date_part must be a constant string naming the field");
  }
  std::optional<FunctionId> part = ExtractFieldFunction(absl::AsciiStrToUpper(field.constant.AsString()));
  if (!part.has_value()) {
    return ErrorAt(absl::StatusCode::kUnimplemented, call.sources[0]->position,
                   absl::StrCat("date_part('", field.constant.AsString(),
                                "', ...) is not supported; supported fields: year, month, day, quarter, "
                                "dow, doy, week"));
  }
  return BindExtractField(*part, std::move(call.arguments[1]), *call.sources[1]);
}

}  // namespace tessera::optimizer
