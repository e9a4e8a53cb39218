#include "tests/optimizer/optimizer_catalog_for_test.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "catalog/text_conversion.h"
#include "common/hash.h"
#include "gtest/gtest.h"
#include "optimizer/binder.h"
#include "parser/parser.h"

namespace tessera::optimizer::testing {
namespace {

struct ColumnStats {
  int64_t distinct = 0;
  int64_t min = 0;  // integer and date columns only (min == max == 0: no min/max)
  int64_t max = 0;
};

int32_t Days(const char* date) {
  int32_t days = 0;
  ParseDate(date, &days);
  return days;
}

const absl::flat_hash_map<std::string, int64_t>& RowCounts() {
  static const auto* counts = new absl::flat_hash_map<std::string, int64_t>{// TPC-H SF1
                                                                            {"tpch.region", 5},
                                                                            {"tpch.nation", 25},
                                                                            {"tpch.supplier", 10000},
                                                                            {"tpch.customer", 150000},
                                                                            {"tpch.part", 200000},
                                                                            {"tpch.partsupp", 800000},
                                                                            {"tpch.orders", 1500000},
                                                                            {"tpch.lineitem", 6001215},
                                                                            // SSB SF1
                                                                            {"ssb.lineorder", 6001171},
                                                                            {"ssb.customer", 30000},
                                                                            {"ssb.supplier", 2000},
                                                                            {"ssb.part", 200000},
                                                                            {"ssb.date", 2556}};
  return *counts;
}

const absl::flat_hash_map<std::string, ColumnStats>& Statistics() {
  static const auto* stats = new absl::flat_hash_map<std::string, ColumnStats>{
      {"tpch.region.r_regionkey", {5, 0, 4}},
      {"tpch.region.r_name", {5}},
      {"tpch.nation.n_nationkey", {25, 0, 24}},
      {"tpch.nation.n_name", {25}},
      {"tpch.nation.n_regionkey", {5, 0, 4}},
      {"tpch.supplier.s_suppkey", {10000, 1, 10000}},
      {"tpch.supplier.s_nationkey", {25, 0, 24}},
      {"tpch.customer.c_custkey", {150000, 1, 150000}},
      {"tpch.customer.c_nationkey", {25, 0, 24}},
      {"tpch.customer.c_mktsegment", {5}},
      {"tpch.part.p_partkey", {200000, 1, 200000}},
      {"tpch.part.p_brand", {25}},
      {"tpch.part.p_type", {150}},
      {"tpch.part.p_size", {50, 1, 50}},
      {"tpch.part.p_container", {40}},
      {"tpch.part.p_mfgr", {5}},
      {"tpch.partsupp.ps_partkey", {200000, 1, 200000}},
      {"tpch.partsupp.ps_suppkey", {10000, 1, 10000}},
      {"tpch.partsupp.ps_availqty", {9999, 1, 9999}},
      {"tpch.orders.o_orderkey", {1500000, 1, 6000000}},
      {"tpch.orders.o_custkey", {100000, 1, 149999}},
      {"tpch.orders.o_orderstatus", {3}},
      {"tpch.orders.o_orderpriority", {5}},
      {"tpch.orders.o_orderdate", {2406, Days("1992-01-01"), Days("1998-08-02")}},
      {"tpch.orders.o_shippriority", {1, 0, 0}},
      {"tpch.lineitem.l_orderkey", {1500000, 1, 6000000}},
      {"tpch.lineitem.l_partkey", {200000, 1, 200000}},
      {"tpch.lineitem.l_suppkey", {10000, 1, 10000}},
      {"tpch.lineitem.l_linenumber", {7, 1, 7}},
      {"tpch.lineitem.l_quantity", {50}},
      {"tpch.lineitem.l_discount", {11}},
      {"tpch.lineitem.l_tax", {9}},
      {"tpch.lineitem.l_returnflag", {3}},
      {"tpch.lineitem.l_linestatus", {2}},
      {"tpch.lineitem.l_shipdate", {2526, Days("1992-01-02"), Days("1998-12-01")}},
      {"tpch.lineitem.l_commitdate", {2466, Days("1992-01-31"), Days("1998-10-31")}},
      {"tpch.lineitem.l_receiptdate", {2554, Days("1992-01-04"), Days("1998-12-31")}},
      {"tpch.lineitem.l_shipinstruct", {4}},
      {"tpch.lineitem.l_shipmode", {7}},
      {"ssb.lineorder.lo_orderkey", {1500000, 1, 6000000}},
      {"ssb.lineorder.lo_custkey", {20000, 1, 30000}},
      {"ssb.lineorder.lo_partkey", {200000, 1, 200000}},
      {"ssb.lineorder.lo_suppkey", {2000, 1, 2000}},
      {"ssb.lineorder.lo_orderdate", {2406, 19920101, 19980802}},
      {"ssb.lineorder.lo_discount", {11, 0, 10}},
      {"ssb.lineorder.lo_quantity", {50, 1, 50}},
      {"ssb.customer.c_custkey", {30000, 1, 30000}},
      {"ssb.customer.c_city", {250}},
      {"ssb.customer.c_nation", {25}},
      {"ssb.customer.c_region", {5}},
      {"ssb.supplier.s_suppkey", {2000, 1, 2000}},
      {"ssb.supplier.s_city", {250}},
      {"ssb.supplier.s_nation", {25}},
      {"ssb.supplier.s_region", {5}},
      {"ssb.part.p_partkey", {200000, 1, 200000}},
      {"ssb.part.p_mfgr", {5}},
      {"ssb.part.p_category", {25}},
      {"ssb.part.p_brand1", {1000}},
      {"ssb.date.d_datekey", {2556, 19920101, 19981230}},
      {"ssb.date.d_year", {7, 1992, 1998}},
      {"ssb.date.d_yearmonthnum", {84, 199201, 199812}},
      {"ssb.date.d_yearmonth", {84}},
      {"ssb.date.d_weeknuminyear", {53, 1, 53}}};
  return *stats;
}

absl::StatusOr<TableDescriptor> DescriptorFrom(const parser::CreateTableStatement& create) {
  TableDescriptor table;
  table.name = create.table;
  for (const parser::ColumnDefinition& definition : create.columns) {
    absl::StatusOr<Type> type =
        Type::FromName(definition.type.name, definition.type.parameters.data(), definition.type.parameters.size());
    if (!type.ok()) return type.status();
    table.columns.push_back(ColumnSchema{definition.name, *type, definition.not_null || definition.primary_key, {}});
  }
  return table;
}

void AddStatistics(Catalog& catalog, const std::string& benchmark) {
  for (const auto& table : catalog.ListTables()) {
    auto rows = RowCounts().find(benchmark + "." + table->name);
    if (rows == RowCounts().end()) continue;
    auto updated = std::make_shared<TableDescriptor>(*table);
    updated->row_count = rows->second;
    for (size_t i = 0; i < updated->columns.size(); ++i) {
      const ColumnSchema& column = updated->columns[i];
      ColumnStatistics& statistics = updated->statistics[i];
      auto found = Statistics().find(benchmark + "." + table->name + "." + column.name);
      const ColumnStats stats = found == Statistics().end() ? ColumnStats{rows->second} : found->second;
      const int64_t distinct = std::min(stats.distinct, rows->second);
      for (int64_t v = 0; v < distinct; ++v) statistics.distinct.AddHash(HashInt64(static_cast<uint64_t>(v) + 1));
      if (stats.min != 0 || stats.max != 0) {
        switch (column.type.id()) {
          case TypeId::kInteger:
            statistics.UpdateMinMax(Value::Integer(static_cast<int32_t>(stats.min)));
            statistics.UpdateMinMax(Value::Integer(static_cast<int32_t>(stats.max)));
            break;
          case TypeId::kBigInt:
            statistics.UpdateMinMax(Value::BigInt(stats.min));
            statistics.UpdateMinMax(Value::BigInt(stats.max));
            break;
          case TypeId::kDate:
            statistics.UpdateMinMax(Value::Date(static_cast<int32_t>(stats.min)));
            statistics.UpdateMinMax(Value::Date(static_cast<int32_t>(stats.max)));
            break;
          default:
            break;
        }
      }
    }
    absl::Status status = catalog.ReplaceTable(table, updated);
    EXPECT_TRUE(status.ok()) << status.message();
  }
}

}  // namespace

std::filesystem::path BenchmarksRoot() {
  std::vector<std::filesystem::path> candidates;
  if (const char* shared = std::getenv("TESSERA_SHARED_DIR"); shared != nullptr && *shared != '\0') {
    candidates.emplace_back(shared);
  }
  const std::filesystem::path source_root(TESSERA_SOURCE_DIR);
  candidates.push_back(source_root);
  candidates.push_back(source_root.parent_path() / "shared");
  for (const std::filesystem::path& candidate : candidates) {
    std::error_code error;
    if (std::filesystem::is_regular_file(candidate / "benchmarks" / "tpch" / "schema.sql", error)) return candidate;
  }
  return {};
}

std::vector<std::filesystem::path> BenchmarkQueryFiles(std::string_view benchmark) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = BenchmarksRoot();
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

TestCatalog::TestCatalog(std::string_view benchmark, bool statistics) {
  static int counter = 0;
  directory_ = std::filesystem::temp_directory_path() /
               ("tessera_optimizer_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::remove_all(directory_);
  absl::StatusOr<std::unique_ptr<Catalog>> opened = Catalog::Open(directory_.string(), /*sync=*/false);
  if (!opened.ok()) {
    ADD_FAILURE() << opened.status().message();
    return;
  }
  catalog_ = *std::move(opened);
  if (benchmark.empty()) return;
  const std::filesystem::path root = BenchmarksRoot();
  if (root.empty()) {
    ADD_FAILURE() << "benchmarks/" << benchmark << "/schema.sql not found; set TESSERA_SHARED_DIR";
    return;
  }
  CreateTables(ReadFile(root / "benchmarks" / std::string(benchmark) / "schema.sql"));
  if (statistics) AddStatistics(*catalog_, std::string(benchmark));
}

TestCatalog::~TestCatalog() {
  catalog_.reset();
  std::error_code error;
  std::filesystem::remove_all(directory_, error);
}

void TestCatalog::CreateTables(std::string_view create_statements) {
  absl::StatusOr<std::vector<std::unique_ptr<parser::Statement>>> statements =
      parser::ParseStatements(create_statements);
  ASSERT_TRUE(statements.ok()) << statements.status().message();
  for (const auto& statement : *statements) {
    ASSERT_EQ(statement->kind, parser::StatementKind::kCreateTable);
    absl::StatusOr<TableDescriptor> table =
        DescriptorFrom(static_cast<const parser::CreateTableStatement&>(*statement));
    ASSERT_TRUE(table.ok()) << table.status().message();
    absl::Status status = catalog_->CreateTable(*std::move(table));
    ASSERT_TRUE(status.ok()) << status.message();
  }
}

void TestCatalog::CreateView(const std::string& name, const std::string& query, std::vector<std::string> columns) {
  ViewDescriptor view;
  view.name = name;
  view.query_text = query;
  view.column_names = std::move(columns);
  absl::Status status = catalog_->CreateView(std::move(view), /*or_replace=*/true);
  ASSERT_TRUE(status.ok()) << status.message();
}

absl::StatusOr<std::unique_ptr<LogicalOperator>> Plan(const Catalog& catalog, std::string_view sql, bool optimize,
                                                      const OptimizerOptions& options) {
  absl::StatusOr<std::unique_ptr<parser::Statement>> statement = parser::ParseStatement(sql);
  if (!statement.ok()) return statement.status();
  if ((*statement)->kind != parser::StatementKind::kSelect) return absl::InvalidArgumentError("not a SELECT");
  const auto& select = static_cast<const parser::SelectQueryStatement&>(**statement);
  return optimize ? PlanQuery(*select.query, catalog, sql, options) : BindQuery(*select.query, catalog, sql);
}

absl::StatusOr<std::string> Explain(const Catalog& catalog, std::string_view sql, bool optimize) {
  absl::StatusOr<std::unique_ptr<LogicalOperator>> plan = Plan(catalog, sql, optimize);
  if (!plan.ok()) return plan.status();
  return (*plan)->ToString();
}

std::string BindError(const Catalog& catalog, std::string_view sql) {
  absl::StatusOr<std::string> plan = Explain(catalog, sql);
  if (plan.ok()) {
    ADD_FAILURE() << "expected an error for: " << sql << "\nbut bound to:\n" << *plan;
    return "";
  }
  return std::string(plan.status().message());
}

}  // namespace tessera::optimizer::testing
