// DELETE / UPDATE / VACUUM (engine/dml_statements.cc) where SQL logic files cannot reach: the affected-row counts
// the session returns ("DELETE n" / "UPDATE n", rows_affected), readers running concurrently with a stream of
// UPDATEs, DELETEs and VACUUMs (each sees one committed version whole, never half a statement), and loads into the
// same table committed while a DELETE runs (neither loses the other's rows), and the background compaction that a
// DELETE past compaction_threshold starts (readers meanwhile see the same answers; the table ends up without
// deleted rows and with exact statistics).

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catalog/catalog.h"
#include "engine/session.h"
#include "engine/table_compactor.h"
#include "gtest/gtest.h"
#include "test_database.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

class DmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        fs::temp_directory_path() /
        absl::StrCat("dml_test_", getpid(), "_", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    absl::StatusOr<std::unique_ptr<Database>> database = OpenTestDatabase(directory_);
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
  }
  void TearDown() override {
    database_.reset();
    fs::remove_all(directory_);
  }

  static QueryResult Run(Session& session, const std::string& sql) {
    absl::StatusOr<QueryResult> result = session.Execute(sql);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.status();
    return result.ok() ? *std::move(result) : QueryResult{};
  }

  // 4096 rows k = 0..4095, v = 1, in blocks of about 200 rows.
  void CreateTable(Session& session) {
    Run(session, "CREATE TABLE t (k BIGINT NOT NULL, v BIGINT NOT NULL) WITH (block_size = '64KB')");
    std::string values;
    for (int k = 0; k < 4096; ++k) absl::StrAppend(&values, k == 0 ? "" : ", ", "(", k, ", 1)");
    Run(session, absl::StrCat("INSERT INTO t VALUES ", values));
  }

  fs::path directory_;
  std::unique_ptr<Database> database_;
};

TEST_F(DmlTest, ReturnsTheAffectedRowCounts) {
  Session session(database_.get());
  CreateTable(session);
  QueryResult deleted = Run(session, "DELETE FROM t WHERE k < 100");
  EXPECT_EQ(deleted.status_message, "DELETE 100");
  EXPECT_EQ(deleted.rows_affected, 100);
  EXPECT_FALSE(deleted.returns_rows);
  // Rows already deleted are not counted again.
  deleted = Run(session, "DELETE FROM t WHERE k < 150");
  EXPECT_EQ(deleted.status_message, "DELETE 50");
  QueryResult updated = Run(session, "UPDATE t SET v = v + 1 WHERE k % 2 = 0");
  EXPECT_EQ(updated.status_message, "UPDATE 1973");
  EXPECT_EQ(updated.rows_affected, 1973);
  EXPECT_EQ(Run(session, "UPDATE t SET v = 0 WHERE k < 0").status_message, "UPDATE 0");
  EXPECT_EQ(Run(session, "DELETE FROM t WHERE k < 0").status_message, "DELETE 0");
  EXPECT_EQ(Run(session, "VACUUM").status_message, "VACUUM");
  QueryResult count = Run(session, "SELECT count(*), sum(v) FROM t");
  ASSERT_EQ(count.rows.size(), 1u);
  EXPECT_EQ(count.rows[0][0].AsInt64(), 4096 - 150);
  EXPECT_EQ(count.rows[0][1].AsInt64(), 4096 - 150 + 1973);
}

// A writer updates every row (v = v + 1) again and again, deletes a slice now and then and vacuums; readers in
// other sessions check that what they see is one whole version: every live row has the same v, and the row count
// is one the writer committed.
TEST_F(DmlTest, ConcurrentReadersSeeWholeStatements) {
  Session writer(database_.get());
  CreateTable(writer);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::atomic<int> running{2};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      Session reader(database_.get());
      while (!done.load()) {
        absl::StatusOr<QueryResult> result =
            reader.Execute("SELECT count(*), min(v), max(v), count(DISTINCT k) FROM t");
        if (!result.ok() || result->rows.size() != 1) {
          ADD_FAILURE() << (result.ok() ? "not one row" : result.status().ToString());
          break;
        }
        const std::vector<Value>& row = result->rows[0];
        EXPECT_EQ(row[1].AsInt64(), row[2].AsInt64()) << "half an UPDATE seen";
        EXPECT_EQ(row[0].AsInt64(), row[3].AsInt64()) << "a row seen twice (old and new version)";
        EXPECT_EQ((4096 - row[0].AsInt64()) % 64, 0) << "half a DELETE seen: " << row[0].AsInt64();
        reads.fetch_add(1);
      }
      running.fetch_sub(1);
    });
  }
  for (int i = 0; i < 12; ++i) {
    Run(writer, "UPDATE t SET v = v + 1");
    if (i % 3 == 2) Run(writer, absl::StrCat("DELETE FROM t WHERE k >= ", 4096 - 64 * (i / 3 + 1)));
    if (i % 4 == 3) Run(writer, "VACUUM t");
  }
  // Give the readers time to see the last version too.
  while (reads.load() < 20 && running.load() > 0) std::this_thread::yield();
  done.store(true);
  for (std::thread& reader : readers) reader.join();
  QueryResult last = Run(writer, "SELECT count(*), min(v), max(v) FROM t");
  EXPECT_EQ(last.rows[0][0].AsInt64(), 4096 - 4 * 64);
  EXPECT_EQ(last.rows[0][1].AsInt64(), 13);
  EXPECT_EQ(last.rows[0][2].AsInt64(), 13);
}

// Loads committed while DELETEs of the same table run keep their rows, and the DELETEs theirs.
TEST_F(DmlTest, LoadsAndDeletesOfOneTableBothCommit) {
  Session writer(database_.get());
  CreateTable(writer);
  std::thread loader([&] {
    Session session(database_.get());
    for (int i = 0; i < 20; ++i) Run(session, absl::StrCat("INSERT INTO t VALUES (", 10000 + i, ", 7)"));
  });
  for (int i = 0; i < 8; ++i) Run(writer, absl::StrCat("DELETE FROM t WHERE k < 4096 AND k % 8 = ", i));
  loader.join();
  QueryResult rows = Run(writer, "SELECT count(*), sum(v) FROM t");
  EXPECT_EQ(rows.rows[0][0].AsInt64(), 20);
  EXPECT_EQ(rows.rows[0][1].AsInt64(), 140);
}

// A DELETE of a quarter of the rows (past the default compaction_threshold, 0.2) starts a background compaction.
// Readers running meanwhile always see the rows before or after the DELETE (the compaction changes no answer);
// once it is done no segment has deleted rows, there are fewer blocks, and the statistics are exact.
TEST_F(DmlTest, BackgroundCompactionChangesNoAnswerAndLeavesNoDeletedRows) {
  Session writer(database_.get());
  CreateTable(writer);
  Run(writer, "SET auto_analyze_threshold = 0");  // the compaction alone makes the statistics exact
  const int64_t blocks_before = (*database_->catalog().GetTable("t"))->BlockCount();
  const int64_t sum_all = 4095 * 4096 / 2;
  int64_t sum_after = sum_all;
  for (int64_t k = 0; k < 4096; k += 4) sum_after -= k;
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      Session reader(database_.get());
      while (!done.load()) {
        absl::StatusOr<QueryResult> result = reader.Execute("SELECT count(*), sum(k) FROM t");
        if (!result.ok() || result->rows.size() != 1) {
          ADD_FAILURE() << (result.ok() ? "not one row" : result.status().ToString());
          break;
        }
        const int64_t count = result->rows[0][0].AsInt64();
        const int64_t sum = result->rows[0][1].AsInt64();
        EXPECT_TRUE((count == 4096 && sum == sum_all) || (count == 3072 && sum == sum_after)) << count << " " << sum;
        reads.fetch_add(1);
      }
    });
  }
  while (reads.load() < 4) std::this_thread::yield();
  EXPECT_EQ(Run(writer, "DELETE FROM t WHERE k % 4 = 0").rows_affected, 1024);
  // Read while the compaction runs and after it.
  const int reads_at_delete = reads.load();
  database_->compactor().WaitIdle();
  while (reads.load() < reads_at_delete + 10) std::this_thread::yield();
  done.store(true);
  for (std::thread& reader : readers) reader.join();

  EXPECT_EQ(database_->compactor().finished(), 1);
  EXPECT_EQ(database_->compactor().failed(), 0);
  std::shared_ptr<const TableDescriptor> table = *database_->catalog().GetTable("t");
  for (const SegmentDescriptor& segment : table->segments) EXPECT_TRUE(segment.deleted.empty());
  EXPECT_LT(table->BlockCount(), blocks_before);
  EXPECT_EQ(table->row_count, 3072);
  EXPECT_EQ(table->stale_rows, 0);
  EXPECT_EQ(table->statistics[0].min.AsInt64(), 1);
  QueryResult rows = Run(writer, "SELECT count(*), sum(k), min(k), max(k) FROM t");
  EXPECT_EQ(rows.rows[0][0].AsInt64(), 3072);
  EXPECT_EQ(rows.rows[0][1].AsInt64(), sum_after);
  EXPECT_EQ(rows.rows[0][2].AsInt64(), 1);
  EXPECT_EQ(rows.rows[0][3].AsInt64(), 4095);
}

// Below the threshold, or with compaction_threshold = 0, nothing is compacted.
TEST_F(DmlTest, NoBackgroundCompactionBelowTheThreshold) {
  Session writer(database_.get());
  CreateTable(writer);
  Run(writer, "SET auto_analyze_threshold = 0");  // compactions are the only background jobs counted here
  Run(writer, "DELETE FROM t WHERE k % 10 = 0");  // 410 of 4096 rows: 10 %
  Run(writer, "SET compaction_threshold = 0");
  Run(writer, "DELETE FROM t WHERE k % 2 = 1");
  database_->compactor().WaitIdle();
  EXPECT_EQ(database_->compactor().finished(), 0);
  Run(writer, "SET compaction_threshold = 0.5");
  Run(writer, "DELETE FROM t WHERE k = 2");  // now 2459 of 4096 deleted
  database_->compactor().WaitIdle();
  EXPECT_EQ(database_->compactor().finished(), 1);
  std::shared_ptr<const TableDescriptor> table = *database_->catalog().GetTable("t");
  for (const SegmentDescriptor& segment : table->segments) EXPECT_TRUE(segment.deleted.empty());
  EXPECT_EQ(table->row_count, 4096 - 2459);
}

// A DELETE past auto_analyze_threshold (default 0.1) but below compaction_threshold analyzes the table in the
// background: once the compactor is idle the statistics describe the live rows and nothing is stale.
TEST_F(DmlTest, AutomaticAnalyzeInTheBackgroundPastTheThreshold) {
  Session writer(database_.get());
  CreateTable(writer);
  Run(writer, "DELETE FROM t WHERE k < 200");  // 200 of 4096: below the threshold
  database_->compactor().WaitIdle();
  std::shared_ptr<const TableDescriptor> table = *database_->catalog().GetTable("t");
  EXPECT_EQ(table->stale_rows, 200);
  EXPECT_EQ(table->statistics[0].min.AsInt64(), 0);  // a bound that still covers the deleted rows
  Run(writer, "DELETE FROM t WHERE k >= 3800");      // 496 of 4096 stale: past 10 %, below 20 % deleted
  database_->compactor().WaitIdle();
  EXPECT_EQ(database_->compactor().finished(), 1);
  EXPECT_EQ(database_->compactor().failed(), 0);
  table = *database_->catalog().GetTable("t");
  EXPECT_EQ(table->stale_rows, 0);
  EXPECT_EQ(table->row_count, 4096 - 496);
  EXPECT_EQ(table->statistics[0].min.AsInt64(), 200);
  EXPECT_EQ(table->statistics[0].max.AsInt64(), 3799);
  EXPECT_FALSE(table->segments[0].deleted.empty());  // analyzed, not compacted
}

// The null counts a DELETE takes off (NullsOfRows: each block's found rows against its validity bitmaps, 64 rows at
// a time) equal the NULLs left, over many blocks, for rows a USING join finds several times, and for a second
// DELETE over blocks that already have deletions.
TEST_F(DmlTest, NullCountsStayExactOverManyBlocksAndRowsFoundTwice) {
  Session session(database_.get());
  Run(session, "SET auto_analyze_threshold = 0");
  Run(session, "SET compaction_threshold = 0");
  Run(session, "CREATE TABLE n (k BIGINT NOT NULL, i INTEGER, s VARCHAR(8)) WITH (block_size = '64KB')");
  Run(session,
      "INSERT INTO n SELECT generate_series, CASE WHEN generate_series % 7 = 0 THEN NULL ELSE generate_series END, "
      "CASE WHEN generate_series % 5 = 0 THEN NULL ELSE 's' END FROM generate_series(0, 19999)");
  Run(session, "CREATE TABLE twice (m BIGINT)");
  Run(session, "INSERT INTO twice VALUES (3), (3), (4)");
  auto expect_exact = [&](const std::string& when) {
    std::shared_ptr<const TableDescriptor> table = *database_->catalog().GetTable("n");
    QueryResult nulls = Run(session, "SELECT count(*), count(*) - count(i), count(*) - count(s) FROM n");
    ASSERT_EQ(nulls.rows.size(), 1u) << when;
    EXPECT_EQ(table->row_count, nulls.rows[0][0].AsInt64()) << when;
    EXPECT_EQ(table->statistics[1].null_count, nulls.rows[0][1].AsInt64()) << when;
    EXPECT_EQ(table->statistics[2].null_count, nulls.rows[0][2].AsInt64()) << when;
  };
  ASSERT_GT(database_->catalog().GetTable("n").value()->segments[0].blocks.size(), 4u);
  QueryResult deleted = Run(session, "DELETE FROM n USING twice WHERE n.k % 11 = twice.m");
  EXPECT_EQ(deleted.rows_affected, 2 * 1818);  // k % 11 in {3, 4}: 1818 rows each; the rows of 3 found twice
  expect_exact("after a DELETE with rows found twice");
  Run(session, "DELETE FROM n WHERE k % 3 = 0 OR k >= 19000");
  expect_exact("after a second DELETE over blocks with deletions");
}

}  // namespace
}  // namespace tessera
