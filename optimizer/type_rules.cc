#include "optimizer/type_rules.h"

#include <algorithm>

namespace tessera::optimizer {
namespace {

bool IsIntegerType(Type type) { return type.id() == TypeId::kInteger || type.id() == TypeId::kBigInt; }

// Both types' scales are kept: when the digits do not fit in 38, integer digits are given up (values that
// need them fail the cast at run time with an overflow error, instead of silently losing fraction digits).
Type DecimalCommon(Type a, Type b, int extra_integer_digits) {
  a = ExactDecimal(a);
  b = ExactDecimal(b);
  const int scale = std::max(a.scale(), b.scale());
  const int integer_digits = std::max(a.precision() - a.scale(), b.precision() - b.scale()) + extra_integer_digits;
  return Type::Decimal(std::max(std::min(integer_digits + scale, kMaxDecimalPrecision), 1), scale);
}

}  // namespace

Type ExactDecimal(Type type) {
  if (type.id() == TypeId::kInteger) return Type::Decimal(10, 0);
  if (type.id() == TypeId::kBigInt) return Type::Decimal(19, 0);
  return type;
}

std::optional<Type> CommonType(Type a, Type b) {
  if (a == b) return a;
  if (a.id() == TypeId::kNull) return b;
  if (b.id() == TypeId::kNull) return a;
  if (a.IsNumeric() && b.IsNumeric()) {
    if (a.id() == TypeId::kDouble || b.id() == TypeId::kDouble) return Type::Double();
    if (IsIntegerType(a) && IsIntegerType(b)) return Type::BigInt();  // they differ, so one is BIGINT
    return DecimalCommon(a, b, 0);
  }
  if (a.IsString() && b.IsString()) {
    if (a.length() == 0 || b.length() == 0) return Type::Varchar();
    return Type::Varchar(std::max(a.length(), b.length()));
  }
  const bool a_time = a.id() == TypeId::kDate || a.id() == TypeId::kTimestamp;
  const bool b_time = b.id() == TypeId::kDate || b.id() == TypeId::kTimestamp;
  if (a_time && b_time) return Type::Timestamp();
  return std::nullopt;
}

std::optional<ArithmeticTyping> TypeArithmetic(ArithmeticOp op, Type left, Type right) {
  const TypeId l = left.id();
  const TypeId r = right.id();
  // Date and time arithmetic.
  if (op == ArithmeticOp::kAdd || op == ArithmeticOp::kSubtract) {
    const bool left_time = l == TypeId::kDate || l == TypeId::kTimestamp;
    if (left_time && r == TypeId::kInterval) return ArithmeticTyping{left, right, left};
    if (op == ArithmeticOp::kAdd && r != TypeId::kInterval && (r == TypeId::kDate || r == TypeId::kTimestamp) &&
        l == TypeId::kInterval) {
      return ArithmeticTyping{right, left, right, /*swap_operands=*/true};
    }
    if (op == ArithmeticOp::kSubtract && l == TypeId::kDate && r == TypeId::kDate) {
      return ArithmeticTyping{left, right, Type::Integer()};
    }
    // DATE +- integer days.
    if (l == TypeId::kDate && IsIntegerType(right)) return ArithmeticTyping{left, right, left};
    if (op == ArithmeticOp::kAdd && IsIntegerType(left) && r == TypeId::kDate) {
      return ArithmeticTyping{right, left, right, /*swap_operands=*/true};
    }
    if (l == TypeId::kInterval && r == TypeId::kInterval) return ArithmeticTyping{left, right, left};
  }
  if (!left.IsNumeric() || !right.IsNumeric()) return std::nullopt;
  if (l == TypeId::kDouble || r == TypeId::kDouble) {
    return ArithmeticTyping{Type::Double(), Type::Double(), Type::Double()};
  }
  if (IsIntegerType(left) && IsIntegerType(right)) {
    const Type common = (l == TypeId::kBigInt || r == TypeId::kBigInt) ? Type::BigInt() : Type::Integer();
    return ArithmeticTyping{common, common, common};
  }
  switch (op) {
    case ArithmeticOp::kAdd:
    case ArithmeticOp::kSubtract: {
      const Type common = DecimalCommon(left, right, 1);
      return ArithmeticTyping{common, common, common};
    }
    case ArithmeticOp::kModulo: {
      const Type common = DecimalCommon(left, right, 0);
      return ArithmeticTyping{common, common, common};
    }
    case ArithmeticOp::kMultiply: {
      const Type a = ExactDecimal(left);
      const Type b = ExactDecimal(right);
      const int scale = std::min(a.scale() + b.scale(), kMaxDecimalPrecision);
      const int precision = std::min(a.precision() + b.precision() + 1, kMaxDecimalPrecision);
      return ArithmeticTyping{a, b, Type::Decimal(std::max(precision, scale), scale)};
    }
    case ArithmeticOp::kDivide:
      // DECIMAL / DECIMAL is DOUBLE, as in DuckDB: a quotient rarely has a natural scale, and a fixed one
      // (e.g. 6 digits) loses the relative precision that ratios such as TPC-H Q14's promo_revenue need.
      return ArithmeticTyping{Type::Double(), Type::Double(), Type::Double()};
    case ArithmeticOp::kNegate:
      break;
  }
  return std::nullopt;
}

bool CanCast(Type from, Type to) {
  if (from == to || from.id() == TypeId::kNull) return true;
  if (from.IsString() || to.IsString()) return true;
  if (from.IsNumeric() && to.IsNumeric()) return true;
  const bool from_time = from.id() == TypeId::kDate || from.id() == TypeId::kTimestamp;
  const bool to_time = to.id() == TypeId::kDate || to.id() == TypeId::kTimestamp;
  if (from_time && to_time) return true;
  if (IsIntegerType(from) && to.id() == TypeId::kBoolean) return true;
  if (from.id() == TypeId::kBoolean && IsIntegerType(to)) return true;
  return false;
}

std::optional<Type> AggregateResultType(AggregateKind function, Type argument, Type* argument_type) {
  *argument_type = argument;
  switch (function) {
    case AggregateKind::kCountStar:
    case AggregateKind::kCount:
      return Type::BigInt();
    case AggregateKind::kSum:
      switch (argument.id()) {
        case TypeId::kInteger:
          return Type::BigInt();
        case TypeId::kBigInt:
          return Type::Decimal(kMaxDecimalPrecision, 0);
        case TypeId::kDecimal:
          return Type::Decimal(kMaxDecimalPrecision, argument.scale());
        case TypeId::kDouble:
          return Type::Double();
        default:
          return std::nullopt;
      }
    case AggregateKind::kQuantileCont:  // as DuckDB: DECIMAL keeps its type, other numbers are AVG's DOUBLE
      if (argument.id() == TypeId::kDecimal) return argument;
      [[fallthrough]];
    case AggregateKind::kAvg:
      switch (argument.id()) {
        case TypeId::kInteger:
        case TypeId::kBigInt:
        case TypeId::kDouble:
          return Type::Double();
        case TypeId::kDecimal:
          return Type::Double();  // as DuckDB: exact to 1e-15 relative, not rounded to a scale
        default:
          return std::nullopt;
      }
    case AggregateKind::kMin:
    case AggregateKind::kMax:
    case AggregateKind::kQuantileDisc:
      if (argument.id() == TypeId::kNull || argument.id() == TypeId::kInterval) return std::nullopt;
      return argument;
    case AggregateKind::kStringAgg:
      if (!argument.IsString()) *argument_type = Type::Varchar();
      return Type::Varchar();
    case AggregateKind::kApproxCountDistinct:
      if (argument.id() == TypeId::kNull || argument.id() == TypeId::kInterval) return std::nullopt;
      return Type::BigInt();
  }
  return std::nullopt;
}

}  // namespace tessera::optimizer
