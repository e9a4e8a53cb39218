#pragma once
// For tests that run SQL against a Database of their own: opening one in a temporary directory, and number files
// to COPY from.

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "optimizer/binder.h"
#include "parser/parser.h"
#include "query_execution/plan_builder.h"
#include "scheduler/execution_query.h"

namespace tessera {

// A database in `directory` (created if missing) without fsync, with two worker threads and a buffer-pool budget
// of `memory_budget_bytes` (0: the default).
inline absl::StatusOr<std::unique_ptr<Database>> OpenTestDatabase(const std::filesystem::path& directory,
                                                                  size_t memory_budget_bytes = 0) {
  DatabaseOptions options;
  options.data_directory = directory.string();
  options.sync_writes = false;
  options.worker_threads = 2;
  options.memory_budget_bytes = memory_budget_bytes;
  return Database::Open(options);
}

// The statements that create `small` (k = 0 .. 999) and `big` (1,000,000 rows: k = 0 .. 999999, g = k % 10),
// `big` filled by `loads` INSERT ... SELECTs (a divisor of 1000), so that it has at least that many blocks.
inline std::vector<std::string> MillionRowTablesSql(int loads) {
  std::string values;
  for (int i = 0; i < 1000; ++i) absl::StrAppend(&values, i == 0 ? "" : ", ", "(", i, ")");
  std::vector<std::string> statements = {"CREATE TABLE small (k INTEGER NOT NULL)",
                                         absl::StrCat("INSERT INTO small VALUES ", values),
                                         "CREATE TABLE big (k INTEGER NOT NULL, g INTEGER NOT NULL)"};
  const int per_load = 1000 / loads;
  for (int load = 0; load < loads; ++load) {
    statements.push_back(absl::StrCat("INSERT INTO big SELECT ", load * per_load * 1000, " + a.k * 1000 + b.k, ",
                                      "b.k % 10 FROM small a, small b WHERE a.k < ", per_load));
  }
  return statements;
}

// Writes 0 .. count-1, one per line.
inline void WriteNumbers(const std::filesystem::path& path, int count) {
  std::ofstream out(path);
  for (int i = 0; i < count; ++i) out << i << "\n";
}

// Writes the number files under `directory` and returns the statements that load `build` (10000 BIGINTs, one
// block) and `probe` (20 loads of 5000: 20 blocks, so 20 work orders per operator reading it): a cross join of the
// two is many seconds of work in twentieths, for tests of cancellation and concurrency.
inline std::string ProbeAndBuildTablesSql(const std::filesystem::path& directory) {
  WriteNumbers(directory / "5000.csv", 5000);
  WriteNumbers(directory / "10000.csv", 10000);
  std::string sql = absl::StrCat("CREATE TABLE build (x BIGINT); COPY build FROM '", (directory / "10000.csv").string(),
                                 "'; CREATE TABLE probe (x BIGINT);");
  for (int i = 0; i < 20; ++i) absl::StrAppend(&sql, "COPY probe FROM '", (directory / "5000.csv").string(), "';");
  return sql;
}

// `sql` (one SELECT) planned over `database` into an ExecutionQuery with id `id` that is not submitted: tests drive
// it by hand through the calls the Foreman makes. Null (and a test failure) if it does not plan.
inline std::unique_ptr<ExecutionQuery> PlanTestQuery(Database& database, const std::string& sql, QueryId id,
                                                     int workers) {
  absl::StatusOr<std::unique_ptr<parser::Statement>> statement = parser::ParseStatement(sql);
  EXPECT_TRUE(statement.ok()) << statement.status();
  if (!statement.ok()) return nullptr;
  auto* select = dynamic_cast<parser::SelectQueryStatement*>(statement->get());
  EXPECT_NE(select, nullptr) << sql;
  if (select == nullptr) return nullptr;
  absl::StatusOr<std::unique_ptr<optimizer::LogicalOperator>> plan =
      optimizer::PlanQuery(*select->query, database.catalog(), sql);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<ExecutionDag>> dag =
      BuildExecutionDag(**plan, &database.storage(), &database.buffer_pool());
  EXPECT_TRUE(dag.ok()) << dag.status();
  if (!dag.ok()) return nullptr;
  return std::make_unique<ExecutionQuery>(id, 1, std::make_unique<QueryManager>(*std::move(dag)), workers);
}

}  // namespace tessera
