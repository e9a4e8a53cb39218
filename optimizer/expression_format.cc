#include "optimizer/expression_format.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tessera::optimizer {
namespace {

std::string FunctionName(FunctionId function) {
  switch (function) {
    case FunctionId::kExtractYear:
      return "extract_year";
    case FunctionId::kExtractMonth:
      return "extract_month";
    case FunctionId::kExtractDay:
      return "extract_day";
    case FunctionId::kSubstring:
      return "substring";
    case FunctionId::kCoalesce:
      return "coalesce";
    case FunctionId::kNullIf:
      return "nullif";
    case FunctionId::kAbs:
      return "abs";
    case FunctionId::kUpper:
      return "upper";
    case FunctionId::kLower:
      return "lower";
    case FunctionId::kLength:
      return "length";
    case FunctionId::kExtractQuarter:
      return "extract_quarter";
    case FunctionId::kExtractDayOfWeek:
      return "extract_dow";
    case FunctionId::kExtractDayOfYear:
      return "extract_doy";
    case FunctionId::kExtractWeek:
      return "extract_week";
    default:
      return FunctionSqlName(function);
  }
}

std::string QuoteString(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out.push_back('\'');
    out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

std::string Format(const BoundExpression& e, const std::vector<std::string>& names);

std::string JoinChildren(const BoundExpression& e, const std::vector<std::string>& names, size_t begin,
                         const char* separator) {
  std::vector<std::string> parts;
  for (size_t i = begin; i < e.children.size(); ++i) parts.push_back(Format(*e.children[i], names));
  return absl::StrJoin(parts, separator);
}

std::string Format(const BoundExpression& e, const std::vector<std::string>& names) {
  switch (e.kind) {
    case ExpressionKind::kColumn:
      if (e.column_index >= 0 && e.column_index < static_cast<int>(names.size())) return names[e.column_index];
      return absl::StrCat("#", e.column_index);
    case ExpressionKind::kConstant:
      return FormatConstant(e.constant);
    case ExpressionKind::kCast:
      return absl::StrCat("CAST(", Format(*e.children[0], names), " AS ", e.result_type.ToString(), ")");
    case ExpressionKind::kArithmetic:
      if (e.arithmetic == ArithmeticOp::kNegate) return absl::StrCat("(- ", Format(*e.children[0], names), ")");
      return absl::StrCat("(", Format(*e.children[0], names), " ", ArithmeticSymbol(e.arithmetic), " ",
                          Format(*e.children[1], names), ")");
    case ExpressionKind::kComparison:
      return absl::StrCat("(", Format(*e.children[0], names), " ", ComparisonSymbol(e.comparison), " ",
                          Format(*e.children[1], names), ")");
    case ExpressionKind::kAnd:
      return absl::StrCat("(", JoinChildren(e, names, 0, " AND "), ")");
    case ExpressionKind::kOr:
      return absl::StrCat("(", JoinChildren(e, names, 0, " OR "), ")");
    case ExpressionKind::kNot:
      return absl::StrCat("(NOT ", Format(*e.children[0], names), ")");
    case ExpressionKind::kIsNull:
      return absl::StrCat("(", Format(*e.children[0], names), e.negated ? " IS NOT NULL)" : " IS NULL)");
    case ExpressionKind::kLike:
      return absl::StrCat("(", Format(*e.children[0], names), e.negated ? " NOT LIKE " : " LIKE ",
                          Format(*e.children[1], names), ")");
    case ExpressionKind::kInList:
      return absl::StrCat("(", Format(*e.children[0], names), e.negated ? " NOT IN (" : " IN (",
                          JoinChildren(e, names, 1, ", "), "))");
    case ExpressionKind::kCase: {
      std::string out = "CASE";
      const size_t pairs = (e.children.size() - (e.has_else ? 1 : 0)) / 2;
      for (size_t i = 0; i < pairs; ++i) {
        absl::StrAppend(&out, " WHEN ", Format(*e.children[2 * i], names), " THEN ",
                        Format(*e.children[2 * i + 1], names));
      }
      if (e.has_else) absl::StrAppend(&out, " ELSE ", Format(*e.children.back(), names));
      return out + " END";
    }
    case ExpressionKind::kFunction:
      if (e.function == FunctionId::kConcatStrict) return absl::StrCat("(", JoinChildren(e, names, 0, " || "), ")");
      return absl::StrCat(FunctionName(e.function), "(", JoinChildren(e, names, 0, ", "), ")");
  }
  return "?";
}

}  // namespace

std::string FormatConstant(const Value& value) {
  if (value.is_null()) return "NULL";
  switch (value.type().id()) {
    case TypeId::kChar:
    case TypeId::kVarchar:
      return QuoteString(value.AsString());
    case TypeId::kDate:
      return absl::StrCat("DATE '", value.ToString(), "'");
    case TypeId::kTimestamp:
      return absl::StrCat("TIMESTAMP '", value.ToString(), "'");
    case TypeId::kInterval:
      return absl::StrCat("INTERVAL '", value.ToString(), "'");
    case TypeId::kBoolean:
      return value.AsBool() ? "TRUE" : "FALSE";
    default:
      return value.ToString();
  }
}

std::vector<std::string> DisplayNames(const std::vector<OutputColumn>& input) {
  absl::flat_hash_map<std::string, int> counts;
  for (const OutputColumn& column : input) counts[column.name]++;
  std::vector<std::string> names;
  names.reserve(input.size());
  for (const OutputColumn& column : input) {
    if (counts[column.name] > 1 && !column.relation.empty()) {
      names.push_back(absl::StrCat(column.relation, ".", column.name));
    } else {
      names.push_back(column.name);
    }
  }
  return names;
}

std::string FormatExpression(const BoundExpression& expression, const std::vector<std::string>& column_names) {
  return Format(expression, column_names);
}

}  // namespace tessera::optimizer
