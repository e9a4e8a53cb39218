#include "optimizer/constant_folding.h"

#include <cmath>

#include "catalog/text_conversion.h"

namespace tessera::optimizer {
namespace {

bool AllChildrenConstant(const BoundExpression& e) {
  for (const auto& child : e.children) {
    if (child->kind != ExpressionKind::kConstant) return false;
  }
  return !e.children.empty();
}

std::optional<Value> FoldIntegerArithmetic(ArithmeticOp op, int64_t a, int64_t b, Type type) {
  int64_t result = 0;
  switch (op) {
    case ArithmeticOp::kAdd:
      if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
      break;
    case ArithmeticOp::kSubtract:
      if (__builtin_sub_overflow(a, b, &result)) return std::nullopt;
      break;
    case ArithmeticOp::kMultiply:
      if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
      break;
    case ArithmeticOp::kDivide:
      if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
      result = a / b;
      break;
    case ArithmeticOp::kModulo:
      if (b == 0 || b == -1) return std::nullopt;
      result = a % b;
      break;
    case ArithmeticOp::kNegate:
      if (a == INT64_MIN) return std::nullopt;
      result = -a;
      break;
  }
  if (type.id() == TypeId::kInteger) {
    if (result < INT32_MIN || result > INT32_MAX) return std::nullopt;
    return Value::Integer(static_cast<int32_t>(result));
  }
  return Value::BigInt(result);
}

std::optional<Value> FoldDecimalArithmetic(ArithmeticOp op, const Value& a, const Value* b, Type result_type) {
  int128 result = 0;
  const int128 x = a.AsInt128();
  switch (op) {
    case ArithmeticOp::kNegate:
      result = -x;
      break;
    case ArithmeticOp::kAdd:
    case ArithmeticOp::kSubtract:
      // Operands already have the result's type.
      if (a.type().scale() != result_type.scale() || b->type().scale() != result_type.scale()) return std::nullopt;
      if (op == ArithmeticOp::kAdd ? __builtin_add_overflow(x, b->AsInt128(), &result)
                                   : __builtin_sub_overflow(x, b->AsInt128(), &result)) {
        return std::nullopt;
      }
      break;
    case ArithmeticOp::kMultiply:
      if (a.type().scale() + b->type().scale() != result_type.scale()) return std::nullopt;
      if (__builtin_mul_overflow(x, b->AsInt128(), &result)) return std::nullopt;
      break;
    default:
      return std::nullopt;
  }
  const int128 limit = MaxDecimalUnscaled(result_type.precision());
  if (result > limit || result < -limit) return std::nullopt;
  return Value::Decimal(result, result_type);
}

std::optional<Value> FoldArithmetic(const BoundExpression& e) {
  const Value& a = e.children[0]->constant;
  const Value* b = e.children.size() > 1 ? &e.children[1]->constant : nullptr;
  if (a.is_null() || (b != nullptr && b->is_null())) return Value::Null(e.result_type);
  const Type type = e.result_type;
  switch (type.id()) {
    case TypeId::kInteger:
    case TypeId::kBigInt:
      if (e.arithmetic == ArithmeticOp::kSubtract && a.type().id() == TypeId::kDate) {
        return Value::Integer(static_cast<int32_t>(a.AsInt64() - b->AsInt64()));  // DATE - DATE
      }
      if (a.type().id() != type.id() || (b != nullptr && b->type().id() != type.id())) return std::nullopt;
      return FoldIntegerArithmetic(e.arithmetic, a.AsInt64(), b == nullptr ? 0 : b->AsInt64(), type);
    case TypeId::kDouble: {
      const double x = a.AsDouble();
      const double y = b == nullptr ? 0 : b->AsDouble();
      switch (e.arithmetic) {
        case ArithmeticOp::kAdd:
          return Value::Double(x + y);
        case ArithmeticOp::kSubtract:
          return Value::Double(x - y);
        case ArithmeticOp::kMultiply:
          return Value::Double(x * y);
        case ArithmeticOp::kDivide:
          if (y == 0) return std::nullopt;
          return Value::Double(x / y);
        case ArithmeticOp::kModulo:
          if (y == 0) return std::nullopt;
          return Value::Double(std::fmod(x, y));
        case ArithmeticOp::kNegate:
          return Value::Double(-x);
      }
      return std::nullopt;
    }
    case TypeId::kDecimal:
      if (a.type().id() != TypeId::kDecimal || (b != nullptr && b->type().id() != TypeId::kDecimal)) {
        return std::nullopt;
      }
      return FoldDecimalArithmetic(e.arithmetic, a, b, type);
    case TypeId::kDate: {
      if (b == nullptr || b->type().id() != TypeId::kInterval) return std::nullopt;
      Interval interval = b->AsInterval();
      if (interval.micros % kMicrosPerDay != 0) return std::nullopt;
      if (e.arithmetic == ArithmeticOp::kSubtract) {
        interval = Interval{-interval.months, -interval.days, -interval.micros};
      } else if (e.arithmetic != ArithmeticOp::kAdd) {
        return std::nullopt;
      }
      const int64_t days = static_cast<int64_t>(AddMonthsToDate(static_cast<int32_t>(a.AsInt64()), interval.months)) +
                           interval.days + interval.micros / kMicrosPerDay;
      if (days < INT32_MIN || days > INT32_MAX) return std::nullopt;
      return Value::Date(static_cast<int32_t>(days));
    }
    case TypeId::kTimestamp: {
      if (b == nullptr || b->type().id() != TypeId::kInterval) return std::nullopt;
      Interval interval = b->AsInterval();
      if (e.arithmetic == ArithmeticOp::kSubtract) {
        interval = Interval{-interval.months, -interval.days, -interval.micros};
      } else if (e.arithmetic != ArithmeticOp::kAdd) {
        return std::nullopt;
      }
      return Value::Timestamp(AddIntervalToTimestamp(a.AsInt64(), interval));
    }
    case TypeId::kInterval: {
      const Interval x = a.AsInterval();
      if (e.arithmetic == ArithmeticOp::kNegate) return Value::IntervalValue(Interval{-x.months, -x.days, -x.micros});
      if (b == nullptr) return std::nullopt;
      const Interval y = b->AsInterval();
      const int sign = e.arithmetic == ArithmeticOp::kAdd ? 1 : e.arithmetic == ArithmeticOp::kSubtract ? -1 : 0;
      if (sign == 0) return std::nullopt;
      return Value::IntervalValue(
          Interval{x.months + sign * y.months, x.days + sign * y.days, x.micros + sign * y.micros});
    }
    default:
      return std::nullopt;
  }
}

std::optional<Value> FoldComparison(const BoundExpression& e) {
  const Value& a = e.children[0]->constant;
  const Value& b = e.children[1]->constant;
  if (a.is_null() || b.is_null()) return Value::Null(Type::Boolean());
  if (!(a.type() == b.type())) return std::nullopt;
  const int c = a.Compare(b);
  switch (e.comparison) {
    case ComparisonOp::kEqual:
      return Value::Boolean(c == 0);
    case ComparisonOp::kNotEqual:
      return Value::Boolean(c != 0);
    case ComparisonOp::kLess:
      return Value::Boolean(c < 0);
    case ComparisonOp::kLessEqual:
      return Value::Boolean(c <= 0);
    case ComparisonOp::kGreater:
      return Value::Boolean(c > 0);
    case ComparisonOp::kGreaterEqual:
      return Value::Boolean(c >= 0);
  }
  return std::nullopt;
}

// AND/OR: a dominating constant decides; neutral constants are dropped.
ExpressionPtr FoldConnective(ExpressionPtr e) {
  const bool is_and = e->kind == ExpressionKind::kAnd;
  std::vector<ExpressionPtr> kept;
  for (auto& child : e->children) {
    if (child->kind == ExpressionKind::kConstant && !child->constant.is_null() &&
        child->constant.type().id() == TypeId::kBoolean) {
      if (child->constant.AsBool() != is_and) return MakeConstant(Value::Boolean(!is_and));
      continue;  // neutral
    }
    kept.push_back(std::move(child));
  }
  if (kept.empty()) return MakeConstant(Value::Boolean(is_and));
  if (kept.size() == 1 && kept[0]->result_type.id() == TypeId::kBoolean) return std::move(kept[0]);
  e->children = std::move(kept);
  return e;
}

// COALESCE whose first argument that is not a NULL constant is a constant (or that has none): that value.
ExpressionPtr FoldCoalesce(ExpressionPtr e) {
  for (ExpressionPtr& argument : e->children) {
    if (argument->kind != ExpressionKind::kConstant) return e;
    if (argument->constant.is_null()) continue;
    if (argument->result_type == e->result_type) return std::move(argument);
    return FoldConstant(MakeCast(std::move(argument), e->result_type));
  }
  return MakeConstant(Value::Null(e->result_type));
}

}  // namespace

ExpressionPtr FoldConstant(ExpressionPtr e) {
  if (e->kind == ExpressionKind::kAnd || e->kind == ExpressionKind::kOr) return FoldConnective(std::move(e));
  if (e->kind == ExpressionKind::kFunction && e->function == FunctionId::kCoalesce) return FoldCoalesce(std::move(e));
  if (!AllChildrenConstant(*e)) return e;
  std::optional<Value> folded;
  switch (e->kind) {
    case ExpressionKind::kCast: {
      absl::StatusOr<Value> cast = e->children[0]->constant.CastTo(e->result_type);
      if (cast.ok()) folded = *std::move(cast);
      break;
    }
    case ExpressionKind::kArithmetic:
      folded = FoldArithmetic(*e);
      break;
    case ExpressionKind::kComparison:
      folded = FoldComparison(*e);
      break;
    case ExpressionKind::kNot: {
      const Value& a = e->children[0]->constant;
      folded = a.is_null() ? Value::Null(Type::Boolean()) : Value::Boolean(!a.AsBool());
      break;
    }
    case ExpressionKind::kIsNull:
      folded = Value::Boolean(e->children[0]->constant.is_null() != e->negated);
      break;
    default:
      break;
  }
  if (!folded.has_value()) return e;
  if (folded->is_null()) folded = Value::Null(e->result_type);
  return MakeConstant(*std::move(folded));
}

ExpressionPtr FoldConstantsDeep(ExpressionPtr expression) {
  for (auto& child : expression->children) child = FoldConstantsDeep(std::move(child));
  return FoldConstant(std::move(expression));
}

}  // namespace tessera::optimizer
