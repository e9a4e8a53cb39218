// ToString for expressions and queries. The output re-parses to the same tree, which the parser tests and the
// fuzzer check; recursion follows the tree, whose height the parser bounds (parser/nesting_budget.h).

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "parser/ast.h"
#include "parser/keywords.h"

namespace tessera::parser {
namespace {

// Binding strength, loosest first; mirrors parser/expression_parser.cc.
enum Precedence {
  kOrPrecedence = 1,
  kAndPrecedence,
  kNotPrecedence,
  kComparisonPrecedence,  // = <> < <= > >=, LIKE, BETWEEN, IN, IS NULL
  kConcatPrecedence,
  kAdditivePrecedence,
  kMultiplicativePrecedence,
  kUnaryPrecedence,
  kPrimaryPrecedence,
};

bool IsPlainIdentifierByte(char c, bool first) {
  const auto byte = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || c == '_' || byte >= 0x80 || (!first && ((c >= '0' && c <= '9') || c == '$'));
}

std::string QuoteIdentifierIfNeeded(const std::string& name) {
  bool plain = !name.empty() && !IsReservedKeyword(absl::AsciiStrToUpper(name));
  for (size_t i = 0; plain && i < name.size(); ++i) plain = IsPlainIdentifierByte(name[i], i == 0);
  if (plain) return name;
  return absl::StrCat("\"", absl::StrReplaceAll(name, {{"\"", "\"\""}}), "\"");
}

std::string QuoteString(const std::string& text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "''"}}), "'");
}

std::string RenderType(const TypeName& type) {
  if (type.parameters.empty()) return type.name;
  return absl::StrCat(type.name, "(", absl::StrJoin(type.parameters, ", "), ")");
}

int PrecedenceOf(const ParsedExpr& expr) {
  switch (expr.kind) {
    case ExprKind::kBinary:
      if (expr.name == "OR") return kOrPrecedence;
      if (expr.name == "AND") return kAndPrecedence;
      if (expr.name == "||") return kConcatPrecedence;
      if (expr.name == "+" || expr.name == "-") return kAdditivePrecedence;
      if (expr.name == "*" || expr.name == "/" || expr.name == "%") return kMultiplicativePrecedence;
      return kComparisonPrecedence;
    case ExprKind::kUnary:
      return expr.name == "NOT" ? kNotPrecedence : kUnaryPrecedence;
    case ExprKind::kLiteral:
      return expr.literal_text.starts_with('-') ? kUnaryPrecedence : kPrimaryPrecedence;
    case ExprKind::kBetween:
    case ExprKind::kInList:
    case ExprKind::kInSubquery:
    case ExprKind::kLike:
    case ExprKind::kIsNull:
      return kComparisonPrecedence;
    case ExprKind::kExists:
      return expr.negated ? kNotPrecedence : kPrimaryPrecedence;
    default:
      return kPrimaryPrecedence;
  }
}

class SqlRenderer {
 public:
  std::string Expr(const ParsedExpr& expr) {
    switch (expr.kind) {
      case ExprKind::kLiteral:
        return Literal(expr);
      case ExprKind::kColumnRef:
        if (expr.qualifier.empty()) return QuoteIdentifierIfNeeded(expr.name);
        return absl::StrCat(QuoteIdentifierIfNeeded(expr.qualifier), ".", QuoteIdentifierIfNeeded(expr.name));
      case ExprKind::kStar:
        return expr.qualifier.empty() ? "*" : absl::StrCat(QuoteIdentifierIfNeeded(expr.qualifier), ".*");
      case ExprKind::kUnary:
        return Unary(expr);
      case ExprKind::kBinary: {
        const int precedence = PrecedenceOf(expr);
        return absl::StrCat(Operand(expr, 0, precedence), " ", expr.name, " ", Operand(expr, 1, precedence + 1));
      }
      case ExprKind::kFunctionCall:
        return FunctionCall(expr);
      case ExprKind::kCase:
        return Case(expr);
      case ExprKind::kCast:
        return absl::StrCat("CAST(", Child(expr, 0), " AS ",
                            expr.cast_type.has_value() ? RenderType(*expr.cast_type) : "?", ")");
      case ExprKind::kBetween:
        return absl::StrCat(Operand(expr, 0, kComparisonPrecedence), Not(expr), " BETWEEN ",
                            Operand(expr, 1, kConcatPrecedence), " AND ", Operand(expr, 2, kConcatPrecedence));
      case ExprKind::kInList: {
        std::vector<std::string> items;
        for (size_t i = 1; i < expr.children.size(); ++i) items.push_back(Child(expr, i));
        return absl::StrCat(Operand(expr, 0, kComparisonPrecedence), Not(expr), " IN (", absl::StrJoin(items, ", "),
                            ")");
      }
      case ExprKind::kInSubquery:
        return absl::StrCat(Operand(expr, 0, kComparisonPrecedence), Not(expr), " IN (", Subquery(expr), ")");
      case ExprKind::kExists:
        return absl::StrCat(expr.negated ? "NOT " : "", "EXISTS (", Subquery(expr), ")");
      case ExprKind::kScalarSubquery:
        return absl::StrCat("(", Subquery(expr), ")");
      case ExprKind::kLike:
        return absl::StrCat(Operand(expr, 0, kComparisonPrecedence), Not(expr), " LIKE ",
                            Operand(expr, 1, kConcatPrecedence));
      case ExprKind::kIsNull:
        return absl::StrCat(Operand(expr, 0, kComparisonPrecedence), " IS ", expr.negated ? "NOT " : "", "NULL");
      case ExprKind::kExtract:
        return absl::StrCat("extract(", absl::AsciiStrToLower(expr.name), " FROM ", Child(expr, 0), ")");
      case ExprKind::kSubstring: {
        std::string text = absl::StrCat("substring(", Child(expr, 0), " FROM ", Child(expr, 1));
        if (expr.children.size() > 2) absl::StrAppend(&text, " FOR ", Child(expr, 2));
        return absl::StrCat(text, ")");
      }
    }
    return "?";
  }

  std::string Query(const SelectStatement& query) {
    std::string text;
    if (!query.ctes.empty()) {
      std::vector<std::string> ctes;
      for (const CommonTableExpr& cte : query.ctes) {
        std::string rendered = QuoteIdentifierIfNeeded(cte.name);
        if (!cte.column_names.empty()) absl::StrAppend(&rendered, NameList(cte.column_names));
        absl::StrAppend(&rendered, " AS (", cte.query ? Query(*cte.query) : "?", ")");
        ctes.push_back(std::move(rendered));
      }
      absl::StrAppend(&text, query.ctes[0].recursive ? "WITH RECURSIVE " : "WITH ", absl::StrJoin(ctes, ", "), " ");
    }
    absl::StrAppend(&text, query.body ? Body(*query.body) : "?");
    if (!query.order_by.empty()) absl::StrAppend(&text, " ORDER BY ", OrderItems(query.order_by));
    if (query.limit) absl::StrAppend(&text, " LIMIT ", Expr(*query.limit));
    if (query.offset) absl::StrAppend(&text, " OFFSET ", Expr(*query.offset));
    return text;
  }

 private:
  std::string Child(const ParsedExpr& expr, size_t index) {
    if (index >= expr.children.size() || expr.children[index] == nullptr) return "?";
    return Expr(*expr.children[index]);
  }

  // A child that needs parentheses when it binds more loosely than `min_precedence`.
  std::string Operand(const ParsedExpr& expr, size_t index, int min_precedence) {
    if (index >= expr.children.size() || expr.children[index] == nullptr) return "?";
    const ParsedExpr& child = *expr.children[index];
    std::string text = Expr(child);
    if (PrecedenceOf(child) < min_precedence) return absl::StrCat("(", text, ")");
    return text;
  }

  static std::string Not(const ParsedExpr& expr) { return expr.negated ? " NOT" : ""; }

  std::string Subquery(const ParsedExpr& expr) { return expr.subquery ? Query(*expr.subquery) : "?"; }

  static std::string Literal(const ParsedExpr& expr) {
    switch (expr.literal_kind) {
      case LiteralKind::kNull:
        return "NULL";
      case LiteralKind::kBoolean:
      case LiteralKind::kInteger:
      case LiteralKind::kDecimal:
        return expr.literal_text;
      case LiteralKind::kString:
        return QuoteString(expr.literal_text);
      case LiteralKind::kDate:
        return absl::StrCat("DATE ", QuoteString(expr.literal_text));
      case LiteralKind::kTimestamp:
        return absl::StrCat("TIMESTAMP ", QuoteString(expr.literal_text));
      case LiteralKind::kInterval:
        if (expr.interval_unit.empty()) return absl::StrCat("INTERVAL ", QuoteString(expr.literal_text));
        return absl::StrCat("INTERVAL ", QuoteString(expr.literal_text), " ", expr.interval_unit);
    }
    return "?";
  }

  std::string Unary(const ParsedExpr& expr) {
    if (expr.name == "NOT") return absl::StrCat("NOT ", Operand(expr, 0, kNotPrecedence));
    std::string operand = Operand(expr, 0, kUnaryPrecedence);
    // "- -x" must not become the comment "--x"; "-5" as an operand must not fold into "--5" either.
    if (operand.starts_with('-') || operand.starts_with('+') ||
        (expr.children[0] && expr.children[0]->kind == ExprKind::kLiteral &&
         (expr.children[0]->literal_kind == LiteralKind::kInteger ||
          expr.children[0]->literal_kind == LiteralKind::kDecimal))) {
      operand = absl::StrCat("(", operand, ")");
    }
    return absl::StrCat(expr.name, operand);
  }

  std::string FunctionCall(const ParsedExpr& expr) {
    std::string name = absl::AsciiStrToLower(expr.name);
    // EXTRACT and SUBSTRING would re-parse as their special syntax; reserved words need quotes, except LEFT
    // and RIGHT, which the parser accepts as function names.
    if (name == "extract" || name == "substring") {
      name = absl::StrCat("\"", name, "\"");
    } else if (name != "left" && name != "right") {
      name = QuoteIdentifierIfNeeded(name);
    }
    std::vector<std::string> arguments;
    for (size_t i = 0; i < expr.children.size(); ++i) arguments.push_back(Child(expr, i));
    std::string order_by;
    if (!expr.aggregate_order_by.empty()) order_by = absl::StrCat("ORDER BY ", OrderItems(expr.aggregate_order_by));
    std::string call = absl::StrCat(name, "(", expr.distinct ? "DISTINCT " : "", absl::StrJoin(arguments, ", "),
                                    !order_by.empty() && !expr.within_group ? " " + order_by : "", ")");
    if (expr.within_group) absl::StrAppend(&call, " WITHIN GROUP (", order_by, ")");
    if (expr.window != nullptr) absl::StrAppend(&call, " OVER ", Window(*expr.window));
    return call;
  }

  std::string OrderItems(const std::vector<OrderByItem>& order_by) {
    std::vector<std::string> items;
    for (const OrderByItem& item : order_by) {
      std::string rendered = item.expr ? Expr(*item.expr) : "?";
      if (!item.ascending) absl::StrAppend(&rendered, " DESC");
      if (item.nulls_first.has_value()) absl::StrAppend(&rendered, *item.nulls_first ? " NULLS FIRST" : " NULLS LAST");
      items.push_back(std::move(rendered));
    }
    return absl::StrJoin(items, ", ");
  }

  std::string FrameBoundText(const FrameBound& bound) {
    switch (bound.kind) {
      case FrameBoundKind::kUnboundedPreceding:
        return "UNBOUNDED PRECEDING";
      case FrameBoundKind::kPreceding:
        return absl::StrCat(bound.offset ? Expr(*bound.offset) : "?", " PRECEDING");
      case FrameBoundKind::kCurrentRow:
        return "CURRENT ROW";
      case FrameBoundKind::kFollowing:
        return absl::StrCat(bound.offset ? Expr(*bound.offset) : "?", " FOLLOWING");
      case FrameBoundKind::kUnboundedFollowing:
        return "UNBOUNDED FOLLOWING";
    }
    return "?";
  }

  // `name` or `(name PARTITION BY ... ORDER BY ... ROWS BETWEEN ... AND ...)`.
  std::string Window(const WindowSpec& spec) {
    if (!spec.parenthesized) return QuoteIdentifierIfNeeded(spec.base_name);
    std::vector<std::string> parts;
    if (!spec.base_name.empty()) parts.push_back(QuoteIdentifierIfNeeded(spec.base_name));
    if (!spec.partition_by.empty()) {
      std::vector<std::string> keys;
      for (const auto& key : spec.partition_by) keys.push_back(key ? Expr(*key) : "?");
      parts.push_back(absl::StrCat("PARTITION BY ", absl::StrJoin(keys, ", ")));
    }
    if (!spec.order_by.empty()) parts.push_back(absl::StrCat("ORDER BY ", OrderItems(spec.order_by)));
    if (spec.frame.has_value()) {
      parts.push_back(absl::StrCat(spec.frame->unit == FrameUnit::kRows ? "ROWS" : "RANGE", " BETWEEN ",
                                   FrameBoundText(spec.frame->start), " AND ", FrameBoundText(spec.frame->end)));
    }
    return absl::StrCat("(", absl::StrJoin(parts, " "), ")");
  }

  std::string Case(const ParsedExpr& expr) {
    std::string text = "CASE";
    size_t index = 0;
    if (expr.case_has_operand) absl::StrAppend(&text, " ", Child(expr, index++));
    const size_t end = expr.children.size() - (expr.case_has_else ? 1 : 0);
    for (; index + 1 < end; index += 2) {
      absl::StrAppend(&text, " WHEN ", Child(expr, index), " THEN ", Child(expr, index + 1));
    }
    if (expr.case_has_else) absl::StrAppend(&text, " ELSE ", Child(expr, expr.children.size() - 1));
    return absl::StrCat(text, " END");
  }

  static std::string NameList(const std::vector<std::string>& names) {
    std::vector<std::string> quoted;
    for (const std::string& name : names) quoted.push_back(QuoteIdentifierIfNeeded(name));
    return absl::StrCat("(", absl::StrJoin(quoted, ", "), ")");
  }

  static int SetOperationPrecedence(const QueryBody& body) {
    if (body.kind != QueryBody::Kind::kSetOperation) return 3;
    return body.set_operation == SetOperation::kIntersect ? 2 : 1;
  }

  std::string Body(const QueryBody& body) {
    switch (body.kind) {
      case QueryBody::Kind::kSelect:
        return body.select ? Core(*body.select) : "?";
      case QueryBody::Kind::kNested:
        return absl::StrCat("(", body.nested ? Query(*body.nested) : "?", ")");
      case QueryBody::Kind::kSetOperation: {
        const int precedence = SetOperationPrecedence(body);
        const char* op = body.set_operation == SetOperation::kUnion    ? "UNION"
                         : body.set_operation == SetOperation::kExcept ? "EXCEPT"
                                                                       : "INTERSECT";
        return absl::StrCat(BodyOperand(body.left.get(), precedence), " ", op, body.all ? " ALL " : " ",
                            BodyOperand(body.right.get(), precedence + 1));
      }
    }
    return "?";
  }

  std::string BodyOperand(const QueryBody* body, int min_precedence) {
    if (body == nullptr) return "?";
    if (SetOperationPrecedence(*body) < min_precedence) return absl::StrCat("(", Body(*body), ")");
    return Body(*body);
  }

  std::string Core(const SelectCore& core) {
    std::vector<std::string> items;
    for (const SelectItem& item : core.items) {
      std::string rendered = item.expr ? Expr(*item.expr) : "?";
      if (!item.alias.empty()) absl::StrAppend(&rendered, " AS ", QuoteIdentifierIfNeeded(item.alias));
      items.push_back(std::move(rendered));
    }
    std::string text = absl::StrCat("SELECT ", core.distinct ? "DISTINCT " : "", absl::StrJoin(items, ", "));
    if (!core.from.empty()) {
      std::vector<std::string> tables;
      for (const auto& table : core.from) tables.push_back(table ? Table(*table) : "?");
      absl::StrAppend(&text, " FROM ", absl::StrJoin(tables, ", "));
    }
    if (core.where) absl::StrAppend(&text, " WHERE ", Expr(*core.where));
    if (!core.group_by.empty() || !core.grouping_sets.empty()) {
      std::vector<std::string> keys;
      for (const auto& key : core.group_by) keys.push_back(key ? Expr(*key) : "?");
      if (core.grouping_sets.empty()) {
        absl::StrAppend(&text, " GROUP BY ", absl::StrJoin(keys, ", "));
      } else {
        std::vector<std::string> sets;
        for (const std::vector<int>& set : core.grouping_sets) {
          std::vector<std::string> members;
          for (int index : set) members.push_back(keys[index]);
          sets.push_back(absl::StrCat("(", absl::StrJoin(members, ", "), ")"));
        }
        absl::StrAppend(&text, " GROUP BY GROUPING SETS (", absl::StrJoin(sets, ", "), ")");
      }
    }
    if (core.having) absl::StrAppend(&text, " HAVING ", Expr(*core.having));
    if (!core.windows.empty()) {
      std::vector<std::string> windows;
      for (const WindowDefinition& window : core.windows) {
        windows.push_back(
            absl::StrCat(QuoteIdentifierIfNeeded(window.name), " AS ", window.spec ? Window(*window.spec) : "?"));
      }
      absl::StrAppend(&text, " WINDOW ", absl::StrJoin(windows, ", "));
    }
    return text;
  }

  std::string Alias(const TableRef& table) {
    if (table.alias.empty()) return "";
    std::string text = absl::StrCat(" AS ", QuoteIdentifierIfNeeded(table.alias));
    if (!table.column_aliases.empty()) absl::StrAppend(&text, NameList(table.column_aliases));
    return text;
  }

  std::string Table(const TableRef& table) {
    if (table.lateral) return absl::StrCat("LATERAL ", TableItem(table));
    return TableItem(table);
  }

  std::string TableItem(const TableRef& table) {
    switch (table.kind) {
      case TableRefKind::kBaseTable:
        return absl::StrCat(QuoteIdentifierIfNeeded(table.name), Alias(table));
      case TableRefKind::kSubquery:
        return absl::StrCat("(", table.subquery ? Query(*table.subquery) : "?", ")", Alias(table));
      case TableRefKind::kFunction: {
        std::vector<std::string> arguments;
        for (const auto& argument : table.arguments) arguments.push_back(Expr(*argument));
        return absl::StrCat(QuoteIdentifierIfNeeded(table.name), "(", absl::StrJoin(arguments, ", "), ")",
                            Alias(table));
      }
      case TableRefKind::kJoin: {
        std::string text = Join(table);
        if (!table.alias.empty()) text = absl::StrCat("(", text, ")", Alias(table));
        return text;
      }
    }
    return "?";
  }

  std::string Join(const TableRef& join) {
    const char* type = "JOIN";
    switch (join.join_type) {
      case JoinType::kInner:
        type = "JOIN";
        break;
      case JoinType::kLeft:
        type = "LEFT JOIN";
        break;
      case JoinType::kRight:
        type = "RIGHT JOIN";
        break;
      case JoinType::kFull:
        type = "FULL JOIN";
        break;
      case JoinType::kCross:
        type = "CROSS JOIN";
        break;
    }
    std::string left = join.left ? Table(*join.left) : "?";
    std::string right = join.right ? Table(*join.right) : "?";
    if (join.right && join.right->kind == TableRefKind::kJoin && join.right->alias.empty()) {
      right = absl::StrCat("(", right, ")");
    }
    std::string text = absl::StrCat(left, " ", join.natural ? "NATURAL " : "", type, " ", right);
    if (join.join_condition) absl::StrAppend(&text, " ON ", Expr(*join.join_condition));
    if (!join.using_columns.empty()) absl::StrAppend(&text, " USING ", NameList(join.using_columns));
    return text;
  }
};

}  // namespace

std::string ToString(const ParsedExpr& expr) { return SqlRenderer().Expr(expr); }

std::string ToString(const SelectStatement& query) { return SqlRenderer().Query(query); }

}  // namespace tessera::parser
