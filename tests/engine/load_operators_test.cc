// COPY FROM and INSERT ... SELECT as queries under the Foreman (relational_operators/copy_from_operator.h,
// insert_operator.h): what SQL cannot reach. A cancel midway and a failing chunk leave the table unchanged and no
// segment file behind; a COPY runs beside another query and reports progress while it runs.

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "engine/session.h"
#include "gtest/gtest.h"
#include "test_database.h"

namespace tessera {
namespace {

// 1.6 million lines of about 30 bytes: 6 chunks of 8 MiB, each a noticeable share of a second to parse.
constexpr int kBigFileLines = 1'600'000;
// A cross join of `probe` (20 loads of 5000 rows: 20 probe work orders) and 2000 rows of `build` with an output of
// 20 rows per probe row, fed to its consumer a probe work order at a time: seconds of work.
constexpr char kJoinWithOutput[] =
    "SELECT probe.x FROM probe, build WHERE build.x < 2000 AND (probe.x + build.x) % 100 = 0";
// The same join with all of `build` and one output row per probe load: many seconds of work.
constexpr char kLongQuery[] = "SELECT count(*) FROM probe, build WHERE probe.x + build.x = 17";

class LoadOperatorsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    directory_ = std::filesystem::temp_directory_path() / absl::StrCat("load_operators_test_", getpid());
    std::filesystem::remove_all(directory_);
    std::filesystem::create_directories(directory_);
    std::ofstream big(directory_ / "big.csv");
    for (int i = 0; i < kBigFileLines; ++i) big << i << ',' << i * 7 << ",some text of line " << i % 1000 << '\n';
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(directory_); }

  void SetUp() override {
    std::filesystem::remove_all(directory_ / "db");
    absl::StatusOr<std::unique_ptr<Database>> database = OpenTestDatabase(directory_ / "db");
    ASSERT_TRUE(database.ok()) << database.status();
    database_ = *std::move(database);
    session_ = std::make_unique<Session>(database_.get());
    absl::StatusOr<QueryResult> loaded =
        session_->Execute(absl::StrCat(ProbeAndBuildTablesSql(directory_), "CREATE TABLE target (x BIGINT NOT NULL);",
                                       "CREATE TABLE lines (id INTEGER NOT NULL, seven BIGINT, text VARCHAR(40));"));
    ASSERT_TRUE(loaded.ok()) << loaded.status();
  }

  void TearDown() override {
    session_.reset();
    database_.reset();
  }

  static std::string BigFile() { return (directory_ / "big.csv").string(); }

  int SegmentFiles() const {
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(directory_ / "db" / "segments")) {
      files += entry.is_regular_file();
    }
    return files;
  }

  // Waits (bounded) until `session` runs a query whose operator `name` has finished at least `finished` work
  // orders; true once it has.
  static bool WaitForOperator(Session& session, const std::string& name, int64_t finished) {
    for (int i = 0; i < 12000; ++i) {
      absl::StatusOr<QueryProgress> progress = session.RunningQueryProgress();
      if (progress.ok()) {
        for (const OperatorProgress& op : progress->operators) {
          if (op.name == name && op.finished >= finished) return true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

  // Runs the load `sql` in the session and cancels it once its operator `name` finished a work order; checks that
  // the load's segment file exists while it runs and is gone afterwards. Returns the statement's status.
  absl::Status CancelAfterFirstWorkOrder(const std::string& sql, const std::string& name) {
    const int files_before = SegmentFiles();
    absl::StatusOr<QueryResult> result;
    std::thread runner([&] { result = session_->Execute(sql); });
    EXPECT_TRUE(WaitForOperator(*session_, name, 1));
    EXPECT_EQ(SegmentFiles(), files_before + 1);
    session_->Cancel();
    runner.join();
    EXPECT_EQ(SegmentFiles(), files_before);
    return result.status();
  }

  int64_t CountRows(Session& session, const std::string& table) {
    absl::StatusOr<QueryResult> result = session.Execute(absl::StrCat("SELECT count(*) FROM ", table));
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok() || result->rows.size() != 1) return -1;
    return result->rows[0][0].AsInt64();
  }

  static std::filesystem::path directory_;
  std::unique_ptr<Database> database_;
  std::unique_ptr<Session> session_;
};

std::filesystem::path LoadOperatorsTest::directory_;

TEST_F(LoadOperatorsTest, InsertSelectCancelledAfterItsFirstBlocksLeavesTheTableUnchanged) {
  ASSERT_TRUE(session_->Execute("INSERT INTO target VALUES (1), (2)").ok());
  // Cancelled once some of the join's output has been inserted (blocks built and written to the segment file).
  const absl::Status status = CancelAfterFirstWorkOrder(absl::StrCat("INSERT INTO target ", kJoinWithOutput), "Insert");
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(CountRows(*session_, "target"), 2);
  // The next insert into the table works.
  ASSERT_TRUE(session_->Execute("INSERT INTO target SELECT x FROM build WHERE x < 10").ok());
  EXPECT_EQ(CountRows(*session_, "target"), 12);
}

TEST_F(LoadOperatorsTest, CopyCancelledAfterItsFirstChunkLeavesTheTableUnchanged) {
  const absl::Status status = CancelAfterFirstWorkOrder(absl::StrCat("COPY lines FROM '", BigFile(), "'"), "CopyFrom");
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
  EXPECT_EQ(CountRows(*session_, "lines"), 0);
}

TEST_F(LoadOperatorsTest, ABadLineInALaterChunkFailsTheCopyWithItsLineNumber) {
  const std::filesystem::path path = directory_ / "bad_late_line.csv";
  {
    std::ifstream in(BigFile());
    std::ofstream out(path);
    std::string line;
    for (int i = 0; std::getline(in, line); ++i) out << (i == kBigFileLines - 10 ? "1,not a number,x" : line) << '\n';
  }
  const int files_before = SegmentFiles();
  absl::StatusOr<QueryResult> result = session_->Execute(absl::StrCat("COPY lines FROM '", path.string(), "'"));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find(
                absl::StrCat("line ", kBigFileLines - 9, ", column seven: invalid input for BIGINT: 'not a number'")),
            std::string::npos)
      << result.status();
  EXPECT_EQ(SegmentFiles(), files_before);
  EXPECT_EQ(CountRows(*session_, "lines"), 0);
  std::filesystem::remove(path);
}

TEST_F(LoadOperatorsTest, CopyRunsUnderTheForemanBesideAnotherQuery) {
  Session other(database_.get());
  absl::StatusOr<QueryResult> long_result;
  std::thread long_runner([&] { long_result = other.Execute(kLongQuery); });
  bool long_query_started = false;
  for (int i = 0; i < 6000 && !long_query_started; ++i) {
    long_query_started = other.running_query() != 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(long_query_started);

  absl::StatusOr<QueryResult> copied;
  std::thread copier([&] { copied = session_->Execute(absl::StrCat("COPY lines FROM '", BigFile(), "'")); });
  // The COPY is a query of its own: its progress is read like a SELECT's, chunk by chunk, with the rows loaded.
  EXPECT_TRUE(WaitForOperator(*session_, "CopyFrom", 1));
  absl::StatusOr<QueryProgress> progress = session_->RunningQueryProgress();
  if (progress.ok()) {  // (the COPY may have just finished)
    EXPECT_EQ(progress->operators.size(), 1u);
    for (const OperatorProgress& op : progress->operators) {
      EXPECT_GT(op.rows_out, 0);
      EXPECT_GT(op.estimated_total, 1);
    }
  }
  copier.join();
  // Both shared the workers: the long query is still running after the COPY finished.
  EXPECT_NE(other.running_query(), 0);
  other.Cancel();
  long_runner.join();
  EXPECT_TRUE(absl::IsCancelled(long_result.status())) << long_result.status();
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(copied->rows_affected, kBigFileLines);

  absl::StatusOr<QueryResult> check =
      session_->Execute("SELECT count(*), sum(id), sum(seven), count(DISTINCT text) FROM lines");
  ASSERT_TRUE(check.ok()) << check.status();
  const int64_t n = kBigFileLines;
  EXPECT_EQ(check->rows[0][0].AsInt64(), n);
  EXPECT_EQ(check->rows[0][1].ToString(), std::to_string(n * (n - 1) / 2));
  EXPECT_EQ(check->rows[0][2].ToString(), std::to_string(7 * n * (n - 1) / 2));
  EXPECT_EQ(check->rows[0][3].AsInt64(), 1000);
}

TEST_F(LoadOperatorsTest, LoadsIntoOneTableFromTwoSessionsBothCommit) {
  // Each load holds the table write mutex only for its commit, built on the table's version at that moment.
  Session other(database_.get());
  absl::StatusOr<QueryResult> first;
  absl::StatusOr<QueryResult> second;
  std::thread copier([&] { first = session_->Execute(absl::StrCat("COPY lines FROM '", BigFile(), "'")); });
  std::thread inserter(
      [&] { second = other.Execute("INSERT INTO lines SELECT x, x * 7, 'inserted' FROM probe WHERE x < 100"); });
  copier.join();
  inserter.join();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->rows_affected, 2000);
  EXPECT_EQ(CountRows(*session_, "lines"), kBigFileLines + 2000);
}

TEST_F(LoadOperatorsTest, ATableDroppedWhileACopyRunsFailsTheCopy) {
  const int files_before = SegmentFiles();
  absl::StatusOr<QueryResult> copied;
  std::thread copier([&] { copied = session_->Execute(absl::StrCat("COPY lines FROM '", BigFile(), "'")); });
  EXPECT_TRUE(WaitForOperator(*session_, "CopyFrom", 1));
  Session other(database_.get());
  absl::StatusOr<QueryResult> dropped = other.Execute("DROP TABLE lines");
  copier.join();
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  ASSERT_FALSE(copied.ok());
  EXPECT_TRUE(absl::IsAborted(copied.status())) << copied.status();
  EXPECT_NE(copied.status().message().find("table 'lines' was dropped while rows were loaded into it"),
            std::string::npos)
      << copied.status();
  EXPECT_EQ(SegmentFiles(), files_before);
}

}  // namespace
}  // namespace tessera
