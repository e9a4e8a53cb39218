// Scalar expressions: names, literals, operators, functions, CASE, CAST, BETWEEN, IN lists, LIKE, EXTRACT,
// SUBSTRING; typing and implicit casts (optimizer/type_rules.h); aggregate calls above an Aggregate.

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "catalog/schema.h"
#include "catalog/text_conversion.h"
#include "common/status_macros.h"
#include "optimizer/constant_folding.h"
#include "optimizer/expression_analysis.h"
#include "optimizer/grouping_sets.h"
#include "optimizer/query_binder.h"
#include "optimizer/type_rules.h"
#include "parser/parser.h"

namespace tessera::optimizer {
namespace {

using parser::ExprKind;
using parser::LiteralKind;
using parser::ParsedExpr;

bool IsStringConstant(const BoundExpression& e) {
  return e.kind == ExpressionKind::kConstant && e.result_type.IsString();
}

bool IsNullType(const BoundExpression& e) { return e.result_type.id() == TypeId::kNull; }

ExpressionPtr MakeNode(ExpressionKind kind, Type type) {
  auto node = std::make_unique<BoundExpression>();
  node->kind = kind;
  node->result_type = type;
  return node;
}

std::optional<ComparisonOp> ComparisonFromName(const std::string& op) {
  if (op == "=") return ComparisonOp::kEqual;
  if (op == "<>" || op == "!=") return ComparisonOp::kNotEqual;
  if (op == "<") return ComparisonOp::kLess;
  if (op == "<=") return ComparisonOp::kLessEqual;
  if (op == ">") return ComparisonOp::kGreater;
  if (op == ">=") return ComparisonOp::kGreaterEqual;
  return std::nullopt;
}

std::optional<ArithmeticOp> ArithmeticFromName(const std::string& op) {
  if (op == "+") return ArithmeticOp::kAdd;
  if (op == "-") return ArithmeticOp::kSubtract;
  if (op == "*") return ArithmeticOp::kMultiply;
  if (op == "/") return ArithmeticOp::kDivide;
  if (op == "%") return ArithmeticOp::kModulo;
  return std::nullopt;
}

const std::vector<std::string>& KnownFunctions() {
  static const auto* names =
      new std::vector<std::string>{"count", "sum",   "avg",   "min",    "max",         "coalesce",  "nullif",
                                   "abs",   "upper", "lower", "length", "char_length", "substring", "substr"};
  return *names;
}

std::string TypeList(const std::vector<ExpressionPtr>& arguments) {
  std::string out;
  for (const auto& argument : arguments) {
    if (!out.empty()) out += ", ";
    out += argument->result_type.ToString();
  }
  return out;
}

}  // namespace

bool QueryBinder::IsAggregateName(const std::string& name) {
  return name == "COUNT" || name == "SUM" || name == "AVG" || name == "MIN" || name == "MAX" || name == "BOOL_AND" ||
         name == "BOOL_OR" || IsStatisticalAggregateName(name) || IsHolisticAggregateName(name);
}

bool QueryBinder::ContainsAggregate(const ParsedExpr& expr) {
  // `sum(x) OVER (...)` is a window call, not an aggregate; its arguments and window may hold aggregates.
  if (expr.kind == ExprKind::kFunctionCall &&
      ((IsAggregateName(expr.name) && expr.window == nullptr) || IsGroupingCall(expr)))
    return true;
  for (const auto& child : expr.children) {
    if (ContainsAggregate(*child)) return true;
  }
  if (expr.window != nullptr) {
    for (const auto& key : expr.window->partition_by) {
      if (ContainsAggregate(*key)) return true;
    }
    for (const parser::OrderByItem& item : expr.window->order_by) {
      if (ContainsAggregate(*item.expr)) return true;
    }
  }
  return false;
}

bool QueryBinder::ContainsSubquery(const ParsedExpr& expr) {
  if (expr.subquery != nullptr) return true;
  for (const auto& child : expr.children) {
    if (ContainsSubquery(*child)) return true;
  }
  return false;
}

// ----------------------------------------------------------------------------------------------------
// Coercion

absl::StatusOr<ExpressionPtr> QueryBinder::Coerce(ExpressionPtr expression, Type target,
                                                  const parser::SourcePosition& position) {
  if (expression->result_type == target) return expression;
  if (expression->kind == ExpressionKind::kConstant) {
    if (expression->constant.is_null()) return MakeConstant(Value::Null(target));
    if (!CanCast(expression->result_type, target)) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, position,
                     absl::StrCat("cannot cast ", expression->result_type.ToString(), " to ", target.ToString()));
    }
    absl::StatusOr<Value> cast = expression->constant.CastTo(target);
    if (!cast.ok()) return ErrorAt(absl::StatusCode::kInvalidArgument, position, std::string(cast.status().message()));
    return MakeConstant(*std::move(cast));
  }
  if (!CanCast(expression->result_type, target)) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, position,
                   absl::StrCat("cannot cast ", expression->result_type.ToString(), " to ", target.ToString()));
  }
  return MakeCast(std::move(expression), target);
}

absl::Status QueryBinder::CoerceComparison(ExpressionPtr* left, ExpressionPtr* right, const ParsedExpr& where,
                                           std::string_view what) {
  // A string literal compared with a non-string takes the other side's type ('1995-01-01' vs a DATE).
  for (int side = 0; side < 2; ++side) {
    ExpressionPtr& constant = side == 0 ? *left : *right;
    const ExpressionPtr& other = side == 0 ? *right : *left;
    if (IsStringConstant(*constant) && !other->result_type.IsString() && !IsNullType(*other)) {
      TESSERA_ASSIGN_OR_RETURN(constant, Coerce(std::move(constant), other->result_type, where.position));
    }
  }
  // A string literal compared with a string column takes the column's type when it fits (no cast on the
  // column).
  if ((*left)->result_type.IsString() && (*right)->result_type.IsString() &&
      !((*left)->result_type == (*right)->result_type)) {
    for (int side = 0; side < 2; ++side) {
      ExpressionPtr& constant = side == 0 ? *left : *right;
      const ExpressionPtr& other = side == 0 ? *right : *left;
      if (IsStringConstant(*constant) && other->kind != ExpressionKind::kConstant) {
        absl::StatusOr<Value> cast = constant->constant.CastTo(other->result_type);
        if (cast.ok()) constant = MakeConstant(*std::move(cast));
      }
    }
  }
  std::optional<Type> common = CommonType((*left)->result_type, (*right)->result_type);
  if (!common.has_value()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, where.position,
                   absl::StrCat(std::string(what), ": cannot compare ", (*left)->result_type.ToString(), " with ",
                                (*right)->result_type.ToString()));
  }
  TESSERA_ASSIGN_OR_RETURN(*left, Coerce(std::move(*left), *common, where.position));
  TESSERA_ASSIGN_OR_RETURN(*right, Coerce(std::move(*right), *common, where.position));
  return absl::OkStatus();
}

absl::Status QueryBinder::UnifyTypes(std::vector<ExpressionPtr>* expressions,
                                     const std::vector<const ParsedExpr*>& sources, std::string_view what) {
  // The type of the non-literal (and non-string-literal) operands first; string literals then adapt to it.
  std::optional<Type> target;
  for (size_t i = 0; i < expressions->size(); ++i) {
    const BoundExpression& e = *(*expressions)[i];
    if (IsNullType(e) || IsStringConstant(e)) continue;
    if (!target.has_value()) {
      target = e.result_type;
      continue;
    }
    std::optional<Type> common = CommonType(*target, e.result_type);
    if (!common.has_value()) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, sources[i]->position,
                     absl::StrCat(std::string(what), " types ", target->ToString(), " and ", e.result_type.ToString(),
                                  " cannot be matched"));
    }
    target = common;
  }
  if (!target.has_value() || target->IsString()) {
    for (const ExpressionPtr& e : *expressions) {
      if (!IsStringConstant(*e)) continue;
      if (!target.has_value()) {
        target = e->result_type;
      } else if (!e->constant.CastTo(*target).ok()) {
        target = CommonType(*target, e->result_type);
      }
    }
  }
  if (!target.has_value()) target = Type::Varchar();  // all NULL
  for (size_t i = 0; i < expressions->size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN((*expressions)[i], Coerce(std::move((*expressions)[i]), *target, sources[i]->position));
  }
  return absl::OkStatus();
}

// ----------------------------------------------------------------------------------------------------
// Dispatch

absl::StatusOr<ExpressionPtr> QueryBinder::BindBoolean(const ParsedExpr& expr, ExpressionContext& context) {
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(expr, context));
  if (IsNullType(*bound)) return MakeConstant(Value::Null(Type::Boolean()));
  if (bound->result_type.id() != TypeId::kBoolean) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("argument of ", context.clause, " must be type BOOLEAN, not type ",
                                bound->result_type.ToString()));
  }
  return bound;
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindExpression(const ParsedExpr& expr, ExpressionContext& context) {
  if (expr.kind == ExprKind::kFunctionCall && expr.window != nullptr) return BindWindowReference(expr, context);
  if (context.aggregates != nullptr) {
    bool handled = false;
    absl::StatusOr<ExpressionPtr> result = BindAggregateMode(expr, context, &handled);
    if (!result.ok() || handled) return result;
  }
  const bool conjunct_root = context.conjunct_root;
  context.conjunct_root = false;
  switch (expr.kind) {
    case ExprKind::kLiteral:
      return BindLiteral(expr);
    case ExprKind::kColumnRef:
      return BindColumnRef(expr, context);
    case ExprKind::kStar:
      return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position, "'*' is not allowed here");
    case ExprKind::kUnary:
      return BindUnary(expr, context);
    case ExprKind::kBinary: {
      context.conjunct_root = conjunct_root;
      absl::StatusOr<ExpressionPtr> result = BindBinary(expr, context);
      context.conjunct_root = false;
      return result;
    }
    case ExprKind::kFunctionCall:
      return BindFunction(expr, context);
    case ExprKind::kCase:
      return BindCase(expr, context);
    case ExprKind::kCast:
      return BindCast(expr, context);
    case ExprKind::kBetween:
      return BindBetween(expr, context);
    case ExprKind::kInList:
      return BindInList(expr, context);
    case ExprKind::kLike:
      return BindLike(expr, context);
    case ExprKind::kIsNull: {
      TESSERA_ASSIGN_OR_RETURN(ExpressionPtr operand, BindExpression(*expr.children[0], context));
      ExpressionPtr node = MakeNode(ExpressionKind::kIsNull, Type::Boolean());
      node->negated = expr.negated;
      node->children.push_back(std::move(operand));
      return FoldConstant(std::move(node));
    }
    case ExprKind::kExtract:
      return BindExtract(expr, context);
    case ExprKind::kSubstring:
      return BindSubstring(expr, context);
    case ExprKind::kScalarSubquery:
      return BindScalarSubquery(expr, context, /*null_rejecting=*/false);
    case ExprKind::kExists:
    case ExprKind::kInSubquery:
      return BindSubqueryMark(expr, context);
  }
  return ErrorAt(absl::StatusCode::kInternal, expr.position, "unknown expression kind");
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindAggregateMode(const ParsedExpr& expr, ExpressionContext& context,
                                                             bool* handled) {
  AggregateBinding& aggregation = *context.aggregates;
  const int group_count = static_cast<int>(aggregation.group_keys.size());
  if (auto computed = aggregation.computed_values.find(&expr); computed != aggregation.computed_values.end()) {
    *handled = true;
    return computed->second->Clone();
  }
  if (expr.kind == ExprKind::kFunctionCall && IsAggregateName(expr.name)) {
    auto it = aggregation.call_index.find(&expr);
    if (it == aggregation.call_index.end()) {
      return ErrorAt(absl::StatusCode::kInternal, expr.position, "aggregate call was not collected");
    }
    *handled = true;
    return MakeColumn(group_count + it->second, aggregation.calls[it->second].result_type);
  }
  if (expr.kind == ExprKind::kLiteral || ContainsAggregate(expr) || ContainsWindow(expr) || ContainsSubquery(expr))
    return nullptr;
  // A subtree without aggregates: it must be (or be built from) GROUP BY keys.
  ExpressionContext below;
  below.scope = aggregation.scope;
  below.clause = context.clause;
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr bound, BindExpression(expr, below));
  for (int i = 0; i < group_count; ++i) {
    if (ExpressionsEqual(*aggregation.group_keys[i], *bound)) {
      *handled = true;
      return MakeColumn(i, bound->result_type);
    }
  }
  if (MaxColumnIndex(*bound) < 0) {  // no column at all: valid as is
    *handled = true;
    return bound;
  }
  if (expr.kind == ExprKind::kColumnRef) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("column '", expr.qualifier.empty() ? "" : expr.qualifier + ".", expr.name,
                                "' must appear in the GROUP BY clause or be used in an aggregate function"));
  }
  return nullptr;  // bind structurally; its column references are checked one by one
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindColumnRef(const ParsedExpr& expr, ExpressionContext& context) {
  absl::StatusOr<Scope::Resolution> resolved = context.scope->Resolve(expr.qualifier, expr.name);
  if (!resolved.ok()) return Rewrap(resolved.status(), expr.position);
  if (resolved->depth == 0) return MakeColumn(resolved->index, resolved->column->type);
  if (resolved->depth == 1 && context.correlation != nullptr) {
    return MakeColumn(kOuterColumnBase + resolved->index, resolved->column->type);
  }
  const Scope* found = context.scope;
  for (int depth = 0; depth < resolved->depth; ++depth) found = found->parent();
  if (found->lateral_source()) {
    return ErrorAt(absl::StatusCode::kUnimplemented, expr.position,
                   absl::StrCat("LATERAL reference to '", expr.qualifier.empty() ? "" : expr.qualifier + ".", expr.name,
                                "' is not supported here: a LATERAL subquery may read earlier FROM items only in "
                                "one SELECT block without WITH, LIMIT, OFFSET or set operations, outside nested "
                                "subqueries and derived tables"));
  }
  return ErrorAt(
      absl::StatusCode::kUnimplemented, expr.position,
      absl::StrCat("correlated reference to '", expr.qualifier.empty() ? "" : expr.qualifier + ".", expr.name,
                   "' is not supported here: only the WHERE clause of an EXISTS, IN or aggregate "
                   "scalar subquery may refer to the immediately enclosing query"));
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindLiteral(const ParsedExpr& expr) {
  const std::string& text = expr.literal_text;
  auto invalid = [&](std::string_view what) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("invalid ", std::string(what), " literal '", text, "'"));
  };
  switch (expr.literal_kind) {
    case LiteralKind::kNull:
      return MakeConstant(Value::Null());
    case LiteralKind::kBoolean:
      return MakeConstant(Value::Boolean(absl::AsciiStrToUpper(text) == "TRUE"));
    case LiteralKind::kInteger: {
      int64_t value = 0;
      if (ParseInt64(text, &value)) {
        if (value >= INT32_MIN && value <= INT32_MAX) return MakeConstant(Value::Integer(static_cast<int32_t>(value)));
        return MakeConstant(Value::BigInt(value));
      }
      int128 wide = 0;
      if (text.size() <= 39 && ParseDecimal(text, kMaxDecimalPrecision, 0, &wide)) {
        return MakeConstant(Value::Decimal(wide, Type::Decimal(kMaxDecimalPrecision, 0)));
      }
      return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                     absl::StrCat("numeric literal ", text, " is out of range"));
    }
    case LiteralKind::kDecimal: {
      if (text.find_first_of("eE") != std::string::npos) {
        double value = 0;
        if (!ParseDouble(text, &value)) return invalid("numeric");
        return MakeConstant(Value::Double(value));
      }
      const size_t dot = text.find('.');
      const int scale = dot == std::string::npos ? 0 : static_cast<int>(text.size() - dot - 1);
      int digits = 0;
      for (char c : text) digits += c >= '0' && c <= '9';
      const int precision = std::max({digits, scale, 1});
      if (precision > kMaxDecimalPrecision) {
        double value = 0;
        if (!ParseDouble(text, &value)) return invalid("numeric");
        return MakeConstant(Value::Double(value));
      }
      int128 unscaled = 0;
      if (!ParseDecimal(text, precision, scale, &unscaled)) return invalid("numeric");
      return MakeConstant(Value::Decimal(unscaled, Type::Decimal(precision, scale)));
    }
    case LiteralKind::kString:
      return MakeConstant(Value::String(text, Type::Varchar()));
    case LiteralKind::kDate: {
      int32_t days = 0;
      if (!ParseDate(text, &days)) return invalid("DATE");
      return MakeConstant(Value::Date(days));
    }
    case LiteralKind::kTimestamp: {
      int64_t micros = 0;
      if (!ParseTimestamp(text, &micros)) return invalid("TIMESTAMP");
      return MakeConstant(Value::Timestamp(micros));
    }
    case LiteralKind::kInterval: {
      Interval interval;
      if (!ParseInterval(text, expr.interval_unit, &interval)) return invalid("INTERVAL");
      return MakeConstant(Value::IntervalValue(interval));
    }
  }
  return invalid("unknown");
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindUnary(const ParsedExpr& expr, ExpressionContext& context) {
  if (expr.name == "NOT") {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr operand, BindExpression(*expr.children[0], context));
    if (IsNullType(*operand)) operand = MakeConstant(Value::Null(Type::Boolean()));
    if (operand->result_type.id() != TypeId::kBoolean) {
      return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                     absl::StrCat("argument of NOT must be type BOOLEAN, not type ", operand->result_type.ToString()));
    }
    ExpressionPtr node = MakeNode(ExpressionKind::kNot, Type::Boolean());
    node->children.push_back(std::move(operand));
    return FoldConstant(std::move(node));
  }
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr operand, BindExpression(*expr.children[0], context));
  if (IsNullType(*operand)) return operand;
  const Type type = operand->result_type;
  if (!type.IsNumeric() && type.id() != TypeId::kInterval) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("cannot apply unary ", expr.name, " to ", type.ToString()));
  }
  if (expr.name == "+") return operand;
  return FoldConstant(MakeArithmetic(ArithmeticOp::kNegate, std::move(operand), nullptr, type));
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindBinary(const ParsedExpr& expr, ExpressionContext& context) {
  const bool conjunct_root = context.conjunct_root;
  context.conjunct_root = false;
  const std::string& op = expr.name;
  if (op == "AND" || op == "OR") {
    std::vector<ExpressionPtr> terms;
    for (const auto& child : expr.children) {
      TESSERA_ASSIGN_OR_RETURN(ExpressionPtr term, BindExpression(*child, context));
      if (IsNullType(*term)) term = MakeConstant(Value::Null(Type::Boolean()));
      if (term->result_type.id() != TypeId::kBoolean) {
        return ErrorAt(
            absl::StatusCode::kInvalidArgument, child->position,
            absl::StrCat("argument of ", op, " must be type BOOLEAN, not type ", term->result_type.ToString()));
      }
      terms.push_back(std::move(term));
    }
    ExpressionPtr combined = op == "AND" ? CombineConjuncts(std::move(terms)) : CombineDisjuncts(std::move(terms));
    return FoldConstant(std::move(combined));
  }
  if (std::optional<ComparisonOp> comparison = ComparisonFromName(op); comparison.has_value()) {
    ExpressionPtr sides[2];
    for (int i = 0; i < 2; ++i) {
      const ParsedExpr& child = *expr.children[i];
      if (conjunct_root && child.kind == ExprKind::kScalarSubquery) {
        TESSERA_ASSIGN_OR_RETURN(sides[i], BindScalarSubquery(child, context, /*null_rejecting=*/true));
      } else {
        TESSERA_ASSIGN_OR_RETURN(sides[i], BindExpression(child, context));
      }
    }
    TESSERA_RETURN_IF_ERROR(CoerceComparison(&sides[0], &sides[1], expr, absl::StrCat("operator ", op)));
    return FoldConstant(MakeComparison(*comparison, std::move(sides[0]), std::move(sides[1])));
  }
  if (std::optional<ArithmeticOp> arithmetic = ArithmeticFromName(op); arithmetic.has_value()) {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr left, BindExpression(*expr.children[0], context));
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr right, BindExpression(*expr.children[1], context));
    return BindArithmetic(expr, *arithmetic, std::move(left), std::move(right));
  }
  if (op == "||") {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr left, BindExpression(*expr.children[0], context));
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr right, BindExpression(*expr.children[1], context));
    return BindConcatOperator(expr, std::move(left), std::move(right));
  }
  return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position, absl::StrCat("unknown operator ", op));
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindArithmetic(const ParsedExpr& expr, ArithmeticOp op, ExpressionPtr left,
                                                          ExpressionPtr right) {
  // Untyped operands take the other side's type: NULL, and string literals next to numbers or dates.
  for (int side = 0; side < 2; ++side) {
    ExpressionPtr& operand = side == 0 ? left : right;
    const ExpressionPtr& other = side == 0 ? right : left;
    if (IsNullType(*operand) && !IsNullType(*other)) {
      Type target = other->result_type;
      if (target.id() == TypeId::kDate || target.id() == TypeId::kTimestamp) target = Type::IntervalType();
      operand = MakeConstant(Value::Null(target));
    } else if (IsStringConstant(*operand) && (other->result_type.IsNumeric())) {
      TESSERA_ASSIGN_OR_RETURN(operand, Coerce(std::move(operand), other->result_type, expr.position));
    }
  }
  if (IsNullType(*left) && IsNullType(*right)) return MakeConstant(Value::Null(Type::Integer()));
  // DATE +- integer constant: that many days.
  if ((op == ArithmeticOp::kAdd || op == ArithmeticOp::kSubtract) && left->result_type.id() == TypeId::kDate &&
      right->kind == ExpressionKind::kConstant &&
      (right->result_type.id() == TypeId::kInteger || right->result_type.id() == TypeId::kBigInt) &&
      !right->constant.is_null() && right->constant.AsInt64() >= INT32_MIN && right->constant.AsInt64() <= INT32_MAX) {
    right = MakeConstant(Value::IntervalValue(Interval{0, static_cast<int32_t>(right->constant.AsInt64()), 0}));
  }
  std::optional<ArithmeticTyping> typing = TypeArithmetic(op, left->result_type, right->result_type);
  if (!typing.has_value()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("operator ", expr.name, " cannot be applied to ", left->result_type.ToString(), " and ",
                                right->result_type.ToString()));
  }
  if (typing->swap_operands) std::swap(left, right);
  TESSERA_ASSIGN_OR_RETURN(left, Coerce(std::move(left), typing->left, expr.position));
  TESSERA_ASSIGN_OR_RETURN(right, Coerce(std::move(right), typing->right, expr.position));
  return FoldConstant(MakeArithmetic(op, std::move(left), std::move(right), typing->result));
}

// ----------------------------------------------------------------------------------------------------
// Functions

absl::StatusOr<AggregateCall> QueryBinder::BindAggregateCall(const ParsedExpr& call, ExpressionContext& context) {
  const std::string& name = call.name;
  if (IsHolisticAggregateName(name)) return BindHolisticAggregateCall(call, context);
  if (!call.aggregate_order_by.empty()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, call.position,
                   absl::StrCat(call.within_group ? "WITHIN GROUP" : "ORDER BY", " is not allowed in ",
                                absl::AsciiStrToLower(name)));
  }
  AggregateCall result;
  result.distinct = call.distinct;
  result.name = parser::ToString(call);
  if (name == "COUNT" && call.children.size() == 1 && call.children[0]->kind == ExprKind::kStar) {
    result.function = AggregateKind::kCountStar;
    result.result_type = Type::BigInt();
    return result;
  }
  // BOOL_AND / BOOL_OR are MIN / MAX of a BOOLEAN (FALSE < TRUE).
  const bool boolean = name == "BOOL_AND" || name == "BOOL_OR";
  result.function = name == "COUNT"                       ? AggregateKind::kCount
                    : name == "SUM"                       ? AggregateKind::kSum
                    : name == "AVG"                       ? AggregateKind::kAvg
                    : name == "MIN" || name == "BOOL_AND" ? AggregateKind::kMin
                                                          : AggregateKind::kMax;
  if (result.function == AggregateKind::kMin || result.function == AggregateKind::kMax) {
    result.distinct = false;  // duplicates do not change an extreme
  }
  if (call.children.size() != 1) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, call.position,
                   absl::StrCat("function ", absl::AsciiStrToLower(name), " takes exactly one argument"));
  }
  ExpressionContext argument_context = context;
  argument_context.aggregates = nullptr;
  argument_context.conjunct_root = false;
  argument_context.clause = "aggregate function arguments";
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr argument, BindExpression(*call.children[0], argument_context));
  if (boolean && argument->result_type.id() == TypeId::kNull) argument = MakeConstant(Value::Null(Type::Boolean()));
  if (boolean && argument->result_type.id() != TypeId::kBoolean) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, call.position,
                   absl::StrCat("function ", absl::AsciiStrToLower(name), "(", argument->result_type.ToString(),
                                ") does not exist"));
  }
  Type argument_type;
  std::optional<Type> type = AggregateResultType(result.function, argument->result_type, &argument_type);
  if (!type.has_value()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, call.position,
                   absl::StrCat("function ", absl::AsciiStrToLower(name), "(", argument->result_type.ToString(),
                                ") does not exist"));
  }
  TESSERA_ASSIGN_OR_RETURN(result.argument, Coerce(std::move(argument), argument_type, call.children[0]->position));
  result.result_type = *type;
  return result;
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindFunction(const ParsedExpr& expr, ExpressionContext& context) {
  const std::string& name = expr.name;
  const std::string lower = absl::AsciiStrToLower(name);
  if (IsAggregateName(name)) {
    if (context.clause == "aggregate function arguments") {
      return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position, "aggregate function calls cannot be nested");
    }
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("aggregate functions are not allowed in ", context.clause));
  }
  if (IsGroupingCall(expr)) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("GROUPING is not allowed in ", context.clause,
                                ": only in the select list, HAVING and ORDER BY of a query with GROUP BY"));
  }
  if (expr.distinct || expr.aggregate_filter || !expr.aggregate_order_by.empty()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat(expr.distinct           ? "DISTINCT"
                                : expr.aggregate_filter ? "FILTER"
                                : expr.within_group     ? "WITHIN GROUP"
                                                        : "ORDER BY",
                                " specified, but ", lower, " is not an aggregate function"));
  }
  if (IsScalarFunctionName(lower)) return BindScalarFunction(expr, context);
  const bool known = std::find(KnownFunctions().begin(), KnownFunctions().end(), lower) != KnownFunctions().end();
  if (!known) {
    std::vector<std::string> candidates = KnownFunctions();
    for (std::string& name : ScalarFunctionNames()) candidates.push_back(std::move(name));
    const std::string hint = ClosestName(lower, candidates);
    return ErrorAt(absl::StatusCode::kNotFound, expr.position,
                   absl::StrCat("function ", lower, " does not exist",
                                hint.empty() ? "" : absl::StrCat("; did you mean '", hint, "'?")));
  }
  if (lower == "substring" || lower == "substr") return BindSubstring(expr, context);
  std::vector<ExpressionPtr> arguments;
  std::vector<const ParsedExpr*> sources;
  TESSERA_RETURN_IF_ERROR(BindArguments(expr, context, &arguments, &sources));
  auto arity_error = [&](std::string_view expected) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("function ", lower, " expects ", std::string(expected), " argument",
                                expected == "1" ? "" : "s", ", got ", arguments.size()));
  };
  auto type_error = [&]() {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("function ", lower, "(", TypeList(arguments), ") does not exist"));
  };
  ExpressionPtr node = MakeNode(ExpressionKind::kFunction, Type::Null());
  if (lower == "coalesce") {
    if (arguments.empty()) return arity_error("at least 1");
    TESSERA_RETURN_IF_ERROR(UnifyTypes(&arguments, sources, "COALESCE"));
    node->function = FunctionId::kCoalesce;
  } else if (lower == "nullif") {
    if (arguments.size() != 2) return arity_error("2");
    TESSERA_RETURN_IF_ERROR(UnifyTypes(&arguments, sources, "NULLIF"));
    node->function = FunctionId::kNullIf;
  } else if (lower == "abs") {
    if (arguments.size() != 1) return arity_error("1");
    if (!arguments[0]->result_type.IsNumeric()) return type_error();
    node->function = FunctionId::kAbs;
  } else if (lower == "upper" || lower == "lower") {
    if (arguments.size() != 1) return arity_error("1");
    if (!arguments[0]->result_type.IsString()) return type_error();
    node->function = lower == "upper" ? FunctionId::kUpper : FunctionId::kLower;
  } else {  // length, char_length
    if (arguments.size() != 1) return arity_error("1");
    if (!arguments[0]->result_type.IsString()) return type_error();
    node->function = FunctionId::kLength;
  }
  node->result_type = node->function == FunctionId::kLength ? Type::Integer() : arguments[0]->result_type;
  node->children = std::move(arguments);
  return node;
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindSubstring(const ParsedExpr& expr, ExpressionContext& context) {
  if (expr.children.size() < 2 || expr.children.size() > 3) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.position,
                   absl::StrCat("function substring expects 2 or 3 arguments, got ", expr.children.size()));
  }
  ExpressionPtr node = MakeNode(ExpressionKind::kFunction, Type::Varchar());
  node->function = FunctionId::kSubstring;
  for (size_t i = 0; i < expr.children.size(); ++i) {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr argument, BindExpression(*expr.children[i], context));
    if (i == 0) {
      if (IsNullType(*argument)) argument = MakeConstant(Value::Null(Type::Varchar()));
      if (!argument->result_type.IsString()) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, expr.children[i]->position,
                       absl::StrCat("substring requires a string, not ", argument->result_type.ToString()));
      }
      node->result_type = Type::Varchar(argument->result_type.length());
    } else {
      const TypeId id = argument->result_type.id();
      if (id != TypeId::kInteger && id != TypeId::kBigInt && id != TypeId::kNull) {
        return ErrorAt(absl::StatusCode::kInvalidArgument, expr.children[i]->position,
                       absl::StrCat("substring positions must be integers, not ", argument->result_type.ToString()));
      }
      TESSERA_ASSIGN_OR_RETURN(argument, Coerce(std::move(argument), Type::Integer(), expr.children[i]->position));
    }
    node->children.push_back(std::move(argument));
  }
  return node;
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindExtract(const ParsedExpr& expr, ExpressionContext& context) {
  std::optional<FunctionId> function = ExtractFieldFunction(expr.name);
  if (!function.has_value()) {
    return ErrorAt(absl::StatusCode::kUnimplemented, expr.position,
                   absl::StrCat("EXTRACT(", expr.name,
                                " FROM ...) is not supported; supported fields: YEAR, MONTH, DAY, QUARTER, DOW, "
                                "DOY, WEEK"));
  }
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr source, BindExpression(*expr.children[0], context));
  return BindExtractField(*function, std::move(source), *expr.children[0]);
}

// ----------------------------------------------------------------------------------------------------
// Conditional and predicate forms

absl::StatusOr<ExpressionPtr> QueryBinder::BindCase(const ParsedExpr& expr, ExpressionContext& context) {
  size_t next = 0;
  ExpressionPtr operand;
  if (expr.case_has_operand) {
    TESSERA_ASSIGN_OR_RETURN(operand, BindExpression(*expr.children[0], context));
    next = 1;
  }
  const size_t end = expr.children.size() - (expr.case_has_else ? 1 : 0);
  std::vector<ExpressionPtr> conditions;
  std::vector<ExpressionPtr> results;
  std::vector<const ParsedExpr*> result_sources;
  for (size_t i = next; i + 1 < end; i += 2) {
    const ParsedExpr& when = *expr.children[i];
    ExpressionPtr condition;
    if (operand != nullptr) {
      ExpressionPtr left = operand->Clone();
      TESSERA_ASSIGN_OR_RETURN(ExpressionPtr right, BindExpression(when, context));
      TESSERA_RETURN_IF_ERROR(CoerceComparison(&left, &right, when, "CASE"));
      condition = FoldConstant(MakeComparison(ComparisonOp::kEqual, std::move(left), std::move(right)));
    } else {
      TESSERA_ASSIGN_OR_RETURN(condition, BindExpression(when, context));
      if (IsNullType(*condition)) condition = MakeConstant(Value::Null(Type::Boolean()));
      if (condition->result_type.id() != TypeId::kBoolean) {
        return ErrorAt(
            absl::StatusCode::kInvalidArgument, when.position,
            absl::StrCat("argument of CASE/WHEN must be type BOOLEAN, not type ", condition->result_type.ToString()));
      }
    }
    conditions.push_back(std::move(condition));
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr result, BindExpression(*expr.children[i + 1], context));
    results.push_back(std::move(result));
    result_sources.push_back(expr.children[i + 1].get());
  }
  if (expr.case_has_else) {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr otherwise, BindExpression(*expr.children.back(), context));
    results.push_back(std::move(otherwise));
    result_sources.push_back(expr.children.back().get());
  }
  TESSERA_RETURN_IF_ERROR(UnifyTypes(&results, result_sources, "CASE"));
  ExpressionPtr node = MakeNode(ExpressionKind::kCase, results[0]->result_type);
  node->has_else = expr.case_has_else;
  for (size_t i = 0; i < conditions.size(); ++i) {
    node->children.push_back(std::move(conditions[i]));
    node->children.push_back(std::move(results[i]));
  }
  if (expr.case_has_else) node->children.push_back(std::move(results.back()));
  return node;
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindCast(const ParsedExpr& expr, ExpressionContext& context) {
  const parser::TypeName& name = *expr.cast_type;
  absl::StatusOr<Type> target = Type::FromName(name.name, name.parameters.data(), name.parameters.size());
  if (!target.ok()) return Rewrap(target.status(), name.position);
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr operand, BindExpression(*expr.children[0], context));
  return Coerce(std::move(operand), *target, expr.position);
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindBetween(const ParsedExpr& expr, ExpressionContext& context) {
  std::vector<ExpressionPtr> operands;
  std::vector<const ParsedExpr*> sources;
  for (const auto& child : expr.children) {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr operand, BindExpression(*child, context));
    operands.push_back(std::move(operand));
    sources.push_back(child.get());
  }
  TESSERA_RETURN_IF_ERROR(UnifyTypes(&operands, sources, "BETWEEN"));
  // x BETWEEN a AND b  ->  x >= a AND x <= b;   NOT BETWEEN  ->  x < a OR x > b
  ExpressionPtr low = FoldConstant(MakeComparison(expr.negated ? ComparisonOp::kLess : ComparisonOp::kGreaterEqual,
                                                  operands[0]->Clone(), std::move(operands[1])));
  ExpressionPtr high = FoldConstant(MakeComparison(expr.negated ? ComparisonOp::kGreater : ComparisonOp::kLessEqual,
                                                   std::move(operands[0]), std::move(operands[2])));
  std::vector<ExpressionPtr> terms;
  terms.push_back(std::move(low));
  terms.push_back(std::move(high));
  return FoldConstant(expr.negated ? CombineDisjuncts(std::move(terms)) : CombineConjuncts(std::move(terms)));
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindInList(const ParsedExpr& expr, ExpressionContext& context) {
  std::vector<ExpressionPtr> operands;
  std::vector<const ParsedExpr*> sources;
  for (const auto& child : expr.children) {
    TESSERA_ASSIGN_OR_RETURN(ExpressionPtr operand, BindExpression(*child, context));
    operands.push_back(std::move(operand));
    sources.push_back(child.get());
  }
  TESSERA_RETURN_IF_ERROR(UnifyTypes(&operands, sources, "IN"));
  bool all_constant = true;
  for (size_t i = 1; i < operands.size(); ++i) all_constant &= operands[i]->kind == ExpressionKind::kConstant;
  if (operands.size() == 2) {  // x IN (a) is x = a
    return FoldConstant(MakeComparison(expr.negated ? ComparisonOp::kNotEqual : ComparisonOp::kEqual,
                                       std::move(operands[0]), std::move(operands[1])));
  }
  if (all_constant) {
    ExpressionPtr node = MakeNode(ExpressionKind::kInList, Type::Boolean());
    node->negated = expr.negated;
    node->children = std::move(operands);
    return node;
  }
  // Non-constant items: a chain of equalities (or, for NOT IN, of inequalities).
  std::vector<ExpressionPtr> terms;
  for (size_t i = 1; i < operands.size(); ++i) {
    terms.push_back(FoldConstant(MakeComparison(expr.negated ? ComparisonOp::kNotEqual : ComparisonOp::kEqual,
                                                operands[0]->Clone(), std::move(operands[i]))));
  }
  return FoldConstant(expr.negated ? CombineConjuncts(std::move(terms)) : CombineDisjuncts(std::move(terms)));
}

absl::StatusOr<ExpressionPtr> QueryBinder::BindLike(const ParsedExpr& expr, ExpressionContext& context) {
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr value, BindExpression(*expr.children[0], context));
  TESSERA_ASSIGN_OR_RETURN(ExpressionPtr pattern, BindExpression(*expr.children[1], context));
  pattern = FoldConstantsDeep(std::move(pattern));
  if (IsNullType(*value)) value = MakeConstant(Value::Null(Type::Varchar()));
  if (!value->result_type.IsString()) {
    return ErrorAt(absl::StatusCode::kInvalidArgument, expr.children[0]->position,
                   absl::StrCat("LIKE requires a string operand, not ", value->result_type.ToString()));
  }
  if (pattern->kind != ExpressionKind::kConstant || !(pattern->result_type.IsString() || IsNullType(*pattern))) {
    return ErrorAt(absl::StatusCode::kUnimplemented, expr.children[1]->position,
                   "the pattern of LIKE must be a constant string");
  }
  if (pattern->constant.is_null()) return MakeConstant(Value::Null(Type::Boolean()));
  pattern = MakeConstant(Value::String(pattern->constant.AsString(), Type::Varchar()));
  ExpressionPtr node = MakeNode(ExpressionKind::kLike, Type::Boolean());
  node->negated = expr.negated;
  node->children.push_back(std::move(value));
  node->children.push_back(std::move(pattern));
  return node;
}

}  // namespace tessera::optimizer
