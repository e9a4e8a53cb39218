// Every TPC-H and SSB query of the benchmark suite parses, and its rendering re-parses to the same rendering.

#include <string>

#include "gtest/gtest.h"
#include "parser/parser.h"
#include "tests/parser/parse_for_test.h"

namespace tessera::parser {
namespace {

using testing::BenchmarkQueryFiles;
using testing::ReadFile;

void ExpectParsesAndRoundTrips(const std::filesystem::path& file) {
  SCOPED_TRACE(file.string());
  const std::string sql = ReadFile(file);
  absl::StatusOr<std::vector<std::unique_ptr<Statement>>> statements = ParseStatements(sql);
  ASSERT_TRUE(statements.ok()) << statements.status().message();
  ASSERT_EQ(statements->size(), 1u);
  const Statement& statement = *(*statements)[0];
  ASSERT_EQ(statement.kind, StatementKind::kSelect);
  EXPECT_FALSE(statement.text.ends_with(";"));
  EXPECT_EQ(statement.position.line, 1);

  const std::string rendered = ToString(*static_cast<const SelectQueryStatement&>(statement).query);
  absl::StatusOr<std::unique_ptr<Statement>> reparsed = ParseStatement(rendered);
  ASSERT_TRUE(reparsed.ok()) << rendered << "\n" << reparsed.status().message();
  EXPECT_EQ(ToString(*static_cast<const SelectQueryStatement&>(**reparsed).query), rendered);
}

TEST(BenchmarkQueriesTest, AllTpchQueriesParse) {
  const auto files = BenchmarkQueryFiles("tpch");
  if (files.empty()) GTEST_SKIP() << "benchmarks/tpch/queries not found; set TESSERA_SHARED_DIR";
  EXPECT_EQ(files.size(), 22u);
  for (const auto& file : files) ExpectParsesAndRoundTrips(file);
}

TEST(BenchmarkQueriesTest, AllSsbQueriesParse) {
  const auto files = BenchmarkQueryFiles("ssb");
  if (files.empty()) GTEST_SKIP() << "benchmarks/ssb/queries not found; set TESSERA_SHARED_DIR";
  EXPECT_EQ(files.size(), 13u);
  for (const auto& file : files) ExpectParsesAndRoundTrips(file);
}

TEST(BenchmarkQueriesTest, TpchQ13DerivedTableWithColumnAliases) {
  std::unique_ptr<SelectStatement> query = testing::ParseQuery(R"sql(
      SELECT c_count, count(*) AS custdist
      FROM (SELECT c_custkey, count(o_orderkey)
            FROM customer LEFT OUTER JOIN orders ON c_custkey = o_custkey
                 AND o_comment NOT LIKE '%special%requests%'
            GROUP BY c_custkey) AS c_orders (c_custkey, c_count)
      GROUP BY c_count
      ORDER BY custdist DESC, c_count DESC)sql");
  ASSERT_NE(query, nullptr);
  const SelectCore& core = *query->body->select;
  ASSERT_EQ(core.from.size(), 1u);
  const TableRef& derived = *core.from[0];
  EXPECT_EQ(derived.kind, TableRefKind::kSubquery);
  EXPECT_EQ(derived.alias, "c_orders");
  EXPECT_EQ(derived.column_aliases, (std::vector<std::string>{"c_custkey", "c_count"}));
  const TableRef& join = *derived.subquery->body->select->from[0];
  EXPECT_EQ(join.kind, TableRefKind::kJoin);
  EXPECT_EQ(join.join_type, JoinType::kLeft);
  EXPECT_EQ(testing::Dump(*join.join_condition),
            "(AND (= c_custkey o_custkey) (not-like o_comment '%special%requests%'))");
  ASSERT_EQ(query->order_by.size(), 2u);
  EXPECT_FALSE(query->order_by[0].ascending);
}

TEST(BenchmarkQueriesTest, SsbDateTableIsAName) {
  std::unique_ptr<SelectStatement> query = testing::ParseQuery(
      "SELECT sum(lo_extendedprice * lo_discount) AS revenue FROM lineorder, date "
      "WHERE lo_orderdate = d_datekey AND d_year = 1993 AND lo_discount BETWEEN 1 AND 3 AND lo_quantity < "
      "25");
  ASSERT_NE(query, nullptr);
  const SelectCore& core = *query->body->select;
  ASSERT_EQ(core.from.size(), 2u);
  EXPECT_EQ(core.from[1]->name, "date");
  EXPECT_EQ(core.from[1]->alias, "");
  EXPECT_EQ(testing::Dump(*core.items[0].expr), "(fn SUM (* lo_extendedprice lo_discount))");
}

}  // namespace
}  // namespace tessera::parser
