#include "tests/parser/parse_for_test.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"

namespace tessera::parser::testing {

std::unique_ptr<Statement> ParseOk(std::string_view sql) {
  absl::StatusOr<std::unique_ptr<Statement>> statement = ParseStatement(sql);
  EXPECT_TRUE(statement.ok()) << std::string(sql) << "\n" << statement.status().message();
  if (!statement.ok()) return nullptr;
  return *std::move(statement);
}

std::unique_ptr<SelectStatement> ParseQuery(std::string_view sql) {
  std::unique_ptr<Statement> statement = ParseOk(sql);
  if (statement == nullptr) return nullptr;
  EXPECT_EQ(statement->kind, StatementKind::kSelect);
  if (statement->kind != StatementKind::kSelect) return nullptr;
  return std::move(static_cast<SelectQueryStatement&>(*statement).query);
}

std::unique_ptr<ParsedExpr> ParseExpr(std::string_view expression) {
  std::unique_ptr<SelectStatement> query = ParseQuery(absl::StrCat("SELECT ", std::string(expression)));
  if (query == nullptr) return nullptr;
  EXPECT_EQ(query->body->kind, QueryBody::Kind::kSelect);
  EXPECT_EQ(query->body->select->items.size(), 1u);
  EXPECT_TRUE(query->body->select->items[0].alias.empty()) << std::string(expression);
  return std::move(query->body->select->items[0].expr);
}

std::string ParseError(std::string_view sql) {
  absl::StatusOr<std::vector<std::unique_ptr<Statement>>> statements = ParseStatements(sql);
  EXPECT_FALSE(statements.ok()) << "parsed: " << std::string(sql);
  if (statements.ok()) return "";
  EXPECT_EQ(statements.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(statements.status().message());
}

namespace {

std::string DumpChildren(const ParsedExpr& expr, size_t first = 0) {
  std::vector<std::string> parts;
  for (size_t i = first; i < expr.children.size(); ++i) parts.push_back(Dump(*expr.children[i]));
  return absl::StrJoin(parts, " ");
}

std::string DumpLiteral(const ParsedExpr& expr) {
  switch (expr.literal_kind) {
    case LiteralKind::kNull:
      return "NULL";
    case LiteralKind::kBoolean:
      return expr.literal_text;
    case LiteralKind::kInteger:
      return expr.literal_text;
    case LiteralKind::kDecimal:
      return absl::StrCat("dec:", expr.literal_text);
    case LiteralKind::kString:
      return absl::StrCat("'", expr.literal_text, "'");
    case LiteralKind::kDate:
      return absl::StrCat("date:", expr.literal_text);
    case LiteralKind::kTimestamp:
      return absl::StrCat("timestamp:", expr.literal_text);
    case LiteralKind::kInterval:
      return absl::StrCat("interval:", expr.literal_text, ":", expr.interval_unit);
  }
  return "?";
}

}  // namespace

std::string Dump(const ParsedExpr& expr) {
  const std::string negation = expr.negated ? "not-" : "";
  switch (expr.kind) {
    case ExprKind::kLiteral:
      return DumpLiteral(expr);
    case ExprKind::kColumnRef:
      return expr.qualifier.empty() ? expr.name : absl::StrCat(expr.qualifier, ".", expr.name);
    case ExprKind::kStar:
      return expr.qualifier.empty() ? "*" : absl::StrCat(expr.qualifier, ".*");
    case ExprKind::kUnary:
    case ExprKind::kBinary:
      return absl::StrCat("(", expr.name, " ", DumpChildren(expr), ")");
    case ExprKind::kFunctionCall: {
      std::string order;
      for (const OrderByItem& item : expr.aggregate_order_by) {
        absl::StrAppend(&order, " ", Dump(*item.expr), item.ascending ? "" : " desc");
      }
      if (!order.empty()) order = absl::StrCat(expr.within_group ? " within-group-order" : " order", order);
      return absl::StrCat("(fn ", expr.name, expr.distinct ? " distinct" : "", expr.children.empty() ? "" : " ",
                          DumpChildren(expr), order, ")");
    }
    case ExprKind::kCase:
      return absl::StrCat("(case", expr.case_has_operand ? " operand" : "", expr.case_has_else ? " else" : "", " ",
                          DumpChildren(expr), ")");
    case ExprKind::kCast: {
      std::string type = expr.cast_type->name;
      if (!expr.cast_type->parameters.empty()) {
        absl::StrAppend(&type, "(", absl::StrJoin(expr.cast_type->parameters, ","), ")");
      }
      return absl::StrCat("(cast ", DumpChildren(expr), " ", type, ")");
    }
    case ExprKind::kBetween:
      return absl::StrCat("(", negation, "between ", DumpChildren(expr), ")");
    case ExprKind::kInList:
      return absl::StrCat("(", negation, "in ", DumpChildren(expr), ")");
    case ExprKind::kInSubquery:
      return absl::StrCat("(", negation, "in-subquery ", DumpChildren(expr), ")");
    case ExprKind::kExists:
      return absl::StrCat("(", negation, "exists)");
    case ExprKind::kScalarSubquery:
      return "(subquery)";
    case ExprKind::kLike:
      return absl::StrCat("(", negation, "like ", DumpChildren(expr), ")");
    case ExprKind::kIsNull:
      return absl::StrCat("(is-", negation, "null ", DumpChildren(expr), ")");
    case ExprKind::kExtract:
      return absl::StrCat("(extract ", expr.name, " ", DumpChildren(expr), ")");
    case ExprKind::kSubstring:
      return absl::StrCat("(substring ", DumpChildren(expr), ")");
  }
  return "?";
}

std::filesystem::path BenchmarkQueriesRoot() {
  std::vector<std::filesystem::path> candidates;
  if (const char* shared = std::getenv("TESSERA_SHARED_DIR"); shared != nullptr && *shared != '\0') {
    candidates.emplace_back(shared);
  }
  const std::filesystem::path source_root(TESSERA_SOURCE_DIR);
  candidates.push_back(source_root.parent_path() / "shared");
  candidates.push_back(source_root);
  for (const std::filesystem::path& candidate : candidates) {
    std::error_code error;
    if (std::filesystem::is_directory(candidate / "benchmarks" / "tpch" / "queries", error)) return candidate;
  }
  return {};
}

std::vector<std::filesystem::path> BenchmarkQueryFiles(std::string_view benchmark) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = BenchmarkQueriesRoot();
  if (root.empty()) return files;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(root / "benchmarks" / std::string(benchmark) / "queries", error)) {
    if (entry.path().extension() == ".sql") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace tessera::parser::testing
