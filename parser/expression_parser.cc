// Scalar expressions, by precedence from loosest to tightest:
//   OR < AND < NOT < comparison, [NOT] LIKE, [NOT] BETWEEN, [NOT] IN, IS [NOT] NULL < || < + - < * / %
//   < unary - + < :: < primary
// Binary levels are left-associative loops; unary operators recurse (with a NestingScope each).

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "parser/expr_factory.h"
#include "parser/recursive_descent_parser.h"

namespace tessera::parser {
namespace {

using ExprPtr = std::unique_ptr<ParsedExpr>;

ExprPtr MakeBinary(std::string op, ExprPtr left, ExprPtr right) {
  auto binary = MakeExpr(ExprKind::kBinary, left->position);
  binary->name = std::move(op);
  binary->children.push_back(std::move(left));
  binary->children.push_back(std::move(right));
  return binary;
}

bool IsComparisonOperator(const Token& token) {
  if (token.kind != TokenKind::kOperator) return false;
  const std::string& op = token.text;
  return op == "=" || op == "<>" || op == "<" || op == "<=" || op == ">" || op == ">=";
}

bool IsNumericLiteral(const ParsedExpr& expr) {
  return expr.kind == ExprKind::kLiteral &&
         (expr.literal_kind == LiteralKind::kInteger || expr.literal_kind == LiteralKind::kDecimal);
}

// INTERVAL units, accepted singular or plural, returned singular.
std::string IntervalUnit(const std::string& upper_word) {
  static constexpr std::string_view kUnits[] = {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"};
  for (std::string_view unit : kUnits) {
    if (upper_word == unit || (upper_word.size() == unit.size() + 1 && upper_word.starts_with(unit) &&
                               upper_word.back() == 'S')) {
      return std::string(unit);
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseExpression() {
  NestingScope scope(nesting_);
  if (!scope.ok()) return TooDeeplyNested();
  return ParseBinaryLevel(BinaryLevel::kOr);
}

absl::StatusOr<std::vector<ExprPtr>> RecursiveDescentParser::ParseExpressionList() {
  std::vector<ExprPtr> expressions;
  do {
    TESSERA_ASSIGN_OR_RETURN(ExprPtr expr, ParseExpression());
    expressions.push_back(std::move(expr));
  } while (ConsumeOperator(","));
  return expressions;
}

std::string RecursiveDescentParser::BinaryOperatorAt(BinaryLevel level) const {
  const Token& token = Current();
  switch (level) {
    case BinaryLevel::kOr:
      return IsWord(token, "OR") ? "OR" : "";
    case BinaryLevel::kAnd:
      return IsWord(token, "AND") ? "AND" : "";
    case BinaryLevel::kConcat:
      return IsOperator(token, "||") ? "||" : "";
    case BinaryLevel::kAdditive:
      return (IsOperator(token, "+") || IsOperator(token, "-")) ? token.text : "";
    case BinaryLevel::kMultiplicative:
      return (IsOperator(token, "*") || IsOperator(token, "/") || IsOperator(token, "%")) ? token.text : "";
  }
  return "";
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseOperandOf(BinaryLevel level) {
  switch (level) {
    case BinaryLevel::kOr:
      return ParseBinaryLevel(BinaryLevel::kAnd);
    case BinaryLevel::kAnd:
      return ParseNot();
    case BinaryLevel::kConcat:
      return ParseBinaryLevel(BinaryLevel::kAdditive);
    case BinaryLevel::kAdditive:
      return ParseBinaryLevel(BinaryLevel::kMultiplicative);
    case BinaryLevel::kMultiplicative:
      return ParseUnary();
  }
  return ParseUnary();
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseBinaryLevel(BinaryLevel level) {
  ChainTracker chain(nesting_);
  chain.BeforeOperand();
  TESSERA_ASSIGN_OR_RETURN(ExprPtr left, ParseOperandOf(level));
  chain.AfterOperand();
  while (true) {
    std::string op = BinaryOperatorAt(level);
    if (op.empty()) break;
    Advance();
    chain.BeforeOperand();
    TESSERA_ASSIGN_OR_RETURN(ExprPtr right, ParseOperandOf(level));
    chain.AfterOperand();
    left = MakeBinary(std::move(op), std::move(left), std::move(right));
    if (!chain.NodeBuilt()) return TooDeeplyNested();
  }
  return left;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseNot() {
  if (!AtWord("NOT")) return ParseComparison();
  NestingScope scope(nesting_);
  if (!scope.ok()) return TooDeeplyNested();
  const SourcePosition position = Current().position;
  Advance();
  TESSERA_ASSIGN_OR_RETURN(ExprPtr operand, ParseNot());
  if (operand->kind == ExprKind::kExists && !operand->negated) {
    operand->negated = true;
    operand->position = position;
    return operand;
  }
  auto negation = MakeExpr(ExprKind::kUnary, position);
  negation->name = "NOT";
  negation->children.push_back(std::move(operand));
  return negation;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseComparison() {
  ChainTracker chain(nesting_);
  chain.BeforeOperand();
  TESSERA_ASSIGN_OR_RETURN(ExprPtr left, ParseBinaryLevel(BinaryLevel::kConcat));
  chain.AfterOperand();
  while (true) {
    const SourcePosition position = left->position;
    chain.BeforeOperand();
    if (IsComparisonOperator(Current())) {
      std::string op = Current().text;
      Advance();
      TESSERA_ASSIGN_OR_RETURN(ExprPtr right, ParseBinaryLevel(BinaryLevel::kConcat));
      left = MakeBinary(std::move(op), std::move(left), std::move(right));
    } else if (AtWord("IS")) {
      Advance();
      auto is_null = MakeExpr(ExprKind::kIsNull, position);
      is_null->negated = ConsumeWord("NOT");
      if (!ConsumeWord("NULL")) return ErrorExpected(is_null->negated ? "NULL" : "NULL or NOT NULL");
      is_null->children.push_back(std::move(left));
      left = std::move(is_null);
    } else {
      const Token& next = PeekToken(1);
      const bool negated =
          AtWord("NOT") && (IsWord(next, "LIKE") || IsWord(next, "BETWEEN") || IsWord(next, "IN") ||
                            IsWord(next, "ILIKE"));
      if (negated) Advance();
      if (AtWord("LIKE")) {
        Advance();
        auto like = MakeExpr(ExprKind::kLike, position);
        like->negated = negated;
        TESSERA_ASSIGN_OR_RETURN(ExprPtr pattern, ParseBinaryLevel(BinaryLevel::kConcat));
        if (AtWord("ESCAPE")) return ErrorAt(Current().position, "LIKE ... ESCAPE is not supported");
        like->children.push_back(std::move(left));
        like->children.push_back(std::move(pattern));
        left = std::move(like);
      } else if (AtWord("ILIKE")) {
        return ErrorAt(Current().position, "ILIKE is not supported; use lower(x) LIKE pattern");
      } else if (AtWord("BETWEEN")) {
        Advance();
        auto between = MakeExpr(ExprKind::kBetween, position);
        between->negated = negated;
        TESSERA_ASSIGN_OR_RETURN(ExprPtr low, ParseBinaryLevel(BinaryLevel::kConcat));
        TESSERA_RETURN_IF_ERROR(ExpectWord("AND"));
        TESSERA_ASSIGN_OR_RETURN(ExprPtr high, ParseBinaryLevel(BinaryLevel::kConcat));
        between->children.push_back(std::move(left));
        between->children.push_back(std::move(low));
        between->children.push_back(std::move(high));
        left = std::move(between);
      } else if (AtWord("IN")) {
        Advance();
        TESSERA_ASSIGN_OR_RETURN(left, ParseInPredicate(std::move(left), negated, position));
      } else {
        break;
      }
    }
    chain.AfterOperand();
    if (!chain.NodeBuilt()) return TooDeeplyNested();
  }
  return left;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseInPredicate(ExprPtr value, bool negated,
                                                                 const SourcePosition& position) {
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  if (AtWord("SELECT") || AtWord("WITH")) {
    auto in_subquery = MakeExpr(ExprKind::kInSubquery, position);
    in_subquery->negated = negated;
    in_subquery->children.push_back(std::move(value));
    TESSERA_ASSIGN_OR_RETURN(in_subquery->subquery, ParseSelectStatement());
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
    return in_subquery;
  }
  auto in_list = MakeExpr(ExprKind::kInList, position);
  in_list->negated = negated;
  in_list->children.push_back(std::move(value));
  TESSERA_ASSIGN_OR_RETURN(std::vector<ExprPtr> items, ParseExpressionList());
  for (ExprPtr& item : items) in_list->children.push_back(std::move(item));
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  return in_list;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseUnary() {
  if (!AtOperator("-") && !AtOperator("+")) return ParsePostfix();
  NestingScope scope(nesting_);
  if (!scope.ok()) return TooDeeplyNested();
  const SourcePosition position = Current().position;
  std::string op = Current().text;
  Advance();
  TESSERA_ASSIGN_OR_RETURN(ExprPtr operand, ParseUnary());
  // Signs are folded into numeric literals so that -5 is one literal (and -9223372036854775808 fits in int64).
  if (IsNumericLiteral(*operand) && !operand->literal_text.starts_with('-')) {
    if (op == "-") operand->literal_text.insert(0, "-");
    operand->position = position;
    return operand;
  }
  auto unary = MakeExpr(ExprKind::kUnary, position);
  unary->name = std::move(op);
  unary->children.push_back(std::move(operand));
  return unary;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParsePostfix() {
  ChainTracker chain(nesting_);
  chain.BeforeOperand();
  TESSERA_ASSIGN_OR_RETURN(ExprPtr expr, ParsePrimary());
  chain.AfterOperand();
  while (ConsumeOperator("::")) {
    auto cast = MakeExpr(ExprKind::kCast, expr->position);
    TESSERA_ASSIGN_OR_RETURN(cast->cast_type, ParseTypeName());
    cast->children.push_back(std::move(expr));
    expr = std::move(cast);
    if (!chain.NodeBuilt()) return TooDeeplyNested();
  }
  return expr;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParsePrimary() {
  const Token& token = Current();
  const Token& next = PeekToken(1);
  switch (token.kind) {
    case TokenKind::kInteger:
    case TokenKind::kDecimal:
    case TokenKind::kString: {
      const LiteralKind kind = token.kind == TokenKind::kInteger   ? LiteralKind::kInteger
                               : token.kind == TokenKind::kDecimal ? LiteralKind::kDecimal
                                                                   : LiteralKind::kString;
      auto literal = MakeLiteral(kind, token.text, token.position);
      Advance();
      return literal;
    }
    case TokenKind::kOperator:
      if (AtOperator("(")) return ParseParenthesized();
      break;
    case TokenKind::kKeyword:
      if (AtWord("NULL") || AtWord("TRUE") || AtWord("FALSE")) {
        auto literal = AtWord("NULL") ? MakeLiteral(LiteralKind::kNull, "NULL", token.position)
                                      : MakeLiteral(LiteralKind::kBoolean, token.upper, token.position);
        Advance();
        return literal;
      }
      if (AtWord("CASE")) return ParseCase();
      if (AtWord("CAST")) return ParseCast();
      if (AtWord("EXISTS")) return ParseExists();
      if ((AtWord("LEFT") || AtWord("RIGHT")) && IsOperator(next, "(")) return ParseFunctionCall();
      break;
    case TokenKind::kIdentifier:
      if (AtWord("DATE") && next.kind == TokenKind::kString) return ParseTypedLiteral(LiteralKind::kDate);
      if (AtWord("TIMESTAMP") && next.kind == TokenKind::kString) {
        return ParseTypedLiteral(LiteralKind::kTimestamp);
      }
      if (AtWord("INTERVAL") && (next.kind == TokenKind::kString || next.kind == TokenKind::kInteger ||
                                 next.kind == TokenKind::kDecimal)) {
        return ParseInterval();
      }
      if (IsOperator(next, "(")) {
        if (AtWord("EXTRACT")) return ParseExtract();
        if (AtWord("SUBSTRING")) return ParseSubstring();
        return ParseFunctionCall();
      }
      return ParseColumnRef();
    case TokenKind::kQuotedIdentifier:
      if (IsOperator(next, "(")) return ParseFunctionCall();
      return ParseColumnRef();
    case TokenKind::kEndOfInput:
      break;
  }
  return ErrorExpected("an expression");
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseParenthesized() {
  const SourcePosition position = Current().position;
  if (IsWord(PeekToken(1), "SELECT") || IsWord(PeekToken(1), "WITH")) {
    Advance();
    auto subquery = MakeExpr(ExprKind::kScalarSubquery, position);
    TESSERA_ASSIGN_OR_RETURN(subquery->subquery, ParseSelectStatement());
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
    return subquery;
  }
  Advance();
  TESSERA_ASSIGN_OR_RETURN(ExprPtr inner, ParseExpression());
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  return inner;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseCase() {
  auto case_expr = MakeExpr(ExprKind::kCase, Current().position);
  Advance();
  if (!AtWord("WHEN")) {
    TESSERA_ASSIGN_OR_RETURN(ExprPtr operand, ParseExpression());
    case_expr->children.push_back(std::move(operand));
    case_expr->case_has_operand = true;
    if (!AtWord("WHEN")) return ErrorExpected("WHEN");
  }
  while (ConsumeWord("WHEN")) {
    TESSERA_ASSIGN_OR_RETURN(ExprPtr condition, ParseExpression());
    TESSERA_RETURN_IF_ERROR(ExpectWord("THEN"));
    TESSERA_ASSIGN_OR_RETURN(ExprPtr result, ParseExpression());
    case_expr->children.push_back(std::move(condition));
    case_expr->children.push_back(std::move(result));
  }
  if (ConsumeWord("ELSE")) {
    TESSERA_ASSIGN_OR_RETURN(ExprPtr otherwise, ParseExpression());
    case_expr->children.push_back(std::move(otherwise));
    case_expr->case_has_else = true;
  }
  if (!ConsumeWord("END")) return ErrorExpected(case_expr->case_has_else ? "END" : "WHEN, ELSE or END");
  return case_expr;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseCast() {
  auto cast = MakeExpr(ExprKind::kCast, Current().position);
  Advance();
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  TESSERA_ASSIGN_OR_RETURN(ExprPtr operand, ParseExpression());
  TESSERA_RETURN_IF_ERROR(ExpectWord("AS"));
  TESSERA_ASSIGN_OR_RETURN(cast->cast_type, ParseTypeName());
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  cast->children.push_back(std::move(operand));
  return cast;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseExists() {
  auto exists = MakeExpr(ExprKind::kExists, Current().position);
  Advance();
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  if (!AtQueryStart()) return ErrorExpected("SELECT");
  TESSERA_ASSIGN_OR_RETURN(exists->subquery, ParseSelectStatement());
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  return exists;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseExtract() {
  auto extract = MakeExpr(ExprKind::kExtract, Current().position);
  Advance();
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  const Token& field = Current();
  if (field.kind == TokenKind::kIdentifier) {
    extract->name = field.upper;
  } else if (field.kind == TokenKind::kString || field.kind == TokenKind::kQuotedIdentifier) {
    extract->name = absl::AsciiStrToUpper(field.text);
  } else {
    return ErrorExpected("a date/time field such as YEAR");
  }
  Advance();
  TESSERA_RETURN_IF_ERROR(ExpectWord("FROM"));
  TESSERA_ASSIGN_OR_RETURN(ExprPtr source, ParseExpression());
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  extract->children.push_back(std::move(source));
  return extract;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseSubstring() {
  auto substring = MakeExpr(ExprKind::kSubstring, Current().position);
  Advance();
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  TESSERA_ASSIGN_OR_RETURN(ExprPtr text, ParseExpression());
  substring->children.push_back(std::move(text));
  // SUBSTRING(s FROM a [FOR b]) or SUBSTRING(s, a [, b]).
  const bool standard_form = AtWord("FROM");
  if (!standard_form && !AtOperator(",")) return ErrorExpected("FROM or ','");
  Advance();
  TESSERA_ASSIGN_OR_RETURN(ExprPtr start, ParseExpression());
  substring->children.push_back(std::move(start));
  if (standard_form ? ConsumeWord("FOR") : ConsumeOperator(",")) {
    TESSERA_ASSIGN_OR_RETURN(ExprPtr length, ParseExpression());
    substring->children.push_back(std::move(length));
  }
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  return substring;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseFunctionCall() {
  auto call = MakeExpr(ExprKind::kFunctionCall, Current().position);
  call->name = Current().kind == TokenKind::kQuotedIdentifier ? absl::AsciiStrToUpper(Current().text)
                                                              : Current().upper;
  Advance();
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  if (AtOperator("*") && call->name == "COUNT") {
    call->children.push_back(MakeExpr(ExprKind::kStar, Current().position));
    Advance();
  } else {
    if (ConsumeWord("DISTINCT")) {
      call->distinct = true;
    } else {
      ConsumeWord("ALL");
    }
    if (call->distinct || !AtOperator(")")) {
      TESSERA_ASSIGN_OR_RETURN(call->children, ParseExpressionList());
    }
  }
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  if (AtWord("OVER")) return ErrorAt(Current().position, "window functions (OVER) are not supported");
  if (AtWord("FILTER") && IsOperator(PeekToken(1), "(")) {
    return ErrorAt(Current().position, "aggregate FILTER clauses are not supported");
  }
  return call;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseColumnRef() {
  auto column = MakeExpr(ExprKind::kColumnRef, Current().position);
  TESSERA_ASSIGN_OR_RETURN(std::string first, ExpectName("a column name"));
  if (!ConsumeOperator(".")) {
    column->name = std::move(first);
    return column;
  }
  const Token& second = Current();
  if (second.kind == TokenKind::kKeyword) {  // t.order is unambiguous after the dot
    column->name = absl::AsciiStrToLower(second.text);
    Advance();
  } else {
    TESSERA_ASSIGN_OR_RETURN(column->name, ExpectName("a column name"));
  }
  column->qualifier = std::move(first);
  if (AtOperator(".")) {
    return ErrorAt(Current().position, "column references with more than two name parts are not supported");
  }
  return column;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseTypedLiteral(LiteralKind kind) {
  const SourcePosition position = Current().position;
  Advance();
  auto literal = MakeLiteral(kind, Current().text, position);
  Advance();
  return literal;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseInterval() {
  const SourcePosition position = Current().position;
  Advance();
  auto literal = MakeLiteral(LiteralKind::kInterval, Current().text, position);
  Advance();
  if (Current().kind == TokenKind::kIdentifier) {
    literal->interval_unit = IntervalUnit(Current().upper);
    if (!literal->interval_unit.empty()) Advance();
  }
  return literal;
}

absl::StatusOr<TypeName> RecursiveDescentParser::ParseTypeName() {
  TypeName type;
  type.position = Current().position;
  if (Current().kind != TokenKind::kIdentifier) return ErrorExpected("a type name");
  type.name = Current().upper;
  Advance();
  if (type.name == "DOUBLE") {
    ConsumeWord("PRECISION");
  } else if (type.name == "CHARACTER" && ConsumeWord("VARYING")) {
    type.name = "VARCHAR";
  }
  if (ConsumeOperator("(")) {
    do {
      if (Current().kind != TokenKind::kInteger) return ErrorExpected("an integer type parameter");
      int64_t parameter = 0;
      if (!absl::SimpleAtoi(Current().text, &parameter)) {
        return ErrorAt(Current().position, "type parameter out of range");
      }
      type.parameters.push_back(parameter);
      Advance();
    } while (ConsumeOperator(","));
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  }
  return type;
}

}  // namespace tessera::parser
