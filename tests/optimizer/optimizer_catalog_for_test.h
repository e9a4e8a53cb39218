#pragma once
// Test fixtures for the optimizer tests: a catalog in a temporary directory holding the TPC-H or SSB schema
// (parsed from benchmarks/<name>/schema.sql), optionally with SF1-like statistics, and shortcuts to bind
// queries. (optimizer_catalog_for_test.cc ends in _test.cc so that the tests/optimizer/*_test.cc glob
// compiles it.)

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "catalog/catalog.h"
#include "optimizer/logical_plan.h"
#include "optimizer/optimizer_options.h"

namespace tessera::optimizer::testing {

// The folder holding benchmarks/{tpch,ssb} (schema.sql and queries/), or "" if none is found:
// $TESSERA_SHARED_DIR, then the `shared` folder next to the source tree, then the source tree itself.
std::filesystem::path BenchmarksRoot();
std::vector<std::filesystem::path> BenchmarkQueryFiles(std::string_view benchmark);
std::string ReadFile(const std::filesystem::path& path);

// A catalog in a fresh temporary directory, removed on destruction.
class TestCatalog {
 public:
  // `benchmark` is "tpch", "ssb" or "" (empty catalog). With `statistics`, tables get SF1 row counts and
  // per-column min/max/distinct statistics.
  explicit TestCatalog(std::string_view benchmark, bool statistics = false);
  ~TestCatalog();

  Catalog& catalog() { return *catalog_; }
  bool ok() const { return catalog_ != nullptr; }

  // Runs DDL-like setup: CREATE TABLE statements (parsed) and views.
  void CreateTables(std::string_view create_statements);
  void CreateView(const std::string& name, const std::string& query, std::vector<std::string> columns = {});

 private:
  std::filesystem::path directory_;
  std::unique_ptr<Catalog> catalog_;
};

// Parses `sql` (one SELECT) and binds it; with `optimize`, also runs the rule list under `options` (with
// `options.validate_plans`, an invalid plan after any rule is an Internal error naming the rule).
absl::StatusOr<std::unique_ptr<LogicalOperator>> Plan(const Catalog& catalog, std::string_view sql,
                                                      bool optimize = false, const OptimizerOptions& options = {});

// Parses `sql` (one SELECT) and binds it; with `optimize`, also runs the rule list. Returns the plan's
// ToString() or the error message.
absl::StatusOr<std::string> Explain(const Catalog& catalog, std::string_view sql, bool optimize = false);

// The error message of a query that must fail to bind ("" and a test failure if it binds).
std::string BindError(const Catalog& catalog, std::string_view sql);

}  // namespace tessera::optimizer::testing
