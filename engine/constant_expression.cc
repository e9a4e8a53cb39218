#include "engine/constant_expression.h"

#include "absl/strings/str_cat.h"
#include "catalog/text_conversion.h"
#include "common/status_macros.h"
#include "parser/parser.h"

namespace tessera {
namespace {

using parser::ExprKind;
using parser::LiteralKind;
using parser::ParsedExpr;

absl::Status ErrorAt(std::string_view sql, const ParsedExpr& expr, std::string_view message) {
  return absl::InvalidArgumentError(parser::FormatErrorWithCaret(sql, expr.position, message));
}

absl::StatusOr<Value> NumericLiteral(const ParsedExpr& expr, std::string_view sql) {
  const std::string& text = expr.literal_text;
  if (expr.literal_kind == LiteralKind::kInteger) {
    int64_t v;
    if (ParseInt64(text, &v)) {
      if (v >= INT32_MIN && v <= INT32_MAX) return Value::Integer(static_cast<int32_t>(v));
      return Value::BigInt(v);
    }
    // Wider than BIGINT: an exact DECIMAL(38,0) if it fits.
    int128 wide;
    if (text.size() <= 38 && ParseDecimal(text, 38, 0, &wide)) return Value::Decimal(wide, Type::Decimal(38, 0));
    return ErrorAt(sql, expr, absl::StrCat("numeric literal ", text, " is out of range"));
  }
  if (text.find_first_of("eE") != std::string::npos) {
    double d;
    if (!ParseDouble(text, &d)) return ErrorAt(sql, expr, absl::StrCat("invalid numeric literal ", text));
    return Value::Double(d);
  }
  size_t dot = text.find('.');
  int scale = dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
  int digits = 0;
  for (char c : text) digits += c >= '0' && c <= '9';
  int precision = std::max(digits, scale);
  if (precision > kMaxDecimalPrecision) {
    double d;
    if (!ParseDouble(text, &d)) return ErrorAt(sql, expr, absl::StrCat("invalid numeric literal ", text));
    return Value::Double(d);
  }
  precision = std::max(precision, 1);
  int128 unscaled;
  if (!ParseDecimal(text, precision, scale, &unscaled)) {
    return ErrorAt(sql, expr, absl::StrCat("invalid numeric literal ", text));
  }
  return Value::Decimal(unscaled, Type::Decimal(precision, scale));
}

absl::StatusOr<Value> Literal(const ParsedExpr& expr, std::string_view sql) {
  const std::string& text = expr.literal_text;
  switch (expr.literal_kind) {
    case LiteralKind::kNull:
      return Value::Null();
    case LiteralKind::kBoolean:
      return Value::Boolean(text == "TRUE" || text == "true");
    case LiteralKind::kInteger:
    case LiteralKind::kDecimal:
      return NumericLiteral(expr, sql);
    case LiteralKind::kString:
      return Value::String(text, Type::Varchar());
    case LiteralKind::kDate: {
      int32_t days;
      if (!ParseDate(text, &days)) return ErrorAt(sql, expr, absl::StrCat("invalid DATE literal '", text, "'"));
      return Value::Date(days);
    }
    case LiteralKind::kTimestamp: {
      int64_t micros;
      if (!ParseTimestamp(text, &micros)) {
        return ErrorAt(sql, expr, absl::StrCat("invalid TIMESTAMP literal '", text, "'"));
      }
      return Value::Timestamp(micros);
    }
    case LiteralKind::kInterval: {
      Interval interval;
      if (!ParseInterval(text, expr.interval_unit, &interval)) {
        return ErrorAt(sql, expr,
                       absl::StrCat("invalid INTERVAL literal '", text, "'", expr.interval_unit.empty() ? "" : " ",
                                    expr.interval_unit));
      }
      return Value::IntervalValue(interval);
    }
  }
  return ErrorAt(sql, expr, "unsupported literal");
}

}  // namespace

absl::StatusOr<Value> EvaluateConstant(const ParsedExpr& expr, std::string_view sql) {
  switch (expr.kind) {
    case ExprKind::kLiteral:
      return Literal(expr, sql);
    case ExprKind::kUnary: {
      if (expr.children.size() != 1) break;
      // Fold "-<literal>" textually so that the most negative values (e.g. -2147483648) stay exact.
      const ParsedExpr& operand = *expr.children[0];
      if (expr.name == "+") return EvaluateConstant(operand, sql);
      if (expr.name != "-") break;
      if (operand.kind == ExprKind::kLiteral &&
          (operand.literal_kind == LiteralKind::kInteger || operand.literal_kind == LiteralKind::kDecimal)) {
        ParsedExpr negated;
        negated.kind = ExprKind::kLiteral;
        negated.position = expr.position;
        negated.literal_kind = operand.literal_kind;
        negated.literal_text = "-" + operand.literal_text;
        return NumericLiteral(negated, sql);
      }
      TESSERA_ASSIGN_OR_RETURN(Value value, EvaluateConstant(operand, sql));
      if (value.is_null()) return value;
      switch (value.type().id()) {
        case TypeId::kInteger:
          if (value.AsInt64() == INT32_MIN) return ErrorAt(sql, expr, "INTEGER out of range");
          return Value::Integer(static_cast<int32_t>(-value.AsInt64()));
        case TypeId::kBigInt:
          if (value.AsInt64() == INT64_MIN) return ErrorAt(sql, expr, "BIGINT out of range");
          return Value::BigInt(-value.AsInt64());
        case TypeId::kDouble:
          return Value::Double(-value.AsDouble());
        case TypeId::kDecimal:
          return Value::Decimal(-value.AsInt128(), value.type());
        case TypeId::kInterval: {
          Interval i = value.AsInterval();
          return Value::IntervalValue(Interval{-i.months, -i.days, -i.micros});
        }
        default:
          return ErrorAt(sql, expr, absl::StrCat("cannot negate a value of type ", value.type().ToString()));
      }
    }
    case ExprKind::kCast: {
      if (expr.children.size() != 1 || !expr.cast_type.has_value()) break;
      TESSERA_ASSIGN_OR_RETURN(Value value, EvaluateConstant(*expr.children[0], sql));
      const parser::TypeName& name = *expr.cast_type;
      absl::StatusOr<Type> type = Type::FromName(name.name, name.parameters.data(), name.parameters.size());
      if (!type.ok())
        return absl::InvalidArgumentError(
            parser::FormatErrorWithCaret(sql, name.position, std::string(type.status().message())));
      absl::StatusOr<Value> cast = value.CastTo(*type);
      if (!cast.ok()) return ErrorAt(sql, expr, std::string(cast.status().message()));
      return cast;
    }
    default:
      break;
  }
  return absl::UnimplementedError(parser::FormatErrorWithCaret(
      sql, expr.position,
      absl::StrCat("expression '", parser::ToString(expr),
                   "' is not allowed here: VALUES rows, DEFAULT clauses and statement options take constants "
                   "(literals, unary minus, CAST); use INSERT ... SELECT for computed rows")));
}

}  // namespace tessera
