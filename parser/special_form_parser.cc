// Expression forms with their own syntax: CASE, CAST, EXISTS, EXTRACT, SUBSTRING, POSITION, function calls (COUNT(*),
// COUNT(DISTINCT x), aggregate FILTER (WHERE ...)), DATE/TIMESTAMP/INTERVAL literals, and type names.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "common/status_macros.h"
#include "parser/expr_factory.h"
#include "parser/recursive_descent_parser.h"

namespace tessera::parser {
namespace {

using ExprPtr = std::unique_ptr<ParsedExpr>;

// INTERVAL units, accepted singular or plural, returned singular.
std::string IntervalUnit(const std::string& upper_word) {
  static constexpr std::string_view kUnits[] = {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"};
  for (std::string_view unit : kUnits) {
    if (upper_word == unit ||
        (upper_word.size() == unit.size() + 1 && upper_word.starts_with(unit) && upper_word.back() == 'S')) {
      return std::string(unit);
    }
  }
  return "";
}

}  // namespace

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

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParsePosition() {
  const int start = index_;
  auto call = MakeExpr(ExprKind::kFunctionCall, Current().position);
  Advance();
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  // The operand before IN binds tighter than IN itself (the concatenation level and above).
  TESSERA_ASSIGN_OR_RETURN(ExprPtr substring, ParseBinaryLevel(BinaryLevel::kConcat));
  if (!ConsumeWord("IN")) {
    index_ = start;  // not the special form: position(a, b) as a plain function call
    return ParseFunctionCall();
  }
  TESSERA_ASSIGN_OR_RETURN(ExprPtr text, ParseExpression());
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  call->name = "STRPOS";
  call->children.push_back(std::move(text));
  call->children.push_back(std::move(substring));
  return call;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseFunctionCall() {
  auto call = MakeExpr(ExprKind::kFunctionCall, Current().position);
  call->name = Current().kind == TokenKind::kQuotedIdentifier ? absl::AsciiStrToUpper(Current().text) : Current().upper;
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
    if (ConsumeWord("ORDER")) {  // string_agg(x, ',' ORDER BY y)
      TESSERA_RETURN_IF_ERROR(ExpectWord("BY"));
      TESSERA_RETURN_IF_ERROR(ParseOrderByItems(&call->aggregate_order_by));
    }
  }
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  if (AtWord("WITHIN") && IsWord(PeekToken(1), "GROUP")) {  // percentile_cont(0.5) WITHIN GROUP (ORDER BY x)
    if (!call->aggregate_order_by.empty()) return ErrorExpected("OVER, FILTER or the end of the call");
    Advance();
    Advance();
    TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
    TESSERA_RETURN_IF_ERROR(ExpectWord("ORDER"));
    TESSERA_RETURN_IF_ERROR(ExpectWord("BY"));
    TESSERA_RETURN_IF_ERROR(ParseOrderByItems(&call->aggregate_order_by));
    TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
    call->within_group = true;
  }
  // `OVER` is not reserved: it starts a window only when a window name or '(' follows (`SELECT count(*) over`
  // keeps reading `over` as an alias).
  if (AtWord("OVER") && (IsOperator(PeekToken(1), "(") || IsName(PeekToken(1)))) {
    TESSERA_ASSIGN_OR_RETURN(call->window, ParseOverClause());
    return call;
  }
  if (AtWord("FILTER") && IsOperator(PeekToken(1), "(")) return ParseAggregateFilter(std::move(call));
  return call;
}

absl::StatusOr<ExprPtr> RecursiveDescentParser::ParseAggregateFilter(ExprPtr call) {
  const SourcePosition position = Current().position;
  Advance();  // FILTER
  TESSERA_RETURN_IF_ERROR(ExpectOperator("("));
  TESSERA_RETURN_IF_ERROR(ExpectWord("WHERE"));
  TESSERA_ASSIGN_OR_RETURN(ExprPtr condition, ParseExpression());
  TESSERA_RETURN_IF_ERROR(ExpectOperator(")"));
  if (call->children.empty() || (!call->within_group && call->children.size() > 2)) {
    return ErrorAt(position, "FILTER needs an aggregate function of one argument");
  }
  // f(x) FILTER (WHERE c)  ->  f(CASE WHEN c THEN x END); COUNT(*) counts CASE WHEN c THEN 1 END. The value is
  // the first argument (string_agg(x, sep), quantile_cont(x, f)), or the WITHIN GROUP key.
  ExprPtr& target = call->within_group ? call->aggregate_order_by[0].expr : call->children[0];
  ExprPtr value = std::move(target);
  if (value->kind == ExprKind::kStar) value = MakeLiteral(LiteralKind::kInteger, "1", value->position);
  auto case_expr = MakeExpr(ExprKind::kCase, position);
  case_expr->children.push_back(std::move(condition));
  case_expr->children.push_back(std::move(value));
  target = std::move(case_expr);
  call->aggregate_filter = true;
  return call;
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
