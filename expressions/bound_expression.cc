#include "expressions/bound_expression.h"

#include <utility>

#include "glog/logging.h"

namespace tessera {

const char* ArithmeticSymbol(ArithmeticOp op) {
  switch (op) {
    case ArithmeticOp::kAdd:
      return "+";
    case ArithmeticOp::kSubtract:
      return "-";
    case ArithmeticOp::kMultiply:
      return "*";
    case ArithmeticOp::kDivide:
      return "/";
    case ArithmeticOp::kModulo:
      return "%";
    case ArithmeticOp::kNegate:
      return "-";
  }
  return "?";
}

const char* ComparisonSymbol(ComparisonOp op) {
  switch (op) {
    case ComparisonOp::kEqual:
      return "=";
    case ComparisonOp::kNotEqual:
      return "<>";
    case ComparisonOp::kLess:
      return "<";
    case ComparisonOp::kLessEqual:
      return "<=";
    case ComparisonOp::kGreater:
      return ">";
    case ComparisonOp::kGreaterEqual:
      return ">=";
  }
  return "?";
}

ComparisonOp FlipComparison(ComparisonOp op) {
  switch (op) {
    case ComparisonOp::kLess:
      return ComparisonOp::kGreater;
    case ComparisonOp::kLessEqual:
      return ComparisonOp::kGreaterEqual;
    case ComparisonOp::kGreater:
      return ComparisonOp::kLess;
    case ComparisonOp::kGreaterEqual:
      return ComparisonOp::kLessEqual;
    default:
      return op;
  }
}

namespace {

// SQL literal text: strings quoted (with '' escaping), dates/timestamps/intervals with their keyword.
std::string LiteralText(const Value& value) {
  if (value.is_null()) return "NULL";
  const std::string text = value.ToString();
  switch (value.type().id()) {
    case TypeId::kChar:
    case TypeId::kVarchar: {
      std::string quoted = "'";
      for (char c : text) {
        if (c == '\'') quoted.push_back('\'');
        quoted.push_back(c);
      }
      quoted.push_back('\'');
      return quoted;
    }
    case TypeId::kDate:
      return "DATE '" + text + "'";
    case TypeId::kTimestamp:
      return "TIMESTAMP '" + text + "'";
    case TypeId::kInterval:
      return "INTERVAL '" + text + "'";
    default:
      return text;
  }
}

void AppendExpression(const BoundExpression& e, const std::vector<std::string>* names, std::string* out);

void AppendChildren(const BoundExpression& e, size_t first, const std::vector<std::string>* names, std::string* out) {
  for (size_t i = first; i < e.children.size(); ++i) {
    if (i > first) *out += ", ";
    AppendExpression(*e.children[i], names, out);
  }
}

void AppendExpression(const BoundExpression& e, const std::vector<std::string>* names, std::string* out) {
  switch (e.kind) {
    case ExpressionKind::kColumn:
      if (names != nullptr && e.column_index >= 0 && e.column_index < static_cast<int>(names->size())) {
        *out += (*names)[e.column_index];
      } else {
        *out += "#" + std::to_string(e.column_index);
      }
      return;
    case ExpressionKind::kConstant:
      *out += LiteralText(e.constant);
      return;
    case ExpressionKind::kCast:
      *out += "CAST(";
      AppendExpression(*e.children[0], names, out);
      *out += " AS " + e.result_type.ToString() + ")";
      return;
    case ExpressionKind::kArithmetic:
      *out += "(";
      if (e.arithmetic == ArithmeticOp::kNegate) {
        *out += "- ";
        AppendExpression(*e.children[0], names, out);
      } else {
        AppendExpression(*e.children[0], names, out);
        *out += std::string(" ") + ArithmeticSymbol(e.arithmetic) + " ";
        AppendExpression(*e.children[1], names, out);
      }
      *out += ")";
      return;
    case ExpressionKind::kComparison:
      *out += "(";
      AppendExpression(*e.children[0], names, out);
      *out += std::string(" ") + ComparisonSymbol(e.comparison) + " ";
      AppendExpression(*e.children[1], names, out);
      *out += ")";
      return;
    case ExpressionKind::kAnd:
    case ExpressionKind::kOr:
      *out += "(";
      for (size_t i = 0; i < e.children.size(); ++i) {
        if (i > 0) *out += e.kind == ExpressionKind::kAnd ? " AND " : " OR ";
        AppendExpression(*e.children[i], names, out);
      }
      *out += ")";
      return;
    case ExpressionKind::kNot:
      *out += "(NOT ";
      AppendExpression(*e.children[0], names, out);
      *out += ")";
      return;
    case ExpressionKind::kIsNull:
      *out += "(";
      AppendExpression(*e.children[0], names, out);
      *out += e.negated ? " IS NOT NULL)" : " IS NULL)";
      return;
    case ExpressionKind::kLike:
      *out += "(";
      AppendExpression(*e.children[0], names, out);
      *out += e.negated ? " NOT LIKE " : " LIKE ";
      AppendExpression(*e.children[1], names, out);
      *out += ")";
      return;
    case ExpressionKind::kInList:
      *out += "(";
      AppendExpression(*e.children[0], names, out);
      *out += e.negated ? " NOT IN (" : " IN (";
      AppendChildren(e, 1, names, out);
      *out += "))";
      return;
    case ExpressionKind::kCase: {
      *out += "CASE";
      const size_t pairs_end = e.has_else ? e.children.size() - 1 : e.children.size();
      for (size_t i = 0; i + 2 <= pairs_end; i += 2) {
        *out += " WHEN ";
        AppendExpression(*e.children[i], names, out);
        *out += " THEN ";
        AppendExpression(*e.children[i + 1], names, out);
      }
      if (e.has_else) {
        *out += " ELSE ";
        AppendExpression(*e.children.back(), names, out);
      }
      *out += " END";
      return;
    }
    case ExpressionKind::kFunction:
      switch (e.function) {
        case FunctionId::kExtractYear:
        case FunctionId::kExtractMonth:
        case FunctionId::kExtractDay:
        case FunctionId::kExtractQuarter:
        case FunctionId::kExtractDayOfWeek:
        case FunctionId::kExtractDayOfYear:
        case FunctionId::kExtractWeek:
          *out += std::string("EXTRACT(") + FunctionSqlName(e.function) + " FROM ";
          AppendChildren(e, 0, names, out);
          *out += ")";
          return;
        case FunctionId::kConcatStrict:
          *out += "(";
          for (size_t i = 0; i < e.children.size(); ++i) {
            if (i > 0) *out += " || ";
            AppendExpression(*e.children[i], names, out);
          }
          *out += ")";
          return;
        default:
          *out += std::string(FunctionSqlName(e.function)) + "(";
          AppendChildren(e, 0, names, out);
          *out += ")";
          return;
      }
  }
}

std::unique_ptr<BoundExpression> MakeNode(ExpressionKind kind, Type result_type) {
  auto node = std::make_unique<BoundExpression>();
  node->kind = kind;
  node->result_type = result_type;
  return node;
}

}  // namespace

std::unique_ptr<BoundExpression> BoundExpression::Clone() const {
  auto copy = std::make_unique<BoundExpression>();
  copy->kind = kind;
  copy->result_type = result_type;
  copy->column_index = column_index;
  copy->constant = constant;
  copy->arithmetic = arithmetic;
  copy->comparison = comparison;
  copy->function = function;
  copy->negated = negated;
  copy->has_else = has_else;
  copy->children.reserve(children.size());
  for (const auto& child : children) copy->children.push_back(child->Clone());
  return copy;
}

std::string BoundExpression::ToString(const std::vector<std::string>* column_names) const {
  std::string out;
  AppendExpression(*this, column_names, &out);
  return out;
}

std::unique_ptr<BoundExpression> MakeColumn(int index, Type type) {
  auto node = MakeNode(ExpressionKind::kColumn, type);
  node->column_index = index;
  return node;
}

std::unique_ptr<BoundExpression> MakeConstant(Value value) {
  auto node = MakeNode(ExpressionKind::kConstant, value.type());
  node->constant = std::move(value);
  return node;
}

std::unique_ptr<BoundExpression> MakeCast(std::unique_ptr<BoundExpression> input, Type target) {
  auto node = MakeNode(ExpressionKind::kCast, target);
  node->children.push_back(std::move(input));
  return node;
}

std::unique_ptr<BoundExpression> MakeArithmetic(ArithmeticOp op, std::unique_ptr<BoundExpression> left,
                                                std::unique_ptr<BoundExpression> right, Type result_type) {
  auto node = MakeNode(ExpressionKind::kArithmetic, result_type);
  node->arithmetic = op;
  node->children.push_back(std::move(left));
  if (op != ArithmeticOp::kNegate) {
    DCHECK(right != nullptr);
    node->children.push_back(std::move(right));
  }
  return node;
}

std::unique_ptr<BoundExpression> MakeComparison(ComparisonOp op, std::unique_ptr<BoundExpression> left,
                                                std::unique_ptr<BoundExpression> right) {
  auto node = MakeNode(ExpressionKind::kComparison, Type::Boolean());
  node->comparison = op;
  node->children.push_back(std::move(left));
  node->children.push_back(std::move(right));
  return node;
}

std::unique_ptr<BoundExpression> MakeConjunction(ExpressionKind and_or,
                                                 std::vector<std::unique_ptr<BoundExpression>> terms) {
  DCHECK(and_or == ExpressionKind::kAnd || and_or == ExpressionKind::kOr);
  if (terms.empty()) return MakeConstant(Value::Boolean(and_or == ExpressionKind::kAnd));
  if (terms.size() == 1) return std::move(terms[0]);
  auto node = MakeNode(and_or, Type::Boolean());
  node->children = std::move(terms);
  return node;
}

std::unique_ptr<BoundExpression> MakeNot(std::unique_ptr<BoundExpression> input) {
  auto node = MakeNode(ExpressionKind::kNot, Type::Boolean());
  node->children.push_back(std::move(input));
  return node;
}

std::unique_ptr<BoundExpression> MakeIsNull(std::unique_ptr<BoundExpression> input, bool negated) {
  auto node = MakeNode(ExpressionKind::kIsNull, Type::Boolean());
  node->negated = negated;
  node->children.push_back(std::move(input));
  return node;
}

std::unique_ptr<BoundExpression> MakeLike(std::unique_ptr<BoundExpression> input, Value pattern, bool negated) {
  auto node = MakeNode(ExpressionKind::kLike, Type::Boolean());
  node->negated = negated;
  node->children.push_back(std::move(input));
  node->children.push_back(MakeConstant(std::move(pattern)));
  return node;
}

std::unique_ptr<BoundExpression> MakeInList(std::unique_ptr<BoundExpression> input, std::vector<Value> list,
                                            bool negated) {
  auto node = MakeNode(ExpressionKind::kInList, Type::Boolean());
  node->negated = negated;
  node->children.push_back(std::move(input));
  for (Value& value : list) node->children.push_back(MakeConstant(std::move(value)));
  return node;
}

std::unique_ptr<BoundExpression> MakeCase(std::vector<std::unique_ptr<BoundExpression>> when_then,
                                          std::unique_ptr<BoundExpression> otherwise, Type result_type) {
  DCHECK(!when_then.empty() && when_then.size() % 2 == 0);
  auto node = MakeNode(ExpressionKind::kCase, result_type);
  node->children = std::move(when_then);
  if (otherwise != nullptr) {
    node->has_else = true;
    node->children.push_back(std::move(otherwise));
  }
  return node;
}

std::unique_ptr<BoundExpression> MakeFunction(FunctionId function,
                                              std::vector<std::unique_ptr<BoundExpression>> arguments,
                                              Type result_type) {
  auto node = MakeNode(ExpressionKind::kFunction, result_type);
  node->function = function;
  node->children = std::move(arguments);
  return node;
}

bool IsScalarFunction(FunctionId function) {
  return static_cast<int>(function) >= static_cast<int>(FunctionId::kConcat) &&
         static_cast<int>(function) <= static_cast<int>(FunctionId::kDateTrunc);
}

const char* FunctionSqlName(FunctionId function) {
  switch (function) {
    case FunctionId::kExtractYear:
      return "YEAR";
    case FunctionId::kExtractMonth:
      return "MONTH";
    case FunctionId::kExtractDay:
      return "DAY";
    case FunctionId::kExtractQuarter:
      return "QUARTER";
    case FunctionId::kExtractDayOfWeek:
      return "DOW";
    case FunctionId::kExtractDayOfYear:
      return "DOY";
    case FunctionId::kExtractWeek:
      return "WEEK";
    case FunctionId::kSubstring:
      return "SUBSTRING";
    case FunctionId::kCoalesce:
      return "COALESCE";
    case FunctionId::kNullIf:
      return "NULLIF";
    case FunctionId::kAbs:
      return "ABS";
    case FunctionId::kUpper:
      return "UPPER";
    case FunctionId::kLower:
      return "LOWER";
    case FunctionId::kLength:
      return "LENGTH";
    case FunctionId::kConcat:
      return "concat";
    case FunctionId::kConcatStrict:
      return "||";
    case FunctionId::kRound:
      return "round";
    case FunctionId::kCeil:
      return "ceil";
    case FunctionId::kFloor:
      return "floor";
    case FunctionId::kSqrt:
      return "sqrt";
    case FunctionId::kExp:
      return "exp";
    case FunctionId::kLn:
      return "ln";
    case FunctionId::kLog10:
      return "log10";
    case FunctionId::kPower:
      return "power";
    case FunctionId::kGreatest:
      return "greatest";
    case FunctionId::kLeast:
      return "least";
    case FunctionId::kTrim:
      return "trim";
    case FunctionId::kLtrim:
      return "ltrim";
    case FunctionId::kRtrim:
      return "rtrim";
    case FunctionId::kLpad:
      return "lpad";
    case FunctionId::kRpad:
      return "rpad";
    case FunctionId::kReplace:
      return "replace";
    case FunctionId::kStrpos:
      return "strpos";
    case FunctionId::kSplitPart:
      return "split_part";
    case FunctionId::kStartsWith:
      return "starts_with";
    case FunctionId::kDateTrunc:
      return "date_trunc";
  }
  return "?";
}

}  // namespace tessera
