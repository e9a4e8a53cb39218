// Fault injection at every write of the data directory (common/file_faults.h), as SQLite's test VFS does it. For
// each operation (COPY, INSERT ... VALUES, INSERT ... SELECT, CREATE TABLE, DROP TABLE, and the catalog commits
// alone: CREATE VIEW, DROP VIEW) a clean run first counts its writes, fsyncs and renames; then, for every N up to that
// count and for ENOSPC and EIO, a fresh copy of the database runs the operation with the N-th of them failing. After
// each run:
//  - the statement's outcome and the database agree: failed -> every table exactly as before, succeeded -> exactly
//    as after (row counts, a checksum of every row, the column statistics), in the running process;
//  - a statement that failed succeeds when run again in the same process (the fault left nothing in the way);
//  - reopened, the database holds exactly the "after" state, and its directory no leftovers (no temporary catalog
//    file, no segment file that no table uses).
// Failed writes are torn (half written), as on a disk that fills up midway (common/file_faults.h).
// The figures (faults injected per operation, damaged databases) are printed for the record.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "catalog/catalog.h"
#include "common/file_faults.h"
#include "common/file_io.h"
#include "common/hash.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "storage/storage_manager.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

// What a test can see of a database: per table its row count, a checksum of its rows (order-independent) and one of
// its column statistics; the views' names.
struct TableState {
  int64_t rows = 0;
  uint64_t checksum = 0;
  uint64_t statistics_checksum = 0;
  friend bool operator==(const TableState&, const TableState&) = default;
};

struct DatabaseState {
  std::map<std::string, TableState> tables;
  std::vector<std::string> views;
  friend bool operator==(const DatabaseState&, const DatabaseState&) = default;
};

std::string Describe(const DatabaseState& state) {
  std::vector<std::string> parts;
  for (const auto& [name, table] : state.tables) {
    parts.push_back(absl::StrCat(name, ": ", table.rows, " rows, checksum ", table.checksum, ", statistics ",
                                 table.statistics_checksum));
  }
  for (const std::string& view : state.views) parts.push_back(absl::StrCat("view ", view));
  return absl::StrJoin(parts, "; ");
}

absl::StatusOr<DatabaseState> ReadState(Database& database) {
  DatabaseState state;
  Session session(&database);
  for (const auto& table : database.catalog().ListTables()) {
    absl::StatusOr<QueryResult> rows = session.Execute(absl::StrCat("SELECT * FROM ", table->name));
    if (!rows.ok()) return rows.status();
    std::vector<std::string> lines;
    for (const std::vector<Value>& row : rows->rows) {
      std::string line;
      for (const Value& value : row) absl::StrAppend(&line, value.ToString(), "|");
      lines.push_back(std::move(line));
    }
    std::sort(lines.begin(), lines.end());
    const std::string all = absl::StrJoin(lines, "\n");
    std::string statistics;
    for (const ColumnStatistics& column : table->statistics) {
      absl::StrAppend(&statistics, column.null_count, "|", column.min.ToString(), "|", column.max.ToString(), "|",
                      column.distinct.Serialize(), "|");
    }
    state.tables[table->name] = {static_cast<int64_t>(lines.size()), HashBytes(all.data(), all.size()),
                                 HashBytes(statistics.data(), statistics.size())};
    if (static_cast<int64_t>(lines.size()) != table->row_count) {
      return absl::DataLossError(absl::StrCat("table '", table->name, "' has ", lines.size(),
                                              " rows but its descriptor says ", table->row_count));
    }
  }
  for (const auto& view : database.catalog().ListViews()) state.views.push_back(view->name);
  return state;
}

absl::StatusOr<std::unique_ptr<Database>> OpenSynced(const fs::path& directory) {
  DatabaseOptions options;
  options.data_directory = directory.string();
  options.sync_writes = true;  // so that the fsyncs happen and can fail
  options.worker_threads = 2;
  return Database::Open(options);
}

// Files of the data directory that no committed state explains: a temporary catalog file, segment files that no
// table of the reopened catalog uses.
std::vector<std::string> Leftovers(Database& database, const fs::path& directory) {
  std::vector<std::string> leftovers;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.path().extension() == ".tmp") leftovers.push_back(entry.path().filename().string());
  }
  std::vector<uint64_t> live = database.catalog().LiveSegmentIds();
  for (const fs::directory_entry& entry : fs::directory_iterator(directory / "segments")) {
    bool used = false;
    for (uint64_t id : live) used = used || entry.path() == fs::path(database.storage().SegmentPath(id));
    if (!used) leftovers.push_back(entry.path().filename().string());
  }
  return leftovers;
}

struct Operation {
  std::string name;
  std::string sql;
};

class FaultInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / absl::StrCat("fault_injection_test_", getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
    // 30000 rows of two columns in 64 KB blocks: a COPY of them writes several blocks.
    std::ofstream rows(root_ / "rows.csv");
    for (int i = 0; i < 30000; ++i) rows << i << ",label-" << (i * 7919) % 1000 << "\n";
    rows.close();
    base_ = root_ / "base";
    auto database = OpenSynced(base_);
    ASSERT_TRUE(database.ok()) << database.status();
    Session session(database->get());
    for (const std::string& sql :
         {std::string("CREATE TABLE t (id BIGINT NOT NULL, label VARCHAR(16)) WITH (block_size = '64KB')"),
          absl::StrCat("COPY t FROM '", (root_ / "rows.csv").string(), "' (FORMAT csv)"),
          std::string("INSERT INTO t VALUES (-1, 'minus one'), (-2, NULL)"),
          std::string("CREATE TABLE other (x INTEGER)"), std::string("INSERT INTO other VALUES (1), (2), (3)"),
          std::string("CREATE VIEW old_view AS SELECT x FROM other")}) {
      absl::StatusOr<QueryResult> result = session.Execute(sql);
      ASSERT_TRUE(result.ok()) << sql << ": " << result.status();
    }
  }

  void TearDown() override { fs::remove_all(root_); }

  // A copy of the base database to run one operation on.
  fs::path FreshCopy(const std::string& name) {
    fs::path directory = root_ / name;
    fs::remove_all(directory);
    fs::copy(base_, directory, fs::copy_options::recursive);
    return directory;
  }

  // Runs `operation` once without faults and returns how many file operations it made; fills `before`/`after`.
  int64_t CountOperations(const Operation& operation, DatabaseState* before, DatabaseState* after) {
    fs::path directory = FreshCopy("count");
    auto database = OpenSynced(directory);
    EXPECT_TRUE(database.ok()) << database.status();
    if (!database.ok()) return 0;
    auto state = ReadState(**database);
    EXPECT_TRUE(state.ok()) << state.status();
    if (state.ok()) *before = *state;
    FailNthFileOperation counter(/*fail_at=*/0, 0);
    {
      ScopedFileFaultInjector installed(&counter);
      Session session(database->get());
      absl::StatusOr<QueryResult> result = session.Execute(operation.sql);
      EXPECT_TRUE(result.ok()) << operation.sql << ": " << result.status();
    }
    state = ReadState(**database);
    EXPECT_TRUE(state.ok()) << state.status();
    if (state.ok()) *after = *state;
    EXPECT_FALSE(*before == *after) << operation.name << " changes nothing";
    return counter.operations();
  }

  // Runs `operation` with its `fail_at`-th file operation failing with `error`; true if the database came out
  // undamaged (test failures say why otherwise).
  bool RunWithFault(const Operation& operation, int64_t fail_at, int error, const DatabaseState& before,
                    const DatabaseState& after) {
    const std::string context = absl::StrCat(operation.name, ", fault ", fail_at, " (", std::strerror(error), ")");
    fs::path directory = FreshCopy("faulted");
    bool succeeded = false;
    std::string injected_at;
    {
      auto database = OpenSynced(directory);
      EXPECT_TRUE(database.ok()) << context << ": " << database.status();
      if (!database.ok()) return false;
      FailNthFileOperation fault(fail_at, error);
      {
        ScopedFileFaultInjector installed(&fault);
        Session session(database->get());
        absl::StatusOr<QueryResult> result = session.Execute(operation.sql);
        succeeded = result.ok();
      }
      EXPECT_TRUE(fault.injected()) << context;
      injected_at = fault.injected_at();
      auto state = ReadState(**database);
      EXPECT_TRUE(state.ok()) << context << " at " << injected_at << ": " << state.status();
      if (!state.ok()) return false;
      const DatabaseState& expected = succeeded ? after : before;
      EXPECT_EQ(*state, expected) << context << " at " << injected_at << ", statement "
                                  << (succeeded ? "succeeded" : "failed") << ": the running database holds "
                                  << Describe(*state) << "; expected " << Describe(expected);
      if (!(*state == expected)) return false;
      if (!succeeded) {
        // The disk has room again: the same statement now succeeds, in the same process.
        Session session(database->get());
        absl::StatusOr<QueryResult> retried = session.Execute(operation.sql);
        EXPECT_TRUE(retried.ok()) << context << " at " << injected_at << ": retrying: " << retried.status();
        if (!retried.ok()) return false;
        state = ReadState(**database);
        EXPECT_TRUE(state.ok() && *state == after) << context << " at " << injected_at << ": retried";
        if (!state.ok() || !(*state == after)) return false;
      }
    }
    auto reopened = OpenSynced(directory);
    EXPECT_TRUE(reopened.ok()) << context << " at " << injected_at << ": reopening: " << reopened.status();
    if (!reopened.ok()) return false;
    auto state = ReadState(**reopened);
    EXPECT_TRUE(state.ok()) << context << " at " << injected_at << ": after reopening: " << state.status();
    if (!state.ok()) return false;
    EXPECT_EQ(*state, after) << context << " at " << injected_at << ", statement "
                             << (succeeded ? "succeeded" : "failed, then succeeded")
                             << ": reopened, the database holds " << Describe(*state) << "; expected "
                             << Describe(after);
    std::vector<std::string> leftovers = Leftovers(**reopened, directory);
    EXPECT_TRUE(leftovers.empty()) << context << " at " << injected_at << ": " << absl::StrJoin(leftovers, ", ");
    return *state == after && leftovers.empty();
  }

  fs::path root_;
  fs::path base_;
};

TEST_F(FaultInjectionTest, EveryWriteFsyncAndRenameFailingLeavesEachTableAsBeforeOrAsAfter) {
  const std::vector<Operation> operations = {
      {"COPY", absl::StrCat("COPY t FROM '", (root_ / "rows.csv").string(), "' (FORMAT csv)")},
      {"INSERT VALUES", "INSERT INTO t VALUES (7, 'seven'), (8, 'eight'), (9, NULL)"},
      {"INSERT SELECT", "INSERT INTO t SELECT id + 100000, label FROM t WHERE id % 3 = 0"},
      {"CREATE TABLE", "CREATE TABLE created (a INTEGER, b VARCHAR(4))"},
      {"DROP TABLE", "DROP TABLE t"},
      {"CREATE VIEW", "CREATE VIEW v AS SELECT id FROM t WHERE id < 10"},
      {"DROP VIEW", "DROP VIEW old_view"},
  };
  int64_t total_faults = 0;
  int damaged = 0;
  std::vector<std::string> report;
  for (const Operation& operation : operations) {
    DatabaseState before, after;
    const int64_t count = CountOperations(operation, &before, &after);
    ASSERT_GT(count, 0) << operation.name << " made no file operation";
    int64_t faults = 0;
    int damaged_here = 0;
    for (int error : {ENOSPC, EIO}) {
      for (int64_t n = 1; n <= count; ++n) {
        ++faults;
        if (!RunWithFault(operation, n, error, before, after)) ++damaged_here;
      }
    }
    total_faults += faults;
    damaged += damaged_here;
    report.push_back(absl::StrCat(operation.name, ": ", count, " writes/fsyncs/renames, ", faults, " faults injected, ",
                                  damaged_here, " damaged"));
  }
  std::printf("fault injection: %s; total %lld faults, %d damaged\n", absl::StrJoin(report, "; ").c_str(),
              static_cast<long long>(total_faults), damaged);
  EXPECT_EQ(damaged, 0);
}

// The hook itself: the N-th operation fails with the errno, the others run; WriteFileAtomically leaves no
// temporary file behind whichever of its steps fails.
TEST(FileFaultsTest, FailsExactlyTheNthOperationAndLeavesNoTemporaryFile) {
  const fs::path directory = fs::temp_directory_path() / absl::StrCat("file_faults_test_", getpid());
  fs::remove_all(directory);
  fs::create_directories(directory);
  const std::string path = (directory / "file").string();
  ASSERT_TRUE(WriteFileAtomically(path, "old", /*sync=*/true).ok());
  FailNthFileOperation counter(0, 0);
  {
    ScopedFileFaultInjector installed(&counter);
    ASSERT_TRUE(WriteFileAtomically(path, "new", /*sync=*/true).ok());
  }
  EXPECT_EQ(counter.operations(), 4);  // write, fsync, rename, fsync of the directory
  for (int64_t n = 1; n <= 3; ++n) {
    FailNthFileOperation fault(n, EIO);
    ScopedFileFaultInjector installed(&fault);
    absl::Status status = WriteFileAtomically(path, absl::StrCat("attempt ", n), /*sync=*/true);
    EXPECT_FALSE(status.ok()) << n;
    EXPECT_NE(std::string(status.message()).find("Input/output error"), std::string::npos) << status;
    EXPECT_FALSE(fs::exists(path + ".tmp")) << n;
    EXPECT_EQ(*ReadFileToString(path), "new") << n;
  }
  {
    FailNthFileOperation fault(4, EIO);  // the directory's fsync, after the rename that commits
    ScopedFileFaultInjector installed(&fault);
    EXPECT_TRUE(WriteFileAtomically(path, "newest", /*sync=*/true).ok());
    EXPECT_TRUE(fault.injected());
  }
  EXPECT_EQ(*ReadFileToString(path), "newest");
  fs::remove_all(directory);
}

}  // namespace
}  // namespace tessera
