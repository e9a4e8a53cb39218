// The binder and the rules never crash and never produce an invalid plan: every statement of the parser's fuzz
// corpus, and TPC-H queries with column names swapped for columns of other types, either bind to a plan that
// passes ValidatePlan (before and after the rules) or fail with a positioned user error.

#include <regex>
#include <string>

#include "gtest/gtest.h"
#include "optimizer/binder.h"
#include "optimizer/plan_validation.h"
#include "parser/parser.h"
#include "tests/optimizer/optimizer_catalog_for_test.h"

namespace tessera::optimizer {
namespace {

// Binds and optimizes `sql` if it parses as one SELECT; returns false if the binder failed (a user error).
bool CheckQuery(const Catalog& catalog, const std::string& sql) {
  absl::StatusOr<std::vector<std::unique_ptr<parser::Statement>>> statements = parser::ParseStatements(sql);
  if (!statements.ok()) return false;
  bool bound_all = true;
  for (const auto& statement : *statements) {
    if (statement->kind != parser::StatementKind::kSelect) continue;
    const auto& query = *static_cast<const parser::SelectQueryStatement&>(*statement).query;
    absl::StatusOr<std::unique_ptr<LogicalOperator>> bound = BindQuery(query, catalog, sql);
    if (!bound.ok()) {
      const absl::StatusCode code = bound.status().code();
      EXPECT_TRUE(code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kNotFound ||
                  code == absl::StatusCode::kUnimplemented)
          << sql << "\n"
          << bound.status();
      EXPECT_NE(std::string(bound.status().message()).find(" at line "), std::string::npos) << sql << "\n"
                                                                                            << bound.status();
      bound_all = false;
      continue;
    }
    absl::Status valid = ValidatePlan(**bound);
    EXPECT_TRUE(valid.ok()) << sql << "\n" << valid.message();
    absl::StatusOr<std::unique_ptr<LogicalOperator>> planned = PlanQuery(query, catalog, sql);
    EXPECT_TRUE(planned.ok()) << sql << "\n" << planned.status();
    if (!planned.ok()) continue;
    valid = ValidatePlan(**planned);
    EXPECT_TRUE(valid.ok()) << sql << "\n" << valid.message() << "\n" << (*planned)->ToString();
    EXPECT_EQ((*planned)->output_width(), (*bound)->output_width()) << sql;
  }
  return bound_all;
}

TEST(BinderRobustnessTest, ParserFuzzCorpus) {
  testing::TestCatalog catalog("tpch");
  catalog.CreateTables(
      "CREATE TABLE t (a INTEGER, b VARCHAR(10), c DECIMAL(10,2), d DATE);"
      "CREATE TABLE u (x INTEGER, y DOUBLE);");
  const std::filesystem::path corpus = std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "fuzz" / "parser_corpus";
  std::error_code error;
  if (!std::filesystem::is_directory(corpus, error)) GTEST_SKIP() << "no parser corpus at " << corpus;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(corpus, error)) {
    CheckQuery(catalog.catalog(), testing::ReadFile(entry.path()));
    ++files;
  }
  EXPECT_GT(files, 0);
}

TEST(BinderRobustnessTest, TpchQueriesWithSwappedColumns) {
  testing::TestCatalog catalog("tpch", /*statistics=*/true);
  const auto files = testing::BenchmarkQueryFiles("tpch");
  if (files.empty()) GTEST_SKIP() << "benchmarks/tpch/queries not found";
  // Columns of different types to put in place of each column reference.
  const std::vector<std::string> replacements = {"l_quantity", "o_orderdate", "n_name", "ps_availqty", "o_orderkey"};
  const std::regex column(R"(\b[a-z]{1,2}_[a-z]+\b)");
  int variants = 0;
  int bound = 0;
  for (const auto& file : files) {
    const std::string sql = testing::ReadFile(file);
    std::vector<std::pair<size_t, size_t>> matches;
    for (auto it = std::sregex_iterator(sql.begin(), sql.end(), column); it != std::sregex_iterator(); ++it) {
      matches.emplace_back(it->position(), it->length());
    }
    for (size_t m = 0; m < matches.size(); m += 3) {  // every third reference keeps the test fast
      for (const std::string& replacement : replacements) {
        std::string variant = sql;
        variant.replace(matches[m].first, matches[m].second, replacement);
        SCOPED_TRACE(file.filename().string());
        bound += CheckQuery(catalog.catalog(), variant);
        ++variants;
      }
    }
  }
  EXPECT_GT(variants, 500);
  EXPECT_GT(bound, 0);
}

}  // namespace
}  // namespace tessera::optimizer
