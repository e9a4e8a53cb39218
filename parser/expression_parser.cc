// Scalar expressions, by precedence from loosest to tightest:
//   OR < AND < NOT < comparison, [NOT] LIKE, [NOT] BETWEEN, [NOT] IN, IS [NOT] NULL < || < + - < * / %
//   < unary - + < :: < primary
// Binary levels are left-associative loops; unary operators recurse (with a NestingScope each). The special
// forms (CASE, CAST, EXTRACT, SUBSTRING, function calls, typed literals) and type names are in
// special_form_parser.cc.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
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
      const bool negated = AtWord("NOT") && (IsWord(next, "LIKE") || IsWord(next, "BETWEEN") || IsWord(next, "IN") ||
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
  // Signs are folded into numeric literals so that -5 is one literal (and -9223372036854775808 fits in
  // int64).
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
      if (AtWord("INTERVAL") &&
          (next.kind == TokenKind::kString || next.kind == TokenKind::kInteger || next.kind == TokenKind::kDecimal)) {
        return ParseInterval();
      }
      if (IsOperator(next, "(")) {
        if (AtWord("EXTRACT")) return ParseExtract();
        if (AtWord("SUBSTRING")) return ParseSubstring();
        if (AtWord("POSITION")) return ParsePosition();
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

}  // namespace tessera::parser
